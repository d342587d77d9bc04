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
-- The embedded store: the aggregate builder fills it with the others.
CREATE TABLE IF NOT EXISTS ${db}.visits
${visits_columns}
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, bot, session_key);

-- The events the builder has built, folded once: those up to the start of the last range it recorded (the builder
-- re-checks that range per table and month after a restart: visits has no row of it yet, so it builds that range's
-- events into visits and skips the tables that have them). Events before 004 (insert_seq 0) are in it too. The rows
-- carry that seq as built_seq, below the range's end. Migrations run before the builder starts and before any INSERT.
INSERT INTO ${db}.visits (${visits_column_names}, built_seq)
SELECT ${visits_select}, (SELECT argMax(seq_from, seq_to) FROM ${db}.aggregate_progress) AS built_seq
FROM ${db}.events
WHERE insert_seq <= (SELECT argMax(seq_from, seq_to) FROM ${db}.aggregate_progress)
GROUP BY ${visits_grain}
SETTINGS max_partitions_per_insert_block = 0;
