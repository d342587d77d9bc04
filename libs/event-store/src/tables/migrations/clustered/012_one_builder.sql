-- As the server file (the reasons are there), ON CLUSTER: every INSERT writes `events` alone and the aggregate builder
-- folds finished INSERTs into the aggregates. The writer, seq and row count of an INSERT are ordinary columns here,
-- on events_local and the Distributed events alike, and the INSERT names them: a Distributed table forwards neither
-- EPHEMERAL inputs nor MATERIALIZED values to the shards (tools/deploy-checks/src/cluster.spec.ts shows it on a
-- one-shard cluster). Nothing reads `SELECT *` from events, so they stay out of every answer all the same. The builder's INSERT ... SELECT runs with parallel_distributed_insert_select = 2:
-- each shard folds its own events_local into its own *_local aggregate tables (a session's events are on one shard).
ALTER TABLE ${db}.events_local ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS insert_seq UInt64 DEFAULT 0;
ALTER TABLE ${db}.events_local ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS insert_writer UInt64 DEFAULT 0;
ALTER TABLE ${db}.events_local ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS insert_rows UInt32 DEFAULT 0;
ALTER TABLE ${db}.events_local ON CLUSTER ${cluster} ADD INDEX IF NOT EXISTS insert_seq_minmax insert_seq TYPE minmax GRANULARITY 1;
ALTER TABLE ${db}.events ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS insert_seq UInt64 DEFAULT 0;
ALTER TABLE ${db}.events ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS insert_writer UInt64 DEFAULT 0;
ALTER TABLE ${db}.events ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS insert_rows UInt32 DEFAULT 0;

ALTER TABLE ${db}.daily_rollup_local ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS built_seq SimpleAggregateFunction(max, UInt64) DEFAULT 0;
ALTER TABLE ${db}.daily_rollup ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS built_seq SimpleAggregateFunction(max, UInt64) DEFAULT 0;
ALTER TABLE ${db}.daily_uniques_local ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS built_seq SimpleAggregateFunction(max, UInt64) DEFAULT 0;
ALTER TABLE ${db}.daily_uniques ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS built_seq SimpleAggregateFunction(max, UInt64) DEFAULT 0;
ALTER TABLE ${db}.sessions_local ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS built_seq SimpleAggregateFunction(max, UInt64) DEFAULT 0;
ALTER TABLE ${db}.sessions ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS built_seq SimpleAggregateFunction(max, UInt64) DEFAULT 0;

-- The builder's state and the days of sources_daily are one small table for the whole cluster: every node holds a
-- replica (one ZooKeeper path, replica names unique per node).
CREATE TABLE IF NOT EXISTS ${db}.aggregate_progress ON CLUSTER ${cluster}
${aggregate_progress_columns}
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/${db}/aggregate_progress', '{shard}-{replica}', seq_to) ORDER BY tuple();

CREATE TABLE IF NOT EXISTS ${db}.sources_daily_days ON CLUSTER ${cluster} (project_id UUID, day Date, built_seq UInt64)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/${db}/sources_daily_days', '{shard}-{replica}', built_seq) ORDER BY (project_id, day);

-- A day's answer is computed across shards and written whole to one shard (sharding key: project and day), so its
-- tombstones and new rows meet in one ReplacingMergeTree and FINAL keeps the new answer.
CREATE TABLE IF NOT EXISTS ${db}.sources_daily_local ON CLUSTER ${cluster}
${sources_daily_columns}
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/${db}/sources_daily_local', '{replica}', version)
${sources_daily_layout};
CREATE TABLE IF NOT EXISTS ${db}.sources_daily ON CLUSTER ${cluster} AS ${db}.sources_daily_local
ENGINE = Distributed(${cluster}, ${db}, sources_daily_local, cityHash64(project_id, day));

CREATE TABLE IF NOT EXISTS ${db}.daily_uniques_by_local ON CLUSTER ${cluster}
${daily_uniques_by_columns}
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/${db}/daily_uniques_by_local', '{replica}')
${daily_uniques_by_layout};
CREATE TABLE IF NOT EXISTS ${db}.daily_uniques_by ON CLUSTER ${cluster} AS ${db}.daily_uniques_by_local
ENGINE = Distributed(${cluster}, ${db}, daily_uniques_by_local);

DROP VIEW IF EXISTS ${db}.daily_rollup_mv ON CLUSTER ${cluster};
DROP VIEW IF EXISTS ${db}.daily_uniques_mv ON CLUSTER ${cluster};
DROP VIEW IF EXISTS ${db}.sessions_mv ON CLUSTER ${cluster};
DROP VIEW IF EXISTS ${db}.visits_mv ON CLUSTER ${cluster};

-- Each shard fills its daily_uniques_by_local from its daily_rollup_local.
INSERT INTO ${db}.daily_uniques_by (project_id, day, event_name, dim, dim_value, uniques, built_seq)
SELECT project_id, day, t.1 AS e, t.2 AS d, t.3 AS v, uniqCombinedMergeState(uniques), max(built_seq)
FROM ${db}.daily_rollup
ARRAY JOIN ${uniques_by_groupings} AS t
GROUP BY project_id, day, e, d, v
SETTINGS parallel_distributed_insert_select = 2, max_partitions_per_insert_block = 0;
