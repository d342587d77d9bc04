/** The visit dimensions visit_dims (migration 018) holds, each visit's value under the dimension's name. */
export const VISIT_DIMS = ['source', 'medium', 'campaign', 'channel', 'entry_path', 'exit_path'] as const;
export type VisitDim = (typeof VISIT_DIMS)[number];
/** visit_dims' rows of every visit of a day (value NULL): totals read one row a day instead of one per channel. */
export const VISIT_DIMS_ALL = 'all';
/** The dimension whose value splits the other dimensions' rows (their `channel` column). */
export const VISIT_DIMS_SPLIT = 'channel';

/**
 * visit_dims (migration 018): per (project, UTC day, visit dimension, value) the visits read whole on that day (their
 * only row in `visits`: bots left out, no visit_spans key on the day or a day beside it) as sums (visits, bounces,
 * duration in ms, pageviews, events) and their visitors' sketch. A day's rows are replaced whole (ReplacingMergeTree:
 * tombstones at version 2s, the day's answer at 2s + 1, read with FINAL) by the aggregate builder's keeper
 * (sources-daily-refresh.ts); visit_dims_days records the seq each day reflects. Fragment visit_dims_columns. With
 * dim 'all' (VISIT_DIMS_ALL), a day's row of all its visits read whole. The rows of every dimension but `channel` and
 * `all` are split by the visits' channel too (`channel`; '' on the others' rows), so a read filtered or grouped by
 * channel beside one other visit dimension sums them (the dashboard's AI assistants: visits by source where the
 * channel is ai_assistant); a source's visits lie in one or two channels, so the split adds few rows.
 */
export const VISIT_DIMS_TABLE_COLUMNS = `(
  project_id UUID,
  day        Date,
  dim        LowCardinality(String),
  value      Nullable(String),
  channel    LowCardinality(String),
  visits     UInt64,
  bounces    UInt64,
  duration   Int64,
  pageviews  UInt64,
  events     UInt64,
  uniques    AggregateFunction(uniqCombined, String),
  version    UInt64
)`;
