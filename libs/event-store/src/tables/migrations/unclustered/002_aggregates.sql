-- The spec's "Aggregates", filled at insert time by materialized views on events. Deleting events (forget,
-- retention) does not rewrite them: a mutation on events never re-runs the views.

-- daily_rollup backs GET /v1/stats. One row per grain per insert block; AggregatingMergeTree folds them on merge
-- and queries re-aggregate with sum / uniqCombinedMerge, so unmerged parts never change an answer.
-- uniques: uniqCombined sketch over anonymous_id ('' = no anonymous id, not counted): exact up to 4,096 distinct
-- values, then HyperLogLog with 2^17 cells (typically well under 1% error, ~1-2% worst case).
-- Merging daily sketches gives the same registers as one sketch over the raw rows, so both read paths agree.
-- Spacing as first applied (trailing spaces, two before TO): the checksum is of these bytes.
CREATE TABLE IF NOT EXISTS ${db}.daily_rollup 
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
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, event_name, source, medium, country, device_type);

CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.daily_rollup_mv  TO ${db}.daily_rollup AS
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
-- shorter than 24 hours). That GROUP BY is the cost of the endpoint, hence:
-- - `session_key` = cityHash64(session_id, anonymous_id) is the key (grouping on a UInt64 is several times faster
--   than on two strings); session_id and anonymous_id stay as values. Two sessions of a project within the scanned
--   days share a key with probability ~n^2/2^65 (1e-7 at n = 2M).
-- - `entry` holds the entry source and medium as one sortable string, so a plain min picks the first event:
--   15-digit epoch ms | 5-digit byte length of source | source | medium   (sources.query.ts splits it).
--   Source and medium always come from ONE event; millisecond ties go to the shorter, then lower, source. A String
--   min merges faster than argMin states or a min over a tuple (BENCHMARKS.md).
CREATE TABLE IF NOT EXISTS ${db}.sessions 
(
  project_id   UUID,
  day          Date,
  session_key  UInt64,
  session_id   SimpleAggregateFunction(any, String),
  anonymous_id SimpleAggregateFunction(any, String),
  entry        SimpleAggregateFunction(min, String),
  first_ts     SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  last_ts      SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
  events       SimpleAggregateFunction(sum, UInt64),
  paid_events  SimpleAggregateFunction(sum, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, session_key);

CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.sessions_mv  TO ${db}.sessions AS
SELECT
  project_id,
  toDate(timestamp) AS day,
  cityHash64(session_id, anonymous_id) AS session_key,
  session_id,
  anonymous_id,
  min(concat(leftPad(toString(toUnixTimestamp64Milli(timestamp)), 15, '0'), leftPad(toString(length(source)), 5, '0'), source, medium)) AS entry,
  min(timestamp) AS first_ts,
  max(timestamp) AS last_ts,
  count() AS events,
  countIf(medium = 'paid') AS paid_events
FROM ${db}.events
GROUP BY project_id, day, session_id, anonymous_id;
