/** sources_daily's columns, in every mode's migration (embedded 005, server and clustered 012): fragment sources_daily_columns. */
export const SOURCES_DAILY_COLUMNS = `(
  project_id UUID,
  day        Date,
  source     LowCardinality(String),
  medium     LowCardinality(String),
  sessions   UInt64,
  events     UInt64,
  uniques    AggregateFunction(uniqCombined, String),
  version    UInt64
)`;

/** sources_daily's partitions, sort key and granules, in every mode's migration: fragment sources_daily_layout. */
export const SOURCES_DAILY_LAYOUT = `PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, source, medium)
SETTINGS index_granularity = 64`;
