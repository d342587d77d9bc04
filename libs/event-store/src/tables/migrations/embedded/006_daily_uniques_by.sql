-- daily_uniques_by, visitor sketches per day for GET /v1/stats metric=uniques without grouping or grouped by ONE
-- of source, medium, country, device_type (the planner's 'uniques_by' source; here the embedded store's, a server and a
-- cluster get it in 012). Its columns and layout are the fragments daily_uniques_by_columns and daily_uniques_by_layout
-- (every mode's file shares them).
-- daily_rollup holds those answers too, but split over its whole grain: a 30-day answer merged ~145k sketches;
-- daily_uniques splits a day by event_name, so "all visitors" merged ~175 large sketches (BENCHMARKS.md).
-- Here one sketch per (day, event_name or '' for all events, dimension, value): all visitors of 30 days
-- merge 30 sketches, visitors by country ~30 x countries.
-- event_name '' = every event (stored event names are never empty); dim '' (dim_value '') = no grouping, written for
-- event_name '' only (per event name, daily_uniques holds it).
-- The sketches are built as daily_rollup's (uniqCombined over non-empty anonymous_id): merging gives the same
-- registers whatever the grouping, so every path answers the same numbers. Deletes (forget, retention) do not
-- rewrite it.
-- index_granularity 32: a row holds a sketch of up to ~80 KB, and a read deserializes every row of the granules it
-- touches; with 8,192-row granules 30 days of one dim read ~1,300 rows (5 parts) to use 34.
CREATE TABLE IF NOT EXISTS ${db}.daily_uniques_by
${daily_uniques_by_columns}
ENGINE = AggregatingMergeTree
${daily_uniques_by_layout};

-- The rows the store already aggregated, from daily_rollup (whose grain holds every one of these groupings): merging
-- its sketches gives exactly the sketches the builder would have built from the events, deleted events included,
-- and built_seq carries over, so the builder's per-month recheck after a crash sees this table as daily_rollup.
-- Migrations run before the builder starts. ${uniques_by_groupings} is UNIQUES_BY_GROUPINGS_SQL (src/uniques-by.ts),
-- the tuples the builder expands with too.
INSERT INTO ${db}.daily_uniques_by (project_id, day, event_name, dim, dim_value, uniques, built_seq)
SELECT project_id, day, t.1 AS e, t.2 AS d, t.3 AS v, uniqCombinedMergeState(uniques), max(built_seq)
FROM ${db}.daily_rollup
ARRAY JOIN ${uniques_by_groupings} AS t
GROUP BY project_id, day, e, d, v;
