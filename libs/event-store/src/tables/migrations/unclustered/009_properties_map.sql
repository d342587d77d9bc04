-- Every top-level property of an event as a map, for `prop:<key>` in POST /v1/insights and goal filters, and for
-- GET /v1/properties (README "Insights"): parsing the `properties` JSON per row cost ~6x reading a column.
-- MATERIALIZED: ClickHouse computes it from `properties` at INSERT (the writer does not send it) and it stays out of
-- `SELECT *`; rows stored before this migration compute it on read until their parts are merged. The values are those
-- the JSON gave: strings as themselves, other values as their JSON text, null-valued keys left out.
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS properties_map Map(LowCardinality(String), String) MATERIALIZED
  ${properties_map}
  AFTER properties;

-- The rows stored before this migration get it written once, by a mutation in the background (MATERIALIZE COLUMN
-- returns at once; reads compute the same values meanwhile). Without it, parts that never merge again would build the
-- map from the JSON on every read: slower than reading the JSON before this migration (BENCHMARKS.md, "Insights").
ALTER TABLE ${db}.events MATERIALIZE COLUMN properties_map;
