-- visit_spans, as the embedded store's 014 (the reasons are there): a ClickHouse server's builder (012) fills it
-- with the others, before `visits` in every range.
CREATE TABLE IF NOT EXISTS ${db}.visit_spans
${visit_spans_columns}
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, session_key);

-- Every stored event, once (a range the builder builds again merges into the same rows). Run it before the
-- services that read it serve; the builder adds what it builds after.
INSERT INTO ${db}.visit_spans (${visit_spans_column_names})
${visit_spans_select}
SETTINGS max_partitions_per_insert_block = 0;
