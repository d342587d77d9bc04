-- visits: what POST /v1/insights needs of each visit, per (project_id, day, session, bot): its anonymous_id, its
-- entry (source, medium, channel, campaign of its first event, encoded as one sortable string: VISIT_ENTRY in
-- src/aggregates.ts), its first and last $pageview (VISIT_PAGE), first and last event time, event and pageview counts.
-- Insights over whole UTC days with only visit dimensions (totals, source, entry page, ...) merge a session's rows
-- of the range's days (GROUP BY session_key): the visit cut to the range, exactly as the raw events answer, from
-- ~1 row per visit instead of every event (insights.query.ts; BENCHMARKS.md, "Insights"). `bot` splits a session's
-- bot events from the others (insights leave bots out unless asked). session_key = cityHash64(session_id,
-- anonymous_id), as in sessions. The columns, SELECT list and GROUP BY are fragments (visits_columns, visits_select,
-- visits_grain): the aggregate of src/aggregates.ts, which the builder folds with too. Like the other aggregates, deletes (forget,
-- retention) do not rewrite it.
-- A cluster: visits_local on each shard, filled by a view on events_local (a session's events are on one shard, so
-- are its visit rows); the Distributed visits is what reads query (they GROUP BY session across shards all the same).
CREATE TABLE IF NOT EXISTS ${db}.visits_local ON CLUSTER ${cluster}
${visits_columns}
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/${db}/visits_local', '{replica}')
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, bot, session_key);

CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.visits_mv ON CLUSTER ${cluster} TO ${db}.visits_local AS
SELECT ${visits_select}
FROM ${db}.events_local
GROUP BY ${visits_grain};

-- No sharding key: nothing inserts through it but the backfill below, which parallel_distributed_insert_select = 2
-- runs as an INSERT into visits_local from events_local on each shard.
CREATE TABLE IF NOT EXISTS ${db}.visits ON CLUSTER ${cluster} AS ${db}.visits_local
ENGINE = Distributed(${cluster}, ${db}, visits_local);

-- One-time backfill (as in the single-server file: run it before the ingest replicas take traffic).
INSERT INTO ${db}.visits (${visits_column_names})
SELECT ${visits_select}
FROM ${db}.events
GROUP BY ${visits_grain}
SETTINGS parallel_distributed_insert_select = 2, max_partitions_per_insert_block = 0;
