-- visits and daily_rollup: parts whose rows no longer change are merged into one part per partition within the hour.
-- Whole-day insights read a visit's one row of a day with FINAL (014), and sum and merge daily_rollup's rows of each
-- day; both cost most when a day's rows sit in several parts whose key ranges overlap (FINAL merges those parts' rows
-- in key order; the rollup's GROUP BY sees a day's group once per part). Live traffic arrives in time order, so a
-- past day's rows sit in parts of their own days; but events written out of time order (an import or a backfill of
-- shuffled history: every INSERT touches every day) leave each day's rows in as many parts as INSERTs, and the engine's
-- merge selector may keep a handful of parts of similar size unmerged for good. On the 10M store of
-- `npm run bench:dashboard`, five such parts per month made the FINAL read of visits by source 6x slower than one part,
-- events by event name 2.7x (BENCHMARKS.md, "Aggregates merged within the hour"). With this setting the engine merges
-- any parts all older than an hour whatever their sizes: a month's rows rewritten at most about once an hour while
-- parts keep arriving (~7 s of one core per 2M visit rows), never while nothing is written.
-- One file for the embedded store and a server; the cluster's is clustered/015_aggregates_merged.sql.
ALTER TABLE ${db}.visits MODIFY SETTING min_age_to_force_merge_seconds = 3600;
ALTER TABLE ${db}.daily_rollup MODIFY SETTING min_age_to_force_merge_seconds = 3600;
