import type { StatsGroupBy } from '@analytics/schema';

/** The single group_by columns daily_uniques_by keeps (migration 006, embedded store), as its `dim`. */
export const UNIQUES_BY_GROUP_BY = ['source', 'medium', 'country', 'device_type'] as const satisfies readonly StatsGroupBy[];

/**
 * The groupings one row of daily_rollup's grain (columns event_name, source, medium, country, device_type) counts in,
 * as (event_name or '' for every event, dim, dim_value) tuples for `ARRAY JOIN ... AS t`: all visitors ('', '', ''),
 * then per column for every event and per event name. Migration 006's backfill (from daily_rollup) and the aggregate
 * builder (from a range's events folded to that grain) expand rows with it, so both write the same groupings.
 */
export const UNIQUES_BY_GROUPINGS_SQL = `[('', '', ''), ${UNIQUES_BY_GROUP_BY.map((c) => `('', '${c}', toString(${c})), (event_name, '${c}', toString(${c}))`).join(', ')}]`;

/** daily_uniques_by's columns, in every mode's migration (embedded 006, server and clustered 012): fragment daily_uniques_by_columns. */
export const DAILY_UNIQUES_BY_COLUMNS = `(
  project_id UUID,
  day        Date,
  event_name String,
  dim        LowCardinality(String),
  dim_value  String,
  uniques    AggregateFunction(uniqCombined, String),
  built_seq  SimpleAggregateFunction(max, UInt64) DEFAULT 0
)`;

/** daily_uniques_by's partitions, sort key and granules, in every mode's migration: fragment daily_uniques_by_layout. */
export const DAILY_UNIQUES_BY_LAYOUT = `PARTITION BY toYYYYMM(day)
ORDER BY (project_id, dim, event_name, day, dim_value)
SETTINGS index_granularity = 32`;
