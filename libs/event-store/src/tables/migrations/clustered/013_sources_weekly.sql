-- sources_weekly, as the embedded store's 013 (the reasons are there), laid out as the cluster's sources_daily (012):
-- the weeks' seqs in one small table every node holds a replica of, a week's answer merged across shards and written
-- whole to one shard (sharding key: project and week), so its tombstones and new rows meet in one ReplacingMergeTree.
CREATE TABLE IF NOT EXISTS ${db}.sources_weekly_weeks ON CLUSTER ${cluster} (project_id UUID, day Date, built_seq UInt64)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/${db}/sources_weekly_weeks', '{shard}-{replica}', built_seq) ORDER BY (project_id, day);

CREATE TABLE IF NOT EXISTS ${db}.sources_weekly_local ON CLUSTER ${cluster}
${sources_daily_columns}
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/${db}/sources_weekly_local', '{replica}', version)
${sources_daily_layout};
CREATE TABLE IF NOT EXISTS ${db}.sources_weekly ON CLUSTER ${cluster} AS ${db}.sources_weekly_local
ENGINE = Distributed(${cluster}, ${db}, sources_weekly_local, cityHash64(project_id, day));
