-- quarter_hours: per (project_id, day, slot, bot), the events, pageviews and visitor sketch of the events in quarter
-- hour `slot` (0-95) of UTC day `day`. Insights' time buckets in any time zone (every zone's hours and days begin on a
-- quarter hour, Asia/Kolkata's at :30 and Asia/Kathmandu's at :45 included) read it instead of every event: the
-- dashboard's chart by local day, week, month or hour (insights.query.ts, fromQuarters; BENCHMARKS.md, "Insights in a
-- time zone"). 96 rows a day per project (and bot flag). Merged within the hour as 015 has visits and daily_rollup.
-- Like the other aggregates, deletes (forget, retention) do not rewrite it.
-- One file for the embedded store and a server (both build it with the aggregate builder); the cluster's is
-- clustered/017_quarter_hours.sql.
CREATE TABLE IF NOT EXISTS ${db}.quarter_hours
${quarter_hours_columns}
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, bot, slot)
SETTINGS min_age_to_force_merge_seconds = 3600;

-- The events the builder has built, folded once: those up to the start of the last range it recorded (after a restart
-- the builder checks that range per table and month: quarter_hours has no row of it yet, so it builds that range's
-- events here and skips the tables that have them). Migrations run before the builder starts and before any INSERT.
INSERT INTO ${db}.quarter_hours (${quarter_hours_column_names}, built_seq)
${quarter_hours_backfill}
SETTINGS max_partitions_per_insert_block = 0;
