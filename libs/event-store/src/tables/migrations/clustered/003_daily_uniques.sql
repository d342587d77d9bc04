-- daily_uniques backs GET /v1/stats metric=uniques when the request groups by nothing or only event_name (the
-- planner's 'uniques' source). daily_rollup's grain (event_name, source, medium, country, device_type) splits a
-- day's visitors into ~5k small sketches per day, and a 30-day answer merged ~144k of them (BENCHMARKS.md);
-- here one sketch per (project_id, day, event_name), so 30 days merge ~150 sketches.
-- uniques is built exactly as daily_rollup's (uniqCombined over non-empty anonymous_id): merging sketches gives the
-- same registers whatever the grouping, so daily_uniques, daily_rollup and raw events answer the same numbers.
-- Like the other aggregates, ALTER DELETE on events (forget, retention) does not rewrite it.
-- As in 002, the view fills each shard's daily_uniques_local (ReplicatedAggregatingMergeTree) from its
-- events_local, and `daily_uniques` is a Distributed table over them; reads merge sketches across shards.
CREATE TABLE IF NOT EXISTS ${db}.daily_uniques_local ON CLUSTER ${cluster}
(
  project_id  UUID,
  day         Date,
  event_name  String,
  uniques     AggregateFunction(uniqCombined, String)
)
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/${db}/daily_uniques_local', '{replica}')
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, event_name);

CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.daily_uniques_mv ON CLUSTER ${cluster} TO ${db}.daily_uniques_local AS
SELECT
  project_id,
  toDate(timestamp) AS day,
  event_name,
  uniqCombinedStateIf(anonymous_id, anonymous_id != '') AS uniques
FROM ${db}.events_local
GROUP BY project_id, day, event_name;

-- The Distributed table the read path queries (no sharding key: nothing inserts through it but
-- the backfill below, which writes shard-locally).
CREATE TABLE IF NOT EXISTS ${db}.daily_uniques ON CLUSTER ${cluster} AS ${db}.daily_uniques_local
ENGINE = Distributed(${cluster}, ${db}, daily_uniques_local);

-- One-time backfill: a view only sees inserts made after it exists, and this migration lands on stores that already
-- hold events. It runs once, as the last statement of migration 3 (schema_migrations records the version after it),
-- AFTER the view exists, so no event falls between the two. An event inserted while it runs can be in both the
-- view's rows and the backfill's: harmless, because a uniqCombined sketch is a set (merging an id twice changes
-- nothing); the same holds if a failed migration is retried. It cannot be done this way for counts.
-- Cost: one scan of events' project_id, timestamp, event_name, anonymous_id.
-- Both tables are Distributed over the same cluster, so parallel_distributed_insert_select = 2 runs
-- the INSERT ... SELECT on every shard from its events_local into its daily_uniques_local (one replica per shard,
-- replication copies it).
INSERT INTO ${db}.daily_uniques (project_id, day, event_name, uniques)
SELECT
  project_id,
  toDate(timestamp) AS day,
  event_name,
  uniqCombinedStateIf(anonymous_id, anonymous_id != '') AS uniques
FROM ${db}.events
GROUP BY project_id, day, event_name
SETTINGS parallel_distributed_insert_select = 2;
