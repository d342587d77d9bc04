-- Every top-level property of an event as a map, for `prop:<key>` in POST /v1/insights and goal filters, and for
-- GET /v1/properties (README "Insights"): parsing the `properties` JSON per row cost ~6x reading a column.
-- MATERIALIZED: ClickHouse computes it from `properties` at INSERT (the writer does not send it) and it stays out of
-- `SELECT *`; rows stored before this migration compute it on read until their parts are merged. The values are those
-- the JSON gave: strings as themselves, other values as their JSON text, null-valued keys left out.
-- events_local holds the column; the Distributed events declares it MATERIALIZED identically (ClickHouse's advice for
-- MATERIALIZED columns behind a Distributed table), so that reads through it can name the column and an INSERT
-- through it, which does not name it, is accepted and stored with the map computed.
ALTER TABLE ${db}.events_local ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS properties_map Map(LowCardinality(String), String) MATERIALIZED
  ${properties_map}
  AFTER properties;

ALTER TABLE ${db}.events ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS properties_map Map(LowCardinality(String), String) MATERIALIZED
  ${properties_map}
  AFTER properties;

-- The rows stored before this migration get it written once, by a mutation on every shard's replicas in the
-- background (as in the single-node file).
ALTER TABLE ${db}.events_local ON CLUSTER ${cluster} MATERIALIZE COLUMN properties_map;
