-- A ClickHouse server gets the embedded store's write design (README, "One builder, every mode"): every INSERT writes
-- `events` alone, and the aggregate builder (apps/aggregate-builder, one active under a PostgreSQL lease) folds
-- finished INSERTs into the aggregates off the request path, exactly once. The materialized views of 002, 003 and
-- 010 ran inside every INSERT and not atomically with it: a store killed between the events part and a view's part
-- left events no aggregate counted, for good. This file is 004, 005, 006 and the embedded 012 for a server, then the
-- views go. Apply it with ingest stopped (the first service to open migrates): an INSERT by a service still on the
-- previous version after the views are dropped carries no insert_seq, and no aggregate would count it.

-- Each INSERT: its writer (a random id per writer slot of an ingest process, one INSERT in flight per slot), its seq
-- (per writer increasing, microseconds of the store's clock) and its row count. All EPHEMERAL inputs stored
-- MATERIALIZED. Rows from before this migration read 0: the views counted them, and the builder reads seq > 0 only.
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS insert_seq_in UInt64 EPHEMERAL 0;
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS insert_seq UInt64 MATERIALIZED insert_seq_in;
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS insert_writer_in UInt64 EPHEMERAL 0;
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS insert_writer UInt64 MATERIALIZED insert_writer_in;
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS insert_rows_in UInt32 EPHEMERAL 0;
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS insert_rows UInt32 MATERIALIZED insert_rows_in;
ALTER TABLE ${db}.events ADD INDEX IF NOT EXISTS insert_seq_minmax insert_seq TYPE minmax GRANULARITY 1;

ALTER TABLE ${db}.daily_rollup ADD COLUMN IF NOT EXISTS built_seq SimpleAggregateFunction(max, UInt64) DEFAULT 0;
ALTER TABLE ${db}.daily_uniques ADD COLUMN IF NOT EXISTS built_seq SimpleAggregateFunction(max, UInt64) DEFAULT 0;
ALTER TABLE ${db}.sessions ADD COLUMN IF NOT EXISTS built_seq SimpleAggregateFunction(max, UInt64) DEFAULT 0;

CREATE TABLE IF NOT EXISTS ${db}.aggregate_progress
${aggregate_progress_columns}
ENGINE = ReplacingMergeTree(seq_to) ORDER BY tuple();

-- sources_daily and daily_uniques_by, as the embedded store's 005 and 006 (the reasons are there; the columns and
-- layout are the same fragments).
CREATE TABLE IF NOT EXISTS ${db}.sources_daily
${sources_daily_columns}
ENGINE = ReplacingMergeTree(version)
${sources_daily_layout};

CREATE TABLE IF NOT EXISTS ${db}.sources_daily_days (project_id UUID, day Date, built_seq UInt64) ENGINE = ReplacingMergeTree(built_seq) ORDER BY (project_id, day);

CREATE TABLE IF NOT EXISTS ${db}.daily_uniques_by
${daily_uniques_by_columns}
ENGINE = AggregatingMergeTree
${daily_uniques_by_layout};

-- The views go first, then daily_uniques_by is filled from daily_rollup, which then holds exactly what the views
-- counted (built_seq 0): nothing is counted twice, since the builder reads insert_seq > 0 only.
DROP VIEW IF EXISTS ${db}.daily_rollup_mv;
DROP VIEW IF EXISTS ${db}.daily_uniques_mv;
DROP VIEW IF EXISTS ${db}.sessions_mv;
DROP VIEW IF EXISTS ${db}.visits_mv;

INSERT INTO ${db}.daily_uniques_by (project_id, day, event_name, dim, dim_value, uniques, built_seq)
SELECT project_id, day, t.1 AS e, t.2 AS d, t.3 AS v, uniqCombinedMergeState(uniques), max(built_seq)
FROM ${db}.daily_rollup
ARRAY JOIN ${uniques_by_groupings} AS t
GROUP BY project_id, day, e, d, v
SETTINGS max_partitions_per_insert_block = 0;
