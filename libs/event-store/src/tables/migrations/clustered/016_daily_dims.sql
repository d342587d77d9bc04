-- daily_dims, as unclustered/016 (the reasons are there): daily_dims_local on each shard (its rows from that shard's
-- events; reads merge the shards' rows), the Distributed daily_dims what reads query and what the builder's
-- INSERT ... SELECT writes through (parallel_distributed_insert_select = 2: each shard folds its own events_local).
CREATE TABLE IF NOT EXISTS ${db}.daily_dims_local ON CLUSTER ${cluster}
${daily_dims_columns}
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/${db}/daily_dims_local', '{replica}')
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, dim, day, bot, value)
SETTINGS allow_nullable_key = 1, min_age_to_force_merge_seconds = 3600;

CREATE TABLE IF NOT EXISTS ${db}.daily_dims ON CLUSTER ${cluster} AS ${db}.daily_dims_local
ENGINE = Distributed(${cluster}, ${db}, daily_dims_local);

-- The events the builder has built (aggregate_progress is the same on every node), each shard its own.
INSERT INTO ${db}.daily_dims (${daily_dims_column_names}, built_seq)
${daily_dims_backfill}
SETTINGS parallel_distributed_insert_select = 2, max_partitions_per_insert_block = 0;
