-- The spec's "Aggregates", filled at insert time by materialized views on events. Deleting events (forget,
-- retention) does not rewrite them: a mutation on events never re-runs the views.

-- daily_rollup backs GET /v1/stats. One row per grain per insert block; AggregatingMergeTree folds them on merge
-- and queries re-aggregate with sum / uniqCombinedMerge, so unmerged parts never change an answer.
-- uniques: uniqCombined sketch over anonymous_id ('' = no anonymous id, not counted): exact up to 4,096 distinct
-- values, then HyperLogLog with 2^17 cells (typically well under 1% error, ~1-2% worst case).
-- Merging daily sketches gives the same registers as one sketch over the raw rows, so both read paths agree.
CREATE TABLE IF NOT EXISTS ${db}.daily_rollup ${on_cluster}
(
  project_id  UUID,
  day         Date,
  event_name  String,
  source      LowCardinality(String),
  medium      LowCardinality(String),
  country     LowCardinality(String),
  device_type LowCardinality(String),
  events      SimpleAggregateFunction(sum, UInt64),
  uniques     AggregateFunction(uniqCombined, String)
)
ENGINE = ${engine_daily_rollup}
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, event_name, source, medium, country, device_type);

CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.daily_rollup_mv ${on_cluster} TO ${db}.daily_rollup AS
SELECT
  project_id,
  toDate(timestamp) AS day,
  event_name,
  source,
  medium,
  country,
  device_type,
  count() AS events,
  uniqCombinedStateIf(anonymous_id, anonymous_id != '') AS uniques
FROM ${db}.events
GROUP BY project_id, day, event_name, source, medium, country, device_type;

-- sessions backs GET /v1/sources: one logical row per (project_id, session_id, anonymous_id), stored as one row
-- per day the session has events in. `day` sits right after project_id in the key so a time range prunes granules;
-- readers scan [from - 1 day, to + 1 day] and GROUP BY session to merge a session's days (correct for sessions
-- shorter than 24 hours). `entry` is the session's first event as min((timestamp, event_id, source, medium)): an
-- argMin by (timestamp, event_id) whose source and medium always come from ONE event, kept as a plain value
-- (SimpleAggregateFunction) because merging argMin states measured ~1.6x slower for GET /v1/sources.
CREATE TABLE IF NOT EXISTS ${db}.sessions ${on_cluster}
(
  project_id   UUID,
  day          Date,
  session_id   String,
  anonymous_id String,
  entry        SimpleAggregateFunction(min, Tuple(ts DateTime64(3, 'UTC'), event_id String, source String, medium String)),
  first_ts     SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  last_ts      SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
  events       SimpleAggregateFunction(sum, UInt64),
  paid_events  SimpleAggregateFunction(sum, UInt64)
)
ENGINE = ${engine_sessions}
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, session_id, anonymous_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.sessions_mv ${on_cluster} TO ${db}.sessions AS
SELECT
  project_id,
  toDate(timestamp) AS day,
  session_id,
  anonymous_id,
  min((timestamp, event_id, toString(source), toString(medium))) AS entry,
  min(timestamp) AS first_ts,
  max(timestamp) AS last_ts,
  count() AS events,
  countIf(medium = 'paid') AS paid_events
FROM ${db}.events
GROUP BY project_id, day, session_id, anonymous_id;
