-- MCP OAuth consent by a signed-in person (issue 45, docs/mcp.md "OAuth for connector UIs"): once the consent page
-- has checked the email and password, it carries a one-time ticket (10 minutes) in a hidden field to the project
-- picker, never a session token. The ticket is bound to the user and to the OAuth request it was given for (client,
-- redirect URI, PKCE challenge); only its SHA-256 is kept, and it is looked up by it.
CREATE TABLE IF NOT EXISTS oauth_consent_tickets (
  ticket_hash    text PRIMARY KEY,
  user_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  client_id      text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  redirect_uri   text NOT NULL,
  code_challenge text NOT NULL,
  created_at     timestamptz NOT NULL,
  expires_at     timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS oauth_consent_tickets_expires_at ON oauth_consent_tickets (expires_at);
CREATE INDEX IF NOT EXISTS oauth_consent_tickets_user_id ON oauth_consent_tickets (user_id);
CREATE INDEX IF NOT EXISTS oauth_consent_tickets_client_id ON oauth_consent_tickets (client_id);
