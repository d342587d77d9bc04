/**
 * `events.properties_map` (migration 009), from the stored `properties` JSON: every top-level key with its value as
 * prop:<key> read it from the JSON before (JSONExtractRaw per row): a string as itself, any other value as its JSON
 * text (as JSONExtractRaw writes it), a key whose value is null left out. MATERIALIZED in every mode (a migration
 * fragment: changing it changes 009's checksum, which stores that applied it refuse); properties-map.spec.ts pins its
 * meaning against apps/read-api's propValue and the JSON reading.
 */
export const PROPERTIES_MAP_SQL = String.raw`CAST(
    arrayMap(kv -> (kv.1, if(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2)), arrayFilter(kv -> kv.2 != 'null', JSONExtractKeysAndValuesRaw(properties))),
    'Map(LowCardinality(String), String)')`;
