CREATE TABLE IF NOT EXISTS oauth_clients (
  client_id  text PRIMARY KEY,
  metadata   jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS oauth_codes (
  code_hash      text PRIMARY KEY,
  client_id      text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  key_prefix     text NOT NULL REFERENCES api_keys (prefix) ON DELETE CASCADE,
  code_challenge text NOT NULL,
  redirect_uri   text NOT NULL,
  resource       text,
  expires_at     timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS oauth_tokens (
  token_hash text PRIMARY KEY,
  kind       text NOT NULL CHECK (kind IN ('access', 'refresh')),
  client_id  text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  key_prefix text NOT NULL REFERENCES api_keys (prefix) ON DELETE CASCADE,
  resource   text,
  expires_at timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS oauth_tokens_key_prefix ON oauth_tokens (key_prefix);
