-- People (issue 45, docs/accounts.md): users, organizations and their members with a role, sessions, invitations,
-- password resets and the audit log, beside projects and keys. Tokens are stored only as SHA-256 hashes (hex, as key
-- secrets); passwords only as scrypt hashes. Emails are stored lower case (the API lowers them).
CREATE TABLE IF NOT EXISTS users (
  id            uuid PRIMARY KEY,
  email         text NOT NULL UNIQUE,
  name          text,
  -- NULL: the user has no password (one who will sign in only through single sign-on).
  password_hash text,
  created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS organizations (
  id         uuid PRIMARY KEY,
  name       text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS memberships (
  org_id    uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role      text NOT NULL CHECK (role IN ('viewer', 'editor', 'admin', 'owner')),
  joined_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, user_id)
);

CREATE INDEX IF NOT EXISTS memberships_user_id ON memberships (user_id);

-- A session's id is the public part of its token (`ses_{id}_{secret}`); expires_at is the absolute end, the idle end
-- is last_used_at plus SESSION_IDLE_DAYS. An ended session stays until the purge, so its token is refused as ended.
CREATE TABLE IF NOT EXISTS sessions (
  id           text PRIMARY KEY,
  user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  secret_hash  text NOT NULL,
  user_agent   text,
  created_at   timestamptz NOT NULL,
  last_used_at timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  ended_at     timestamptz
);

CREATE INDEX IF NOT EXISTS sessions_user_id ON sessions (user_id);

CREATE TABLE IF NOT EXISTS invitations (
  id          uuid PRIMARY KEY,
  org_id      uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  email       text NOT NULL,
  role        text NOT NULL CHECK (role IN ('viewer', 'editor', 'admin', 'owner')),
  token_hash  text NOT NULL UNIQUE,
  invited_by  uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  accepted_at timestamptz
);

CREATE INDEX IF NOT EXISTS invitations_org_id ON invitations (org_id);

CREATE TABLE IF NOT EXISTS password_resets (
  token_hash text PRIMARY KEY,
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at    timestamptz
);

CREATE INDEX IF NOT EXISTS password_resets_user_id ON password_resets (user_id);

-- One row per organization an entry concerns (a member's sign-in is written to each of their organizations).
-- No raw address, no secret, no result data; rows older than 400 days are purged.
CREATE TABLE IF NOT EXISTS audit_log (
  id          bigserial PRIMARY KEY,
  org_id      uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  at          timestamptz NOT NULL,
  actor_type  text NOT NULL,
  actor_id    text,
  actor_name  text,
  action      text NOT NULL,
  target_type text NOT NULL,
  target_id   text,
  target_name text,
  details     jsonb NOT NULL DEFAULT '{}'
);

CREATE INDEX IF NOT EXISTS audit_log_org_at ON audit_log (org_id, at);
CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log (at);

-- A project belongs to one organization (NULL only before the first user is set up); an organization holding
-- projects cannot be deleted (409 not_empty, and this reference refuses it too).
ALTER TABLE projects ADD COLUMN IF NOT EXISTS org_id uuid REFERENCES organizations (id);

CREATE INDEX IF NOT EXISTS projects_org_id ON projects (org_id);

-- Keys minted for a person rather than for the project: a signed-in user's read key (session_id, ends with the
-- session) and, later, an MCP grant's key (user_id only). Both are revoked when the membership ends.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS user_id uuid REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS session_id text REFERENCES sessions (id) ON DELETE CASCADE;
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS expires_at timestamptz;
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS last_used_at timestamptz;

CREATE INDEX IF NOT EXISTS api_keys_user_id ON api_keys (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS api_keys_session_id ON api_keys (session_id) WHERE session_id IS NOT NULL;

-- Deleted projects whose events are still to be deleted from the event store: an app with an event store (npm start,
-- the retention worker) submits the deletion and removes the row.
CREATE TABLE IF NOT EXISTS project_deletions (
  project_id uuid PRIMARY KEY,
  deleted_at timestamptz NOT NULL DEFAULT now()
);
