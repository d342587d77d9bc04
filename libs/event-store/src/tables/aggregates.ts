import { DAY_MS, SESSION_BUCKET_MS } from '@analytics/schema';
import { MAX_PARTITIONS_PER_INSERT } from '../primitives/lanes';
import { VISIT_KEY_SQL } from './event-keys';
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

const MS = "leftPad(toString(toUnixTimestamp64Milli(timestamp)), 15, '0')";
const len5 = (x: string) => `leftPad(toString(length(${x})), 5, '0')`;
/** The number at the end of an encoded string `e`, `back` 5-digit fields from its end (1 = the last). */
const tail = (e: string, back: number) => `toUInt32(substring(${e}, length(${e}) - ${5 * back - 1}, 5))`;

/**
 * A visit's entry (the `visits` aggregate, insights): one sortable string, so a plain `min` picks the first event in
 * the order /v1/sources and insights use (timestamp, length(source), source, medium), and source, medium, channel and
 * campaign all come from that ONE event:
 * '<15-digit epoch ms><5-digit length of source><source><medium>\0<channel><0 | 1 + campaign>' followed by the
 * 5-digit lengths of campaign, channel and medium (read from the end). The NUL after medium makes a medium that is a
 * prefix of another sort first, as in the tuple order (a medium holding a NUL byte could sort otherwise).
 */
export const VISIT_ENTRY = {
  encode: `concat(${MS}, ${len5('source')}, source, medium, '\\0', channel, if(campaign IS NULL, '0', concat('1', ifNull(campaign, ''))), ${len5("ifNull(campaign, '')")}, ${len5('channel')}, ${len5('medium')})`,
  source: (e: string) => `substring(${e}, 21, toUInt32(substring(${e}, 16, 5)))`,
  medium: (e: string) => `substring(${e}, 21 + toUInt32(substring(${e}, 16, 5)), ${tail(e, 1)})`,
  channel: (e: string) => `substring(${e}, 22 + toUInt32(substring(${e}, 16, 5)) + ${tail(e, 1)}, ${tail(e, 2)})`,
  campaign: (e: string) => {
    const at = `22 + toUInt32(substring(${e}, 16, 5)) + ${tail(e, 1)} + ${tail(e, 2)}`;
    return `if(substring(${e}, ${at}, 1) = '1', substring(${e}, ${at} + 1, ${tail(e, 3)}), NULL)`;
  },
} as const;

/**
 * A visit's first or last `$pageview` (the `visits` aggregate: min and max of it, NULL for events that are not
 * pageviews): '<15-digit epoch ms><event_id>\0<0 | 1 + path><5-digit length of event_id>', ordered as insights order
 * entry and exit pages, (timestamp, event_id).
 */
export const VISIT_PAGE = {
  encode: `if(event_name = '$pageview', concat(${MS}, event_id, '\\0', if(path IS NULL, '0', concat('1', ifNull(path, ''))), ${len5('event_id')}), NULL)`,
  path: (e: string) => `if(substring(${e}, 17 + ${tail(e, 1)}, 1) = '1', substring(${e}, 18 + ${tail(e, 1)}, length(${e}) - 22 - ${tail(e, 1)}), NULL)`,
} as const;

/**
 * A visit's home day, from its session id alone (so the same for all its events): the UTC day of the 30-minute bucket
 * the id ends with, as the server writes it (`<visitor id>-<bucket>`, the bucket the visit's first event's: a visit by
 * inactivity may run past midnight, up to 24 hours); 1970-01-01 for an id that ends with no number. At most one day of
 * a visit is its home day, so a visit with rows on two days has a row off it: OFF_HOME_DAY_SQL holds for that row's
 * events, and `visit_spans` lists the visit. A client's own session ids (`s-42`, a UUID) are listed on every day they
 * have events: read as before, never wrongly.
 * Migration 014's rule (its backfill, a fragment of its checksum): kept as it was; the builder's is VISIT_HOME_DAY_SQL.
 */
const VISIT_HOME_DAY_SQL_014 = `intDiv(toUInt64OrZero(substringIndex(session_id, '-', -1)), ${DAY_MS / SESSION_BUCKET_MS})`;

/**
 * A session id the server wrote: `<visitor id>-<bucket>`, the visitor id being the event's anonymous_id (its user_id
 * when it has none). Only those visits last at most 24 hours, so have rows on two adjacent days at most.
 */
const SERVER_SESSION_ID_SQL = "session_id = concat(if(anonymous_id != '', anonymous_id, ifNull(user_id, '')), '-', substringIndex(session_id, '-', -1))";

/**
 * A visit's home day since migration 018: 014's for a session id of the server's form, 1970-01-01 for any other (a
 * client's own id, even one whose number falls on a day of its events: listed on every day it has events). So a
 * visit `visit_spans` does not list on a day, nor the day before or after it, has its only row on that day, which is
 * all of the visit: visit_dims (migration 018) sums those visits per day.
 */
