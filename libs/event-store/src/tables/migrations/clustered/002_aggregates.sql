-- The spec's "Aggregates", filled at insert time by materialized views on events. Deleting events (forget,
-- retention) does not rewrite them: a mutation on events never re-runs the views.

-- daily_rollup backs GET /v1/stats. One row per grain per insert block; AggregatingMergeTree folds them on merge
-- and queries re-aggregate with sum / uniqCombinedMerge, so unmerged parts never change an answer.
-- uniques: uniqCombined sketch over anonymous_id ('' = no anonymous id, not counted): exact up to 4,096 distinct
-- values, then HyperLogLog with 2^17 cells (typically well under 1% error, ~1-2% worst case).
-- Merging daily sketches gives the same registers as one sketch over the raw rows, so both read paths agree.
-- The views run on each shard's events_local and write that shard's *_local aggregate tables
-- (Replicated*AggregatingMergeTree); `daily_rollup` and `sessions` are then Distributed tables over them (read-only:
-- nothing inserts through them), and reads re-aggregate across shards exactly as they do across parts.
CREATE TABLE IF NOT EXISTS ${db}.daily_rollup_local ON CLUSTER ${cluster}
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
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/${db}/daily_rollup_local', '{replica}')
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, event_name, source, medium, country, device_type);

CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.daily_rollup_mv ON CLUSTER ${cluster} TO ${db}.daily_rollup_local AS
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
FROM ${db}.events_local
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
CREATE TABLE IF NOT EXISTS ${db}.sessions_local ON CLUSTER ${cluster}
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
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/${db}/sessions_local', '{replica}')
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, session_key);

CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.sessions_mv ON CLUSTER ${cluster} TO ${db}.sessions_local AS
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
FROM ${db}.events_local
GROUP BY project_id, day, session_id, anonymous_id;

-- The Distributed tables the read path queries. sessions carries the events' sharding key (its
-- rows were placed by it: a session's rows are all on one shard); daily_rollup's grain spans sessions, so its rows
-- for one grain can sit on several shards and are summed / sketch-merged across them at read time.
CREATE TABLE IF NOT EXISTS ${db}.daily_rollup ON CLUSTER ${cluster} AS ${db}.daily_rollup_local
ENGINE = Distributed(${cluster}, ${db}, daily_rollup_local);
CREATE TABLE IF NOT EXISTS ${db}.sessions ON CLUSTER ${cluster} AS ${db}.sessions_local
ENGINE = Distributed(${cluster}, ${db}, sessions_local, ${events_sharding_key});
