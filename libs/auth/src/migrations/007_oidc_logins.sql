-- Single sign-on (issue 45, docs/accounts.md): a sign-in with the OpenID provider under way, from POST /auth/oidc/start
-- (10 minutes to come back to the callback) to the one-time handoff code that POST /auth/oidc/complete spends (60 s).
-- In the key store, not in one process's memory: any admin-api instance may serve the callback or the completion.
-- The state and the handoff code grant something: only their SHA-256 is kept, and each is looked up by it. The nonce
-- and the PKCE verifier are sent back to the provider's token endpoint; without the provider's code they grant nothing.
-- binding is the base64url SHA-256 of a secret only the browser that started holds (it has no cookie to prove that).
CREATE TABLE IF NOT EXISTS oidc_logins (
  state_hash         text PRIMARY KEY,
  nonce              text NOT NULL,
  code_verifier      text NOT NULL,
  binding            text NOT NULL,
  created_at         timestamptz NOT NULL,
  expires_at         timestamptz NOT NULL,
  state_used_at      timestamptz,
  handoff_hash       text UNIQUE,
  user_id            uuid REFERENCES users (id) ON DELETE CASCADE,
  handoff_expires_at timestamptz,
  handoff_used_at    timestamptz
);

CREATE INDEX IF NOT EXISTS oidc_logins_expires_at ON oidc_logins (expires_at);
