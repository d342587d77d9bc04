-- Housekeeping of the OAuth tables. Expired codes and tokens are purged by expires_at, a grant once it holds no token,
-- and a dynamically registered client never used (no code ever issued to it) a day after it registered.
ALTER TABLE oauth_clients ADD COLUMN IF NOT EXISTS used_at timestamptz;

-- Clients that already hold a code or a grant have been used.
UPDATE oauth_clients c SET used_at = now()
 WHERE used_at IS NULL
   AND (EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.client_id) OR EXISTS (SELECT 1 FROM oauth_codes o WHERE o.client_id = c.client_id));

CREATE INDEX IF NOT EXISTS oauth_codes_expires_at ON oauth_codes (expires_at);
CREATE INDEX IF NOT EXISTS oauth_tokens_expires_at ON oauth_tokens (expires_at);
CREATE INDEX IF NOT EXISTS oauth_clients_unused ON oauth_clients (created_at) WHERE used_at IS NULL;

-- Deleting a client cascades to its codes, tokens and grants: each cascade finds them by client_id.
CREATE INDEX IF NOT EXISTS oauth_codes_client_id ON oauth_codes (client_id);
CREATE INDEX IF NOT EXISTS oauth_tokens_client_id ON oauth_tokens (client_id);
CREATE INDEX IF NOT EXISTS oauth_grants_client_id ON oauth_grants (client_id);
