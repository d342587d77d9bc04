-- Scheduled email reports (issue 48, docs/alerts-and-reports.md "Scheduled reports"). A report goes with its project;
-- its recipients, unsubscribe tokens and send log go with it. `schedule_from`: the first scheduled send a report owes
-- is the first at or after it (set at creation and when the frequency changes), and a recipient's at or after its
-- `added_at`: a report created on a Tuesday does not mail last week's figures at once.
CREATE TABLE IF NOT EXISTS reports (
  id text PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  frequency text NOT NULL CHECK (frequency IN ('weekly', 'monthly')),
  segment text NULL,
  created_by text NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  schedule_from timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS reports_by_project ON reports (project_id, created_at);
CREATE TABLE IF NOT EXISTS report_recipients (
  report_id text NOT NULL REFERENCES reports (id) ON DELETE CASCADE,
  email text NOT NULL,
  added_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (report_id, email)
);
-- One-click unsubscribe links (RFC 8058): the SHA-256 of the token a mail carries; the token itself is never stored.
-- Each mail mints one, so a link of any past mail works while the report exists.
CREATE TABLE IF NOT EXISTS report_unsubscribe_tokens (
  token_hash text PRIMARY KEY,
  report_id text NOT NULL REFERENCES reports (id) ON DELETE CASCADE,
  email text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- The send log: one row per report, recipient and period (`weekly:2026-03-02`, `monthly:2026-03`), claimed before the
-- mail goes out and marked sent after it was accepted. A claim unsent past the stale time is retried with the same
-- message_id (the Message-ID header), so a receiving server or client can drop a second copy.
CREATE TABLE IF NOT EXISTS report_sends (
  report_id text NOT NULL REFERENCES reports (id) ON DELETE CASCADE,
  recipient text NOT NULL,
  period text NOT NULL,
  message_id text NOT NULL,
  claimed_at timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 1,
  sent_at timestamptz NULL,
  PRIMARY KEY (report_id, recipient, period)
);
-- Each pass reads the sends of the last weeks (ReportStore.sentSince) to skip them without a claim.
CREATE INDEX IF NOT EXISTS report_sends_by_claim ON report_sends (claimed_at) WHERE sent_at IS NOT NULL;
