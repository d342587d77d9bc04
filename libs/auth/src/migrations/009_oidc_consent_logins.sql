-- Single sign-on from the MCP OAuth consent page (issue 45, docs/mcp.md "OAuth for connector UIs"): a sign-in started
-- by the page's "Sign in with <OIDC_NAME>" keeps the OAuth request it was started for (the parameters of /authorize,
-- a JSON object of strings: client_id, redirect_uri, code_challenge, state, ...). The callback sends the browser back
-- to /authorize with them and the one-time handoff code, which only /authorize spends, and only for that request.
-- Such a sign-in has no binding (the page runs no script to keep a secret): its handoff is bound to the OAuth request,
-- whose code only the holder of the PKCE verifier can exchange. A dashboard sign-in keeps its binding and no request.
ALTER TABLE oidc_logins ADD COLUMN IF NOT EXISTS oauth_request jsonb;
ALTER TABLE oidc_logins ALTER COLUMN binding DROP NOT NULL;
ALTER TABLE oidc_logins DROP CONSTRAINT IF EXISTS oidc_logins_one_binding;
ALTER TABLE oidc_logins ADD CONSTRAINT oidc_logins_one_binding CHECK ((binding IS NULL) <> (oauth_request IS NULL));
