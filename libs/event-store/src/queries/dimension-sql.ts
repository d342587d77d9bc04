import { type Goal, type InsightColumnDimension, type InsightCondition, type InsightDimension, type InsightTimeDimension, dimensionKind } from '@analytics/schema';
import { VISIT_ENTRY, VISIT_PAGE } from '../tables/aggregates';
import type { ReadTables } from '../tables/read-tables';

// The SQL of what a read names: its dimensions (event columns, visit entries and exits, properties, time buckets),
// goals and filter conditions, with every value bound. Insights, funnels, retention and properties build on it.

/** How the visits are ordered to find their entry: as /v1/sources (earliest event; ties by source length, source, medium). */
const ENTRY_ORDER = '(timestamp, length(source), source, medium)';

/**
 * Every column dimension's SQL (the catalog's COLUMN_DIMENSIONS in libs/schema: its names, kinds, meanings and finite
 * values; keyed by them, so a dimension added there without its SQL here is a compile error):
 * - `sql`: an `event` dimension's expression over one event row, a `visit` dimension's aggregate over the visit's
 *   events (its entry or exit). Nullable values go into a tuple (aggregates skip NULLs).
 * - `columns`: the columns of `events` that `sql` reads.
 * - `visits`: a visit dimension's SQL over a visit merged from the `visits` aggregate (migration 010): `ent` its
 *   min(entry), `enp` its min(entry_page), `exp` its max(exit_page); the same values as `sql` over the visit's events.
 */
export const DIMENSION_SQL: Record<InsightColumnDimension, { sql: string; columns: readonly string[]; visits?: { sql: string; reads: 'ent' | 'enp' | 'exp' } }> = {
  event_name: { sql: 'event_name', columns: ['event_name'] },
  source: { sql: `argMin(source, ${ENTRY_ORDER})`, columns: ['source', 'medium'], visits: { sql: VISIT_ENTRY.source('ent'), reads: 'ent' } },
  medium: { sql: `argMin(medium, ${ENTRY_ORDER})`, columns: ['source', 'medium'], visits: { sql: VISIT_ENTRY.medium('ent'), reads: 'ent' } },
  campaign: { sql: `argMin(tuple(campaign), ${ENTRY_ORDER}).1`, columns: ['source', 'medium', 'campaign'], visits: { sql: VISIT_ENTRY.campaign('ent'), reads: 'ent' } },
  channel: { sql: `argMin(channel, ${ENTRY_ORDER})`, columns: ['source', 'medium', 'channel'], visits: { sql: VISIT_ENTRY.channel('ent'), reads: 'ent' } },
  country: { sql: 'country', columns: ['country'] },
  device_type: { sql: 'device_type', columns: ['device_type'] },
  browser: { sql: 'browser', columns: ['browser'] },
  os: { sql: 'os', columns: ['os'] },
  path: { sql: 'path', columns: ['path'] },
  entry_path: { sql: "argMinIf(tuple(path), (timestamp, event_id), event_name = '$pageview').1", columns: ['path'], visits: { sql: VISIT_PAGE.path('enp'), reads: 'enp' } },
  exit_path: { sql: "argMaxIf(tuple(path), (timestamp, event_id), event_name = '$pageview').1", columns: ['path'], visits: { sql: VISIT_PAGE.path('exp'), reads: 'exp' } },
};
export const VISITS_MERGE = { ent: 'min(entry) AS ent', enp: 'min(entry_page) AS enp', exp: 'max(exit_page) AS exp' } as const;
/** The same columns of a visit's one row (read with FINAL: a visit `visit_spans` does not list has one row a day). */
export const VISITS_ROW = { ent: 'entry AS ent', enp: 'entry_page AS enp', exp: 'exit_page AS exp' } as const;

/**
 * A visit dimension's value from the `visits` aggregate over the range's whole UTC days ({from_day}, {to_day}): `rows`
 * are its rows of those days (`vkey` = session_key, cityHash64(session_id, anonymous_id), and the column the value is
 * merged from); grouped per visit, `merge` then `value` give the value of the visit cut to the range. Undefined for a
 * dimension the aggregate does not hold.
 */
export function visitValueOf(tables: ReadTables, d: InsightDimension, includeBots: boolean): { rows: string; merge: string; value: string } | undefined {
  const v = DIMENSION_SQL[d as InsightColumnDimension]?.visits;
  if (!v) return undefined;
  const column = { ent: 'entry', enp: 'entry_page', exp: 'exit_page' }[v.reads];
  return {
    rows: `SELECT session_key AS vkey, ${column} FROM ${tables.visits} WHERE project_id = {project:UUID} AND day >= {from_day:Date} AND day < {to_day:Date}${includeBots ? '' : ' AND bot = 0'}`,
    merge: VISITS_MERGE[v.reads],
    value: v.sql,
  };
}

/** The time buckets' SQL over `ts` (the event's time, moved by a period under compare). */
export const TIME_SQL: Record<InsightTimeDimension, string> = { 'time:hour': 'toStartOfHour(ts)', 'time:day': 'toDate(ts)', 'time:week': 'toMonday(ts)', 'time:month': 'toStartOfMonth(ts)' };
/**
 * The time buckets in the read's time zone (issue 47), bound as `{tz:String}`: the local hour, date, Monday and first
 * of the month. Days of 23 or 25 hours are one bucket each; Asia/Kolkata's hours start at :30 UTC.
 */
