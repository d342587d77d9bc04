CREATE TABLE IF NOT EXISTS projects (
  id              uuid PRIMARY KEY,
  name            text NOT NULL,
  allowed_origins text[] NOT NULL DEFAULT '{}',
  retention_days  integer NOT NULL DEFAULT 365 CHECK (retention_days BETWEEN 1 AND 3650),
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS api_keys (
  prefix      text PRIMARY KEY,
  project_id  uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  kind        text NOT NULL CHECK (kind IN ('pk', 'sk', 'rk', 'ak')),
  env         text NOT NULL CHECK (env IN ('live', 'test')),
  secret_hash text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);

CREATE INDEX IF NOT EXISTS api_keys_project_id ON api_keys (project_id);
