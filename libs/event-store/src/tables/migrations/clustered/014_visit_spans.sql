-- visit_spans, as unclustered/014 (the reasons are there), laid out as `visits` (010): visit_spans_local on
-- each shard (a session's events are on one shard, so are its rows), the Distributed visit_spans what reads query
-- and what the builder's INSERT ... SELECT writes through (parallel_distributed_insert_select = 2: each shard folds
-- its own events_local, before `visits`).
CREATE TABLE IF NOT EXISTS ${db}.visit_spans_local ON CLUSTER ${cluster}
${visit_spans_columns}
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/${db}/visit_spans_local', '{replica}')
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, session_key);

CREATE TABLE IF NOT EXISTS ${db}.visit_spans ON CLUSTER ${cluster} AS ${db}.visit_spans_local
ENGINE = Distributed(${cluster}, ${db}, visit_spans_local);

-- Every stored event, once, each shard from its own events (a range the builder builds again merges into the same rows).
INSERT INTO ${db}.visit_spans (${visit_spans_column_names})
${visit_spans_select}
SETTINGS parallel_distributed_insert_select = 2, max_partitions_per_insert_block = 0;
