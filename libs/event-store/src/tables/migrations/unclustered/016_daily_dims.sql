-- daily_dims: per (project_id, day, dim, value, bot), the events, pageviews and visitor sketch of the events whose
-- dimension `dim` (path, browser, os, country, device_type: DAILY_DIMS in src/tables/aggregates.ts) has that value.
-- Whole-day insights of event metrics (events, pageviews, visitors) by one of those dimensions, filtered on it or not,
-- read it instead of every event: the dashboard's lists by page, browser, os, country and device type (insights.query.ts,
-- fromDims; BENCHMARKS.md, "Insights: event dimensions from daily_dims"). Each event is one row per dimension in the
-- fold (ARRAY JOIN), so it costs the builder about twice what daily_rollup does. `value` is NULL for an event without
-- a path (Nullable in the key: allow_nullable_key). Merged within the hour as 015 has visits and daily_rollup. Like
-- the other aggregates, deletes (forget, retention) do not rewrite it.
-- One file for the embedded store and a server (both build it with the aggregate builder); the cluster's is
-- clustered/016_daily_dims.sql.
CREATE TABLE IF NOT EXISTS ${db}.daily_dims
${daily_dims_columns}
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, dim, day, bot, value)
SETTINGS allow_nullable_key = 1, min_age_to_force_merge_seconds = 3600;

-- The events the builder has built, folded once: those up to the start of the last range it recorded (after a restart
-- the builder checks that range per table and month: daily_dims has no row of it yet, so it builds that range's events
-- here and skips the tables that have them). Migrations run before the builder starts and before any INSERT.
INSERT INTO ${db}.daily_dims (${daily_dims_column_names}, built_seq)
${daily_dims_backfill}
SETTINGS max_partitions_per_insert_block = 0;
