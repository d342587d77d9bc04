-- visit_dims, as unclustered/018 (the reasons are there), laid out as the cluster's sources_daily (012): the days'
-- seqs in one small table every node holds a replica of, a day's answer computed across shards and written whole to
-- one shard (sharding key: project and day), so its tombstones and new rows meet in one ReplacingMergeTree.
CREATE TABLE IF NOT EXISTS ${db}.visit_dims_days ON CLUSTER ${cluster} (project_id UUID, day Date, built_seq UInt64)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/${db}/visit_dims_days', '{shard}-{replica}', built_seq) ORDER BY (project_id, day);

CREATE TABLE IF NOT EXISTS ${db}.visit_dims_local ON CLUSTER ${cluster}
${visit_dims_columns}
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/${db}/visit_dims_local', '{replica}', version)
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, dim, day, value, channel)
SETTINGS allow_nullable_key = 1, index_granularity = 256;
CREATE TABLE IF NOT EXISTS ${db}.visit_dims ON CLUSTER ${cluster} AS ${db}.visit_dims_local
ENGINE = Distributed(${cluster}, ${db}, visit_dims_local, cityHash64(project_id, day));

-- The rule since 018 over the events stored before, each shard its own (as clustered/014).
INSERT INTO ${db}.visit_spans (${visit_spans_column_names})
${visit_spans_select_018}
SETTINGS parallel_distributed_insert_select = 2, max_partitions_per_insert_block = 0;
