-- visit_spans: per (project_id, day, session_key), the visits with events on that day off their home day (the UTC
-- day of the 30-minute bucket the session id ends with: VISIT_HOME_DAY_SQL in src/tables/aggregates.ts). A visit
-- with rows on two days has a row off its home day, so every visit `visits` holds on more than one day is listed
-- here (and a client's own session ids on every day they have events). Insights from `visits` take the listed
-- visits' rows of the range grouped per visit, as before, and every other visit's one row of a day whole (FINAL):
-- most visits are not listed, and a read groups a few thousand rows instead of every visit's (docs/insights.md,
-- "Visits from the aggregate"). The builder writes it before `visits` in every range, so a read never sees a
-- second day of a visit without its key here. A set: a row written twice merges into one. Like the other aggregates,
-- deletes (forget, retention) do not rewrite it (a key left here only makes a read group that visit).
-- One file for the embedded store and a ClickHouse server: the aggregate builder fills it with the others in both
-- (a server's since 012); the cluster's is clustered/014_visit_spans.sql.
CREATE TABLE IF NOT EXISTS ${db}.visit_spans
${visit_spans_columns}
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, session_key);

-- Every stored event, once: the builder adds what it builds after (and rebuilds the range it had recorded, whose
-- rows then merge with these).
INSERT INTO ${db}.visit_spans (${visit_spans_column_names})
${visit_spans_select}
SETTINGS max_partitions_per_insert_block = 0;
