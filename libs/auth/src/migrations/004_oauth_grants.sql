-- A grant is the chain of tokens that started from one authorization code: presenting a used refresh token revokes
-- it whole (deleting the grant deletes its tokens). Tokens issued before this migration become one grant each.
CREATE TABLE IF NOT EXISTS oauth_grants (
  grant_id   text PRIMARY KEY,
  client_id  text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  key_prefix text NOT NULL REFERENCES api_keys (prefix) ON DELETE CASCADE,
  resource   text,
  created_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO oauth_grants (grant_id, client_id, key_prefix, resource)
SELECT token_hash, client_id, key_prefix, resource FROM oauth_tokens
ON CONFLICT (grant_id) DO NOTHING;

ALTER TABLE oauth_tokens ADD COLUMN IF NOT EXISTS grant_id text REFERENCES oauth_grants (grant_id) ON DELETE CASCADE;

UPDATE oauth_tokens SET grant_id = token_hash WHERE grant_id IS NULL;

ALTER TABLE oauth_tokens ALTER COLUMN grant_id SET NOT NULL;

-- Set when a refresh token is rotated; the row stays so that presenting it again is recognised as reuse.
ALTER TABLE oauth_tokens ADD COLUMN IF NOT EXISTS used_at timestamptz;

CREATE INDEX IF NOT EXISTS oauth_tokens_grant_id ON oauth_tokens (grant_id);