export const ZONED_TIME_SQL: Record<InsightTimeDimension, string> = {
  'time:hour': 'toStartOfHour(ts, {tz:String})',
  'time:day': 'toDate(ts, {tz:String})',
  'time:week': 'toMonday(ts, {tz:String})',
  'time:month': 'toStartOfMonth(ts, {tz:String})',
};

/** What a read counts in beside its input (libs/schema's time-zone.ts): its time zone (default UTC) and, for insights, now. */
export interface ReadOptions {
  timezone?: string;
  /** The time of the request in ms (insights: a range that includes now is compared like for like). Default Date.now(). */
  now?: number;
}

export type Query = { sql: string; params: Record<string, unknown> };

/**
 * A property's value as a string: strings as themselves, other JSON values as their JSON text, absent or null as NULL.
 * Read from `properties_map` (migration 009: the `properties` JSON as a map, computed at INSERT, null-valued keys left
 * out), not parsed from the JSON per row. `arrayElementOrNull` answers NULL for an absent key (an empty string for an
 * empty value): per 1M events it reads a property in ~23 ms CPU grouped, as a LowCardinality column, against ~41 ms
 * for `if(has(mapKeys(m), k), m[k], NULL)` and ~130 ms for JSONExtractRaw (BENCHMARKS.md, "Insights"). With the
 * constant key '' it (as `m['']` and mapContains) misses the empty key of a stored Map(LowCardinality(String), ...)
 * (ClickHouse 26.7); a non-constant key finds it. The API never asks for '' (keys have 1 character at least), but it
 * is read right all the same: the `if` on the bound key is decided once per block, not per row.
 */
export const propSql = (k: string) =>
  `if({${k}:String} = '', arrayElementOrNull(properties_map, materialize({${k}:String})), arrayElementOrNull(properties_map, {${k}:String}))`;

export class Builder {
  readonly params: Record<string, unknown> = {};
  private readonly propKeys = new Map<string, string>();
  /** Visit dimensions the query reads (grouped or filtered), each a column `vd<i>` of the visit rows. */
  readonly visitDims: InsightColumnDimension[] = [];
  readonly columns = new Set(['timestamp', 'event_name', 'anonymous_id', 'session_id']);
  private filters = 0;
  private goals = 0;

  /** `tz`: the time zone name, bound as {tz:String} for the time buckets; undefined (UTC) keeps the UTC SQL. */
  constructor(readonly tz?: string) {
    if (tz !== undefined) this.params.tz = tz;
  }

  /** The SQL of a dimension's value for one (joined) event row. */
  value(d: InsightDimension): string {
    if (d.startsWith('prop:')) {
      const key = d.slice(5);
      let name = this.propKeys.get(key);
      if (!name) {
        name = `k${this.propKeys.size}`;
        this.propKeys.set(key, name);
        this.params[name] = key;
      }
      this.columns.add('properties_map');
      return propSql(name);
    }
    if (d in TIME_SQL) return (this.tz === undefined ? TIME_SQL : ZONED_TIME_SQL)[d as InsightTimeDimension];
    const c = d as InsightColumnDimension;
    if (dimensionKind(c) === 'visit') {
      let i = this.visitDims.indexOf(c);
      if (i < 0) i = this.visitDims.push(c) - 1;
      return `vd${i}`;
    }
    for (const col of DIMENSION_SQL[c].columns) this.columns.add(col);
    return DIMENSION_SQL[c].sql;
  }

  /** The SQL that holds for an event (joined row) completing the goal: its name, its path (exact or prefix), its filters. */
  goal(g: Goal): string {
    const name = `g${this.goals++}`;
    const parts: string[] = [];
    if (g.event !== undefined) {
      this.params[`${name}e`] = g.event;
      parts.push(`event_name = {${name}e:String}`);
    }
    if (g.path !== undefined) {
      this.params[`${name}p`] = g.path;
      this.columns.add('path');
      parts.push(g.prefix ? `ifNull(startsWith(path, {${name}p:String}), 0)` : `ifNull(path = {${name}p:String}, 0)`);
    }
    parts.push(...g.filters.map((c) => this.condition(c)));
    return `(${parts.join(' AND ')})`;
  }

  condition(c: InsightCondition): string {
    if (c.op === 'or') return `(${c.conditions.map((x) => this.condition(x)).join(' OR ')})`;
    const name = `f${this.filters++}`;
    this.params[name] = c.values;
    const x = this.value(c.dimension);
    switch (c.op) {
      case 'is':
        return `has({${name}:Array(String)}, ${x})`;
      case 'is_not':
        return `NOT has({${name}:Array(String)}, ${x})`;
      case 'contains':
        return `ifNull(multiSearchAny(${x}, {${name}:Array(String)}), 0)`;
      case 'not_contains':
        return `NOT ifNull(multiSearchAny(${x}, {${name}:Array(String)}), 0)`;
    }
  }
}

/** Whether SQL the Builder made (a condition, a goal) reads a visit dimension: a `vd<i>` column of the visit rows. */
export const namesVisitDimension = (sql: string) => /\bvd\d+\b/.test(sql);
export const dimensionsOf = (c: InsightCondition): InsightDimension[] => (c.op === 'or' ? c.conditions.flatMap(dimensionsOf) : [c.dimension]);
