-- Spike and drop alerts (issue 48, docs/alerts-and-reports.md "Alerts"). `definition` holds what the alert watches
-- ({ metric, event?, goal?, window, condition }); `channels` where it sends, secrets included (never answered back).
-- `state` is what the last evaluation found (ok or firing), so a condition fires once and recovers once.
CREATE TABLE IF NOT EXISTS alerts (
  id text PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name text NOT NULL,
  definition jsonb NOT NULL,
  channels jsonb NOT NULL,
  state text NOT NULL DEFAULT 'ok' CHECK (state IN ('ok', 'firing')),
  state_since timestamptz NULL,
  last_evaluated_at timestamptz NULL,
  last_value double precision NULL,
  created_by text NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);

-- Every message of an alert to one channel: the deliveries list and, while `pending`, the queue the alerts job works
-- through (due at next_attempt_at, retried with backoff until give_up_at), so a restart loses no retry. `message`
-- holds what to send and where (a webhook's secret too: this table is never answered whole).
CREATE TABLE IF NOT EXISTS alert_deliveries (
  id text PRIMARY KEY,
  alert_id text NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  channel text NOT NULL CHECK (channel IN ('email', 'webhook', 'slack')),
  kind text NOT NULL CHECK (kind IN ('fired', 'recovered', 'test')),
  status text NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
  message jsonb NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  give_up_at timestamptz NOT NULL,
  last_error text NULL,
  created_at timestamptz NOT NULL,
  sent_at timestamptz NULL
);
CREATE INDEX IF NOT EXISTS alert_deliveries_due ON alert_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS alert_deliveries_of_alert ON alert_deliveries (alert_id, created_at DESC);
