-- visit_dims: per (project_id, day, dim, value), the visits of that UTC day read whole (bots left out, and no
-- visit_spans key on the day or a day beside it: the visit's only row in `visits`), summed per value of each visit
-- dimension (source, medium, campaign, channel, entry_path, exit_path: VISIT_DIMS in src/tables/visit-dims.ts, and
-- `all`, one row of every such visit; the rows of each dimension but channel and all split by the visits' channel too):
-- visits, bounces, duration (ms), pageviews, events, and the visitors' sketch. Insights of visit metrics by one visit
-- dimension (or none: the `all` rows), filtered on it or on channel or not, read a day's rows here instead of
-- its visits when the day is fresh (insights.query.ts; docs/insights.md, "visit_dims"): tens of rows a day instead of
-- every visit. A day is recomputed whole by the aggregate builder's keeper between its builds (sources-daily-refresh.ts),
-- as sources_daily's days are: tombstones (version 2s) for the groups it had, then its groups as of seq s (2s + 1),
-- then s in visit_dims_days. A read takes a day only when no build touched it or a day beside it since (a visit's
-- rows lie on two adjacent days at most). Nothing to backfill: a day never recomputed is read from `visits`, and the
-- keeper recomputes the last 62 days' on start. Deletes (forget, retention) do not rewrite it, as the other aggregates.
-- One file for the embedded store and a server; the cluster's is clustered/018_visit_dims.sql.
CREATE TABLE IF NOT EXISTS ${db}.visit_dims
${visit_dims_columns}
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, dim, day, value, channel)
SETTINGS allow_nullable_key = 1, index_granularity = 256;

CREATE TABLE IF NOT EXISTS ${db}.visit_dims_days (project_id UUID, day Date, built_seq UInt64) ENGINE = ReplacingMergeTree(built_seq) ORDER BY (project_id, day);

-- The visits home day rule since 018 (VISIT_HOME_DAY_SQL): a session id not of the server's form has no home day, so
-- it is listed on every day it has events, also on the day its number names, which 014's rule left out. The events
-- stored before, once (the builder lists what it builds from now on); rows already listed merge with these.
INSERT INTO ${db}.visit_spans (${visit_spans_column_names})
${visit_spans_select_018}
SETTINGS max_partitions_per_insert_block = 0;