export const VISIT_HOME_DAY_SQL = `if(${SERVER_SESSION_ID_SQL}, ${VISIT_HOME_DAY_SQL_014}, 0)`;
export const OFF_HOME_DAY_SQL = `toUInt32(toDate(timestamp)) != ${VISIT_HOME_DAY_SQL}`;
const OFF_HOME_DAY_SQL_014 = `toUInt32(toDate(timestamp)) != ${VISIT_HOME_DAY_SQL_014}`;

/** The visitor sketch every aggregate keeps: uniqCombined over non-empty anonymous_id, so every path merges to the same registers. */
const UNIQUES_STATE = "uniqCombinedStateIf(anonymous_id, anonymous_id != '')";

/** The event dimensions daily_dims (migration 016) holds, each value of an event's under its dimension's name. */
export const DAILY_DIMS = ['path', 'browser', 'os', 'country', 'device_type'] as const;
/** An event's (dimension, value) pairs, one row each in daily_dims: `path` may be NULL, the others are strings. */
const DAILY_DIMS_SQL = `[${DAILY_DIMS.map((d) => `('${d}', ${d === 'path' ? 'path' : `toNullable(toString(${d}))`})`).join(', ')}]`;

/** A quarter hour in ms: quarter_hours' grain within a day. */
export const QUARTER_MS = 900_000;
/** An event's quarter hour of its UTC day, 0-95 (quarter_hours, migration 017). */
export const QUARTER_SLOT_SQL = `toUInt8(intDiv(toUnixTimestamp(timestamp) % ${DAY_MS / 1000}, ${QUARTER_MS / 1000}))`;

/** daily_rollup's grain: daily_uniques_by is built from a range's events folded to it. */
const ROLLUP_GRAIN = ['project_id', 'day', 'event_name', 'source', 'medium', 'country', 'device_type'];

/** One aggregate table as the SELECT that folds a set of events into its rows: its states, grouped by its grain. */
export interface Aggregate {
  table: 'daily_rollup' | 'daily_uniques' | 'daily_uniques_by' | 'daily_dims' | 'quarter_hours' | 'sessions' | 'visit_spans' | 'visits';
  /** The table's columns the SELECT fills, in its order (the builder adds built_seq). */
  columns: readonly string[];
  /** The SELECT list: the grain's columns and the states. */
  select: readonly string[];
  /** The grain: GROUP BY. */
  grain: readonly string[];
  /** What the SELECT reads instead of the events themselves, given the events table and a filter on them. */
  from?: (events: string, where: string) => string;
}

