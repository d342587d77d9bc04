import { addDays } from './session-days';

/** sources_daily's columns, in every mode's migration (embedded 005, server and clustered 012), and sources_weekly's (013, `day` its Monday): fragment sources_daily_columns. */
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

/**
 * A day of sources_daily as a read finds it: `fresh` (its row reflects every event built so far that touches it or a
 * neighbour: a session of day d is merged over days d-1..d+1), `stale` (a build touched it or a neighbour after its
 * refresh, or it was never refreshed) or `empty` (no built event within a day of it: no session began on it).
 */
export type SourceDayState = 'fresh' | 'stale' | 'empty';

/** What decides the states: per day, daily_uniques' highest built_seq (every built event has a row of its day) and sources_daily_days'. */
export interface SourceDaySeqs {
  touched: ReadonlyMap<string, number>;
  built: ReadonlyMap<string, number>;
}

/** The tables the seqs are read from (ReadTables' names, or the keeper's own). */
export interface SourceSeqTables {
  dailyUniques: string;
  /** The table recording, per day, the seq its refresh reflects (sources_daily_days, visit_dims_days). */
  refreshedDays: string;
  /** With it, the weeks' seqs too (`merged`). */
  sourcesWeeklyWeeks?: string;
}

/**
 * The seqs of the days [fromDay, toDay) (daily_uniques' from the day before to toDay: a day's neighbours decide it) and
 * of the weeks whose Monday is among them, in one statement that `run` executes: what both the reads (planSourceDays)
 * and the keeper (before it merges a week) decide the days' states with.
 */
export async function readSourceDaySeqs(
  run: <T>(sql: string, params: Record<string, unknown>) => Promise<T[]>,
  tables: SourceSeqTables,
  projectId: string,
  fromDay: string,
  toDay: string,
): Promise<SourceDaySeqs & { merged: ReadonlyMap<string, number> }> {
  const seqs = (table: string, kind: number, range: string) =>
    `SELECT toString(day) AS d, ${kind} AS kind, max(built_seq) AS seq FROM ${table} WHERE project_id = {p:UUID} AND ${range} GROUP BY day`;
  const inRange = 'day >= {from:Date} AND day < {to:Date}';
  const sql = [
    seqs(tables.dailyUniques, 1, 'day >= {touch_from:Date} AND day <= {touch_to:Date}'),
    seqs(tables.refreshedDays, 2, inRange),
    ...(tables.sourcesWeeklyWeeks ? [seqs(tables.sourcesWeeklyWeeks, 3, inRange)] : []),
  ].join('\nUNION ALL\n');
  const rows = await run<{ d: string; kind: number | string; seq: string | number }>(sql, { p: projectId, touch_from: addDays(fromDay, -1), touch_to: toDay, from: fromDay, to: toDay });
  const out = { touched: new Map<string, number>(), built: new Map<string, number>(), merged: new Map<string, number>() };
  for (const r of rows) [out.touched, out.built, out.merged][Number(r.kind) - 1]!.set(r.d, Number(r.seq));
  return out;
}

/** The state of `day` (see SourceDayState). */
export function sourceDayState(day: string, seqs: SourceDaySeqs): SourceDayState {
  const near = [addDays(day, -1), day, addDays(day, 1)].filter((d) => seqs.touched.has(d));
  if (near.length === 0) return 'empty';
  const at = seqs.built.get(day);
  return at !== undefined && near.every((d) => seqs.touched.get(d)! <= at) ? 'fresh' : 'stale';
}

/**
 * Whether the week from `monday` (7 days) can be merged into, or read from, sources_weekly: each day is
 * fresh, or empty with no sources_daily row; at least one is fresh. The week's answer is then the sum of its days'
 * (sessions belong to the day of their first event), and `seq` the highest seq its days reflect.
 */
export function mergeableWeek(monday: string, seqs: SourceDaySeqs): { seq: number } | undefined {
  let seq = -1;
  for (const day of weekDays(monday)) {
    const state = sourceDayState(day, seqs);
    if (state === 'stale' || (state === 'empty' && seqs.built.has(day))) return undefined;
    if (state === 'fresh') seq = Math.max(seq, seqs.built.get(day)!);
  }
  return seq < 0 ? undefined : { seq };
}

/** The 7 days of the ISO week from `monday`. */
export const weekDays = (monday: string): string[] => Array.from({ length: 7 }, (_, i) => addDays(monday, i));

/** Whether `day` ('YYYY-MM-DD', UTC) is a Monday. */
export const isMonday = (day: string): boolean => new Date(`${day}T00:00:00Z`).getUTCDay() === 1;

/** The Monday of `day`'s ISO week. */
export const mondayOf = (day: string): string => addDays(day, -((new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7));
