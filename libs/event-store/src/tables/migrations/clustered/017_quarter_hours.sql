-- quarter_hours, as unclustered/017 (the reasons are there): quarter_hours_local on each shard (its rows from that
-- shard's events; reads merge the shards' rows), the Distributed quarter_hours what reads query and what the builder's
-- INSERT ... SELECT writes through (parallel_distributed_insert_select = 2: each shard folds its own events_local).
CREATE TABLE IF NOT EXISTS ${db}.quarter_hours_local ON CLUSTER ${cluster}
${quarter_hours_columns}
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/${db}/quarter_hours_local', '{replica}')
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, bot, slot)
SETTINGS min_age_to_force_merge_seconds = 3600;

CREATE TABLE IF NOT EXISTS ${db}.quarter_hours ON CLUSTER ${cluster} AS ${db}.quarter_hours_local
ENGINE = Distributed(${cluster}, ${db}, quarter_hours_local);

-- The events the builder has built (aggregate_progress is the same on every node), each shard its own.
INSERT INTO ${db}.quarter_hours (${quarter_hours_column_names}, built_seq)
${quarter_hours_backfill}
SETTINGS parallel_distributed_insert_select = 2, max_partitions_per_insert_block = 0;
