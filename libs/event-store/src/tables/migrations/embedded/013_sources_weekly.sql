-- sources_weekly: the answer of GET /v1/sources per ISO week (Monday to Sunday, UTC), merged from sources_daily's days
-- (here the embedded store's; a server's and a cluster's are in their own 013). A 30-day read merged one visitor sketch
-- per (source, medium) per day, ~0.2 ms of CPU each (96 KiB of uniqCombined registers): at 10M events the sketches
-- alone took ~75 of its ~97 ms (BENCHMARKS.md, "/v1/sources"). Its whole weeks now come from here: 4 sketches per
-- group instead of 28. Same columns and layout as sources_daily (the fragments), `day` being the week's Monday; the
-- same versions (tombstones 2s, rows 2s + 1, read with FINAL). sources_weekly_weeks records, per week, the highest
-- sources_daily_days seq of its days when it was merged: a read uses a week only when each of its 7 days is one it
-- would read from sources_daily (fresh) or has no events near it and no row, and no day was refreshed since (see
-- sources.query.ts). Built by the aggregate builder after the days (sources-daily-refresh.ts); nothing to backfill: a
-- week not merged yet is read day by day. Deleting events rewrites neither table.
CREATE TABLE IF NOT EXISTS ${db}.sources_weekly
${sources_daily_columns}
ENGINE = ReplacingMergeTree(version)
${sources_daily_layout};

CREATE TABLE IF NOT EXISTS ${db}.sources_weekly_weeks (project_id UUID, day Date, built_seq UInt64) ENGINE = ReplacingMergeTree(built_seq) ORDER BY (project_id, day);
