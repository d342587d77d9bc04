-- Annotations per project (issue 48, docs/alerts-and-reports.md): dated notes on the timeline (`kind` note, deploy,
-- campaign or incident), made by a member (`created_by` their user id), a project key (`key:<prefix>`) or the operator
-- (NULL). Lists read a project's range by `at` (the index); they go with their project.
CREATE TABLE IF NOT EXISTS annotations (
  id text PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  at timestamptz NOT NULL,
  text text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('note', 'deploy', 'campaign', 'incident')),
  created_by text NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS annotations_project_at ON annotations (project_id, at, id);
