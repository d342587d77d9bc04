import { MAX_PARTITIONS_PER_INSERT } from './insert-rows';
import { UNIQUES_BY_GROUPINGS_SQL } from './uniques-by';

/**
 * A merged session's first event as one sortable string, so a plain `min` picks it (a String min merges faster than
 * argMin states or a min over a tuple): '<15-digit epoch ms><5-digit byte length of source><source><medium>'.
 * Source and medium always come from ONE event; millisecond ties go to the shorter, then lower, source.
 */
export const SESSION_ENTRY = {
  /** The entry of one event (sessions.entry is the min of it). */
  encode: "concat(leftPad(toString(toUnixTimestamp64Milli(timestamp)), 15, '0'), leftPad(toString(length(source)), 5, '0'), source, medium)",
  /** The source of a merged entry held in the column `entry`. */
  source: (entry: string) => `substring(${entry}, 21, toUInt32(substring(${entry}, 16, 5)))`,
  /** The medium of a merged entry held in the column `entry`. */
  medium: (entry: string) => `substring(${entry}, 21 + toUInt32(substring(${entry}, 16, 5)))`,
} as const;

/** The visitor sketch every aggregate keeps: uniqCombined over non-empty anonymous_id, so every path merges to the same registers. */
const UNIQUES_STATE = "uniqCombinedStateIf(anonymous_id, anonymous_id != '')";

/** daily_rollup's grain: daily_uniques_by is built from a range's events folded to it. */
const ROLLUP_GRAIN = ['project_id', 'day', 'event_name', 'source', 'medium', 'country', 'device_type'];

/** One aggregate table as the SELECT that folds a set of events into its rows: its states, grouped by its grain. */
export interface Aggregate {
  table: 'daily_rollup' | 'daily_uniques' | 'daily_uniques_by' | 'sessions';
  /** The table's columns the SELECT fills, in its order (the builder adds built_seq). */
  columns: readonly string[];
  /** The SELECT list: the grain's columns and the states. */
  select: readonly string[];
  /** The grain: GROUP BY. */
  grain: readonly string[];
  /** What the SELECT reads instead of the events themselves, given the events table and a filter on them. */
  from?: (events: string, where: string) => string;
}

/** The aggregates the builder folds each insert_seq range into; on a server the views of migrations 002/003 fill the first three. */
export const AGGREGATES: readonly Aggregate[] = [
  {
    table: 'daily_rollup',
    columns: [...ROLLUP_GRAIN, 'events', 'uniques'],
    select: ['project_id', 'toDate(timestamp) AS day', 'event_name', 'source', 'medium', 'country', 'device_type', 'count() AS events', `${UNIQUES_STATE} AS uniques`],
    grain: ROLLUP_GRAIN,
  },
  {
    table: 'daily_uniques',
    columns: ['project_id', 'day', 'event_name', 'uniques'],
    select: ['project_id', 'toDate(timestamp) AS day', 'event_name', `${UNIQUES_STATE} AS uniques`],
    grain: ['project_id', 'day', 'event_name'],
  },
  {
    // The events folded to daily_rollup's grain first (one small sketch per grain row), then each grain row emitted
    // once per grouping it counts in: expanding the events themselves held every expanded row in memory at once.
    table: 'daily_uniques_by',
    columns: ['project_id', 'day', 'event_name', 'dim', 'dim_value', 'uniques'],
    from: (events, where) =>
      `(SELECT project_id, toDate(timestamp) AS day, event_name, source, medium, country, device_type, ${UNIQUES_STATE} AS u FROM ${events} WHERE ${where} GROUP BY ${ROLLUP_GRAIN.join(', ')}) ARRAY JOIN ${UNIQUES_BY_GROUPINGS_SQL} AS t`,
    select: ['project_id', 'day', 't.1 AS by_event', 't.2 AS by_dim', 't.3 AS by_value', 'uniqCombinedMergeState(u) AS uniques'],
    grain: ['project_id', 'day', 'by_event', 'by_dim', 'by_value'],
  },
  {
    table: 'sessions',
    columns: ['project_id', 'day', 'session_key', 'session_id', 'anonymous_id', 'entry', 'first_ts', 'last_ts', 'events', 'paid_events'],
    select: [
      'project_id',
      'toDate(timestamp) AS day',
      'cityHash64(session_id, anonymous_id) AS session_key',
      'session_id',
      'anonymous_id',
      `min(${SESSION_ENTRY.encode}) AS entry`,
      'min(timestamp) AS first_ts',
      'max(timestamp) AS last_ts',
      'count() AS events',
      "countIf(medium = 'paid') AS paid_events",
    ],
    grain: ['project_id', 'day', 'session_id', 'anonymous_id'],
  },
];

/** The SELECT of an aggregate over `events` (all of them, as a view sees each INSERT's block, or those matching `where`), plus `extra` columns. */
export function aggregateSelect(a: Aggregate, events: string, where?: string, extra: readonly string[] = []): string {
  const from = a.from ? a.from(events, where ?? '1') : `${events}${where ? ` WHERE ${where}` : ''}`;
  return `SELECT ${[...a.select, ...extra].join(', ')} FROM ${from} GROUP BY ${a.grain.join(', ')}`;
}

export function aggregateOf(table: Aggregate['table']): Aggregate {
  return AGGREGATES.find((a) => a.table === table)!;
}

/**
 * Settings of an INSERT ... SELECT that must write ONE part per month partition (a part is committed atomically): its
 * output squashed into a single block, one insert thread, no deduplication of a retried block.
 */
export const ONE_BLOCK_SETTINGS = 'min_insert_block_size_rows = 1000000000000, min_insert_block_size_bytes = 1000000000000, max_insert_threads = 1, insert_deduplicate = 0';

/** The builder's INSERTs: one block over every month an insert may touch, on one thread (a bounded share of the cores). */
export const BUILD_SETTINGS = `max_partitions_per_insert_block = ${MAX_PARTITIONS_PER_INSERT}, ${ONE_BLOCK_SETTINGS}, max_threads = 1`;