/**
 * The aggregates the builder folds each insert_seq range into, in this order (`visit_spans` before `visits`); on a
 * server before migration 012 the views of migrations 002/003 filled the first three.
 */
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
    // Insights' event dimensions one at a time (migration 016): per day, dimension, value and bot flag, the events,
    // pageviews and visitor sketch of the events with that value. The dashboard's lists by path, browser, os, country
    // and device type read a row per day and value instead of every event (insights.query.ts, fromDims).
    table: 'daily_dims',
    columns: ['project_id', 'day', 'dim', 'value', 'bot', 'events', 'pageviews', 'uniques'],
    from: (events, where) => `${events} ARRAY JOIN ${DAILY_DIMS_SQL} AS dv WHERE ${where}`,
    select: [
      'project_id',
      'toDate(timestamp) AS day',
      'dv.1 AS dim',
      'dv.2 AS value',
      "toUInt8(device_type = 'bot') AS bot",
      'count() AS events',
      "countIf(event_name = '$pageview') AS pageviews",
      `${UNIQUES_STATE} AS uniques`,
    ],
    grain: ['project_id', 'day', 'dim', 'value', 'bot'],
  },
  {
    // Insights' time buckets in any time zone (migration 017): per UTC day, quarter-hour slot of it (0-95) and bot
    // flag, the events, pageviews and visitor sketch of the events in that slot. Every zone's hours and days begin on a
    // quarter hour, so a slot lies in one bucket of any zone: the dashboard's chart by local day, week, month or hour
    // reads 96 rows a day instead of every event (insights.query.ts, fromQuarters).
    table: 'quarter_hours',
    columns: ['project_id', 'day', 'slot', 'bot', 'events', 'pageviews', 'uniques'],
    select: [
      'project_id',
      'toDate(timestamp) AS day',
      `${QUARTER_SLOT_SQL} AS slot`,
      "toUInt8(device_type = 'bot') AS bot",
      'count() AS events',
      "countIf(event_name = '$pageview') AS pageviews",
      `${UNIQUES_STATE} AS uniques`,
    ],
    grain: ['project_id', 'day', 'slot', 'bot'],
  },
  {
    table: 'sessions',
    columns: ['project_id', 'day', 'session_key', 'session_id', 'anonymous_id', 'entry', 'first_ts', 'last_ts', 'events', 'paid_events'],
    select: [
      'project_id',
      'toDate(timestamp) AS day',
      `${VISIT_KEY_SQL} AS session_key`,
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
  {
    // The visits that may have rows on more than one day (migration 014), written before `visits` in every range, so
    // that a read never sees a visit's row off its home day in `visits` without it here. Reads of `visits` take the
    // other visits' day rows whole (FINAL) and group per visit only these (insights.query.ts; docs/insights.md).
    table: 'visit_spans',
    columns: ['project_id', 'day', 'session_key'],
    from: (events, where) => `${events} WHERE (${where}) AND ${OFF_HOME_DAY_SQL}`,
    select: ['project_id', 'toDate(timestamp) AS day', `${VISIT_KEY_SQL} AS session_key`],
    grain: ['project_id', 'day', 'session_key'],
  },
  {
    // Insights' visits (migration 010): per day, session and bot flag, what a visit's metrics and visit dimensions
    // need. A range of whole days merges a session's rows of those days: the visit cut to the range, as insights count it.
    table: 'visits',
    columns: ['project_id', 'day', 'session_key', 'bot', 'anonymous_id', 'entry', 'entry_page', 'exit_page', 'first_ts', 'last_ts', 'events', 'pageviews'],
    select: [
      'project_id',
      'toDate(timestamp) AS day',
      `${VISIT_KEY_SQL} AS session_key`,
      "toUInt8(device_type = 'bot') AS bot",
      'anonymous_id',
      `min(${VISIT_ENTRY.encode}) AS entry`,
      `min(${VISIT_PAGE.encode}) AS entry_page`,
      `max(${VISIT_PAGE.encode}) AS exit_page`,
      'min(timestamp) AS first_ts',
      'max(timestamp) AS last_ts',
      'count() AS events',
      "countIf(event_name = '$pageview') AS pageviews",
    ],
    grain: ['project_id', 'day', 'session_id', 'anonymous_id', 'bot'],
  },
];

/** The figures daily_dims and quarter_hours keep per row (their tables' last columns), and the builder's built_seq. */
const EVENT_COUNTS_COLUMNS = `  events     SimpleAggregateFunction(sum, UInt64),
  pageviews  SimpleAggregateFunction(sum, UInt64),
  uniques    AggregateFunction(uniqCombined, String),
  built_seq  SimpleAggregateFunction(max, UInt64) DEFAULT 0`;

/** The daily_dims table (migration 016): per (project, day, dimension, value, bot flag) the events' counts and visitor sketch. */
export const DAILY_DIMS_TABLE_COLUMNS = `(
  project_id UUID,
  day        Date,
  dim        LowCardinality(String),
  value      Nullable(String),
  bot        UInt8,
${EVENT_COUNTS_COLUMNS}
)`;

/** The quarter_hours table (migration 017): per (project, UTC day, quarter-hour slot, bot flag) the events' counts and visitor sketch. */
export const QUARTER_HOURS_TABLE_COLUMNS = `(
  project_id UUID,
  day        Date,
  slot       UInt8,
  bot        UInt8,
${EVENT_COUNTS_COLUMNS}
)`;

/** The visit_spans table (migration 014): a visit's key per day it has a row off its home day on. */
export const VISIT_SPANS_TABLE_COLUMNS = `(
  project_id  UUID,
  day         Date,
  session_key UInt64,
  built_seq   SimpleAggregateFunction(max, UInt64) DEFAULT 0
)`;

/**
 * The visits table (migration 010: the same in its embedded/, server/ and clustered/ files, as the fragments
 * visits_columns and visits_column_names): the aggregate's columns with their types, and the builder's built_seq.
 */
export const VISITS_TABLE_COLUMNS = `(
  project_id   UUID,
  day          Date,
  session_key  UInt64,
  bot          UInt8,
  anonymous_id SimpleAggregateFunction(any, String),
  entry        SimpleAggregateFunction(min, String),
  entry_page   SimpleAggregateFunction(min, Nullable(String)),
  exit_page    SimpleAggregateFunction(max, Nullable(String)),
  first_ts     SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  last_ts      SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
  events       SimpleAggregateFunction(sum, UInt64),
  pageviews    SimpleAggregateFunction(sum, UInt64),
  built_seq    SimpleAggregateFunction(max, UInt64) DEFAULT 0
)`;

/** The visits aggregate's columns by name (migration 010's fragment visits_column_names; insights read them so too). */
export const VISITS_COLUMN_NAMES = aggregateOf('visits').columns.join(', ');

/** Migration 014's backfill of visit_spans (its fragment visit_spans_select): the rule of its time, VISIT_HOME_DAY_SQL_014. */
export const VISIT_SPANS_014_SELECT = (events: string) =>
  aggregateSelect({ ...aggregateOf('visit_spans'), from: (e, where) => `${e} WHERE (${where}) AND ${OFF_HOME_DAY_SQL_014}` }, events);

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
