-- The embedded store builds its aggregates off the request path (libs/event-store/src/aggregate-builder.ts). The three
-- materialized views of 002/003 ran on every INSERT into events: several times the cost of a small INSERT, paid inside
-- every 202, and not atomic with it (a crash between the events part and the views' parts left events that no aggregate
-- counted, for good). Here the request's INSERT writes events alone, stamped with `insert_seq` (one number per INSERT,
-- increasing); the builder folds each closed range of insert_seq into the aggregates in one large block, records the
-- range it is building in aggregate_progress before it starts, and stamps every aggregate row with `built_seq` (the
-- range's end) so that after a crash it can tell, per table and per month partition, what landed. A server
-- (CLICKHOUSE_URL, cluster or not) keeps the views: several ingest replicas write there at once and the single builder
-- would need a commit order across them that the store does not give. So this file is the embedded store's only: a
-- server, cluster or not, runs nothing for version 4.

-- The INSERT names insert_seq_in (EPHEMERAL: never stored); insert_seq is MATERIALIZED from it, so it is stored
-- but stays out of SELECT * (and so out of every answer). Rows from before this migration read as 0: the views
-- counted them, and the builder's ranges start above 0.
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS insert_seq_in UInt64 EPHEMERAL 0;
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS insert_seq UInt64 MATERIALIZED insert_seq_in;
-- The builder reads `insert_seq > lo AND insert_seq <= hi`; events are sorted by (project_id, timestamp, event_id),
-- so without this index every tick would read the whole column. Per granule min/max: only granules of recent
-- INSERTs are read.
ALTER TABLE ${db}.events ADD INDEX IF NOT EXISTS insert_seq_minmax insert_seq TYPE minmax GRANULARITY 1;

ALTER TABLE ${db}.daily_rollup ADD COLUMN IF NOT EXISTS built_seq SimpleAggregateFunction(max, UInt64) DEFAULT 0;
ALTER TABLE ${db}.daily_uniques ADD COLUMN IF NOT EXISTS built_seq SimpleAggregateFunction(max, UInt64) DEFAULT 0;
ALTER TABLE ${db}.sessions ADD COLUMN IF NOT EXISTS built_seq SimpleAggregateFunction(max, UInt64) DEFAULT 0;

-- The range being built, written before its first aggregate INSERT: (seq_from, seq_to]. The newest row is the
-- builder's state; ReplacingMergeTree on one key keeps merges collapsing it to that row.
CREATE TABLE IF NOT EXISTS ${db}.aggregate_progress (seq_from UInt64, seq_to UInt64, at DateTime64(3, 'UTC') DEFAULT now64(3)) ENGINE = ReplacingMergeTree(seq_to) ORDER BY tuple();

-- Last: the views go. Nothing inserts while migrations run (the store opens before any service starts).
DROP VIEW IF EXISTS ${db}.daily_rollup_mv;
DROP VIEW IF EXISTS ${db}.daily_uniques_mv;
DROP VIEW IF EXISTS ${db}.sessions_mv;
