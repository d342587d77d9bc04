-- Saved goals, funnels and segments per project (issue 46, docs/saved-and-shared.md). `definition` holds the fields
-- of the kind in their canonical request form (a goal's { event?, path?, filters }, a funnel's { steps, window_s,
-- count_by, filters }, a segment's { filters }); names are unique per project and kind (that index also serves the
-- lists). They go with their project. project_id is a uuid as projects.id (a foreign key needs the same type).
CREATE TABLE IF NOT EXISTS saved_definitions (
  id text PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('goal', 'funnel', 'segment')),
  name text NOT NULL,
  definition jsonb NOT NULL,
  created_by text NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, kind, name)
);
