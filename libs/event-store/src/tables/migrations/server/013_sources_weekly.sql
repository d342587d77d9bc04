-- sources_weekly, as the embedded store's 013 (the reasons are there; the columns and layout are sources_daily's
-- fragments): kept by the one aggregate builder beside sources_daily (012).
CREATE TABLE IF NOT EXISTS ${db}.sources_weekly
${sources_daily_columns}
ENGINE = ReplacingMergeTree(version)
${sources_daily_layout};

CREATE TABLE IF NOT EXISTS ${db}.sources_weekly_weeks (project_id UUID, day Date, built_seq UInt64) ENGINE = ReplacingMergeTree(built_seq) ORDER BY (project_id, day);
