-- Share links (issue 46, docs/saved-and-shared.md "Share links and embeds"): a project's dashboard, read-only, for
-- whoever holds the link. The link's token is `shr_{id}_{secret}`; only the secret's SHA-256 is kept (hex, as key
-- secrets), and the password, when there is one, only as a scrypt hash. `segment` is a snapshot { id, name, filters }
-- of the saved segment the link was made with: a later edit or deletion of the segment leaves the link as it is.
-- A revoked link stays (revoked_at) so that its credentials are refused as revoked; the project's deletion takes it.
CREATE TABLE IF NOT EXISTS shares (
  id            text PRIMARY KEY,
  project_id    uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name          text,
  token_hash    text NOT NULL,
  password_hash text,
  expires_at    timestamptz,
  segment       jsonb,
  embed_origins text[] NOT NULL DEFAULT '{}',
  created_by    uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at    timestamptz NOT NULL,
  revoked_at    timestamptz
);

CREATE INDEX IF NOT EXISTS shares_project_id ON shares (project_id);

-- The credentials of a link are rk_ rows of api_keys bound to it (the key cache, its revocation epoch and the
-- invalidation bus then hold for them as for any key): the link's own token for a link without a password (prefix =
-- the share's id), one per unlock for a link with one (expires_at at most an hour later). They go with the link.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS share_id text REFERENCES shares (id) ON DELETE CASCADE;

CREATE INDEX IF NOT EXISTS api_keys_share_id ON api_keys (share_id) WHERE share_id IS NOT NULL;
