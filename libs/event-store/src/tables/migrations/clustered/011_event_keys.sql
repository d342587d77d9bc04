-- As the single-node file (the reasons are there): event_name as LowCardinality, and the visitor's anon_key and
-- anon_daily and the visit's visit_key computed at INSERT. events_local holds the data; the Distributed events
-- declares the same types and the MATERIALIZED columns identically (as 009 does), so reads through it can name them
-- and an INSERT through it, which does not name them, is stored with them computed.
ALTER TABLE ${db}.events_local ON CLUSTER ${cluster} MODIFY COLUMN event_name LowCardinality(String);
ALTER TABLE ${db}.events ON CLUSTER ${cluster} MODIFY COLUMN event_name LowCardinality(String);

ALTER TABLE ${db}.events_local ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS anon_key UInt128 MATERIALIZED ${anon_key} AFTER anonymous_id;
ALTER TABLE ${db}.events_local ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS anon_daily UInt8 MATERIALIZED ${anon_daily} AFTER anon_key;
ALTER TABLE ${db}.events ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS anon_key UInt128 MATERIALIZED ${anon_key} AFTER anonymous_id;
ALTER TABLE ${db}.events ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS anon_daily UInt8 MATERIALIZED ${anon_daily} AFTER anon_key;
ALTER TABLE ${db}.events_local ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS visit_key UInt64 MATERIALIZED ${visit_key} AFTER session_id;
ALTER TABLE ${db}.events ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS visit_key UInt64 MATERIALIZED ${visit_key} AFTER session_id;

-- The rows stored before this migration: a mutation on every shard's replicas in the background.
ALTER TABLE ${db}.events_local ON CLUSTER ${cluster} MATERIALIZE COLUMN anon_key;
ALTER TABLE ${db}.events_local ON CLUSTER ${cluster} MATERIALIZE COLUMN anon_daily;
ALTER TABLE ${db}.events_local ON CLUSTER ${cluster} MATERIALIZE COLUMN visit_key;
