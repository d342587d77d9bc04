-- sources_daily, the per-day answer of GET /v1/sources (here the embedded store's; a server and a cluster get it in
-- 012; see sources-daily.ts). Its columns and layout are the fragments sources_daily_columns and sources_daily_layout
-- (every mode's file shares them).
-- /v1/sources over 30 days merged every session row of the range per request (BENCHMARKS.md). A session
-- belongs to the day of its first event, so a whole-day range is the union of its days' answers: one row per
-- (project_id, day, entry source, entry medium) with the sessions, their events and a uniqCombined sketch of their
-- visitors (the same sketch as daily_rollup's: merged across days it is the sketch over all of them), so 30 days
-- merge ~30 x (source, medium pairs) rows.
-- A day's rows are recomputed from `sessions` by the aggregate builder (never incrementally: a late event can move a
-- session to another entry or another day), written in ONE INSERT as a new version: every group the day had gets a
-- tombstone (version 2s, events 0) and every group it has now a row (version 2s + 1), so ReplacingMergeTree(version)
-- read with FINAL leaves exactly the new answer. sources_daily_days records, per day, the builder seq s it reflects;
-- a read uses a day only when no event built after s touches the day or its neighbours, and computes the others from
-- `sessions` (see sources.query.ts). Deleting events (forget, retention) rewrites neither table.
CREATE TABLE IF NOT EXISTS ${db}.sources_daily
${sources_daily_columns}
ENGINE = ReplacingMergeTree(version)
${sources_daily_layout};

CREATE TABLE IF NOT EXISTS ${db}.sources_daily_days (project_id UUID, day Date, built_seq UInt64) ENGINE = ReplacingMergeTree(built_seq) ORDER BY (project_id, day);
