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
-- A ClickHouse server: filled by a view on every INSERT into events, as the aggregates of 002/003 (issue 28 moves
-- them all to the builder).
CREATE TABLE IF NOT EXISTS ${db}.visits
${visits_columns}
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, bot, session_key);

CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.visits_mv TO ${db}.visits AS
SELECT ${visits_select}
FROM ${db}.events
GROUP BY ${visits_grain};

-- One-time backfill, after the view exists so that no event falls between the two. The services migrate before they
-- serve; an event written by a service that is still running the previous version while this statement runs can be
-- folded twice (its visit's events and pageviews counted twice; visits, visitors, entry, exit and duration are
-- unchanged by a repeat): run this migration before the ingest replicas take traffic.
INSERT INTO ${db}.visits (${visits_column_names})
SELECT ${visits_select}
FROM ${db}.events
GROUP BY ${visits_grain}
SETTINGS max_partitions_per_insert_block = 0;
