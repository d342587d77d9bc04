-- daily_uniques backs GET /v1/stats metric=uniques when the request groups by nothing or only event_name (the
-- planner's 'uniques' source). daily_rollup's grain (event_name, source, medium, country, device_type) splits a
-- day's visitors into ~5k small sketches per day, and a 30-day answer merged ~144k of them (BENCHMARKS.md);
-- here one sketch per (project_id, day, event_name), so 30 days merge ~150 sketches.
-- uniques is built exactly as daily_rollup's (uniqCombined over non-empty anonymous_id): merging sketches gives the
-- same registers whatever the grouping, so daily_uniques, daily_rollup and raw events answer the same numbers.
-- Like the other aggregates, ALTER DELETE on events (forget, retention) does not rewrite it.
-- Spacing as first applied (a trailing space, two before TO): the checksum is of these bytes.
CREATE TABLE IF NOT EXISTS ${db}.daily_uniques 
(
  project_id  UUID,
  day         Date,
  event_name  String,
  uniques     AggregateFunction(uniqCombined, String)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, event_name);

CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.daily_uniques_mv  TO ${db}.daily_uniques AS
SELECT
  project_id,
  toDate(timestamp) AS day,
  event_name,
  uniqCombinedStateIf(anonymous_id, anonymous_id != '') AS uniques
FROM ${db}.events
GROUP BY project_id, day, event_name;

-- One-time backfill: a view only sees inserts made after it exists, and this migration lands on stores that already
-- hold events. It runs once, as the last statement of migration 3 (schema_migrations records the version after it),
-- AFTER the view exists, so no event falls between the two. An event inserted while it runs can be in both the
-- view's rows and the backfill's: harmless, because a uniqCombined sketch is a set (merging an id twice changes
-- nothing); the same holds if a failed migration is retried. It cannot be done this way for counts.
-- Cost: one scan of events' project_id, timestamp, event_name, anonymous_id.
-- parallel_distributed_insert_select = 2 serves the clustered form of this file; a single node ignores it.
INSERT INTO ${db}.daily_uniques (project_id, day, event_name, uniques)
SELECT
  project_id,
  toDate(timestamp) AS day,
  event_name,
  uniqCombinedStateIf(anonymous_id, anonymous_id != '') AS uniques
FROM ${db}.events
GROUP BY project_id, day, event_name
SETTINGS parallel_distributed_insert_select = 2;
