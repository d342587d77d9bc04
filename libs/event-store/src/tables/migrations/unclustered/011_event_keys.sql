-- Conversions (funnels, goals, retention) and exact visitor counts read four things of every event in the range: its
-- name, its visitor, whether that visitor id is a daily one and its visit (README "Conversions"; BENCHMARKS.md,
-- "Conversions").
--
-- event_name as LowCardinality: a step or goal condition compares each event's dictionary index instead of its string
-- (the prefilter of a 4-step funnel over 10M events: 416 -> 188 ms CPU). Event names are a site's own vocabulary, a
-- few to a few thousand per project (Plausible stores them the same way). Rows stored before this migration are
-- converted by a mutation in the background; reads convert them on the fly meanwhile.
ALTER TABLE ${db}.events MODIFY COLUMN event_name LowCardinality(String);

-- anon_key: the anonymous id's 128-bit SipHash, the value uniqExact itself hashes a String to before counting it, so
-- counting or grouping by anon_key is exactly as exact as by anonymous_id, reading 16 fixed bytes per event instead of
-- the id and hashing nothing at read time. anon_daily: 1 when the id is a daily one ('d_' + 32 hex, the browser SDK's
-- default persistence), for the answers' note on daily ids. Both MATERIALIZED: computed at INSERT (the writer does not
-- send them) and left out of `SELECT *`.
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS anon_key UInt128 MATERIALIZED ${anon_key} AFTER anonymous_id;
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS anon_daily UInt8 MATERIALIZED ${anon_daily} AFTER anon_key;

-- visit_key: the key of the event's visit, cityHash64(session_id, anonymous_id), as `visits` and `sessions` key their
-- rows (session_key): a funnel breakdown or a goal by a visit dimension finds an event's visit reading 8 bytes instead
-- of both ids (the kept events' visit keys of a funnel at 10M: 294 -> 162 ms CPU).
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS visit_key UInt64 MATERIALIZED ${visit_key} AFTER session_id;

-- The rows stored before this migration get them written once, by a mutation in the background (as 009 does).
ALTER TABLE ${db}.events MATERIALIZE COLUMN anon_key;
ALTER TABLE ${db}.events MATERIALIZE COLUMN anon_daily;
ALTER TABLE ${db}.events MATERIALIZE COLUMN visit_key;
