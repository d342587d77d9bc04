import { DAY_MS, type EventRow, type Goal, type InsightCondition, type InsightDimension, type InsightMetric, type InsightsQuery, type InsightsRow, LIMITS } from '@analytics/schema';

// POST /v1/insights recomputed in plain TypeScript from the stored rows, from docs/insights.md meanings alone.

const msOf = (row: EventRow) => Date.parse(`${row.timestamp.replace(' ', 'T')}Z`);
const fmt = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
type Cell = string | null;

/** ClickHouse's order of our strings (bytes; ASCII here); NULL after every value in both directions (NULLS LAST). */
const compareStrings = (a: string, b: string) => (a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b)));

export interface Visit {
  events: EventRow[];
  n: number;
  pv: number;
  durMs: number;
  entry: EventRow;
  entryPath: Cell;
  exitPath: Cell;
}

/** The entry order of /v1/sources: earliest, then shorter source (bytes), then source, then medium. */
function entryBefore(a: EventRow, b: EventRow): boolean {
  const d = msOf(a) - msOf(b) || Buffer.byteLength(a.source) - Buffer.byteLength(b.source) || compareStrings(a.source, b.source) || compareStrings(a.medium, b.medium);
  return d < 0;
}
const byTimeThenId = (a: EventRow, b: EventRow) => msOf(a) - msOf(b) || compareStrings(a.event_id, b.event_id);

export function visitOf(events: EventRow[]): Visit {
  const pageviews = events.filter((e) => e.event_name === '$pageview').sort(byTimeThenId);
  const times = events.map(msOf);
  return {
    events,
    n: events.length,
    pv: pageviews.length,
    durMs: Math.max(...times) - Math.min(...times),
    entry: events.reduce((best, e) => (entryBefore(e, best) ? e : best)),
    entryPath: pageviews[0]?.path ?? null,
    exitPath: pageviews.at(-1)?.path ?? null,
  };
}

export function propValue(row: EventRow, key: string): Cell {
  const props = JSON.parse(row.properties) as Record<string, unknown>;
  if (!Object.prototype.hasOwnProperty.call(props, key) || props[key] === null) return null;
  const v = props[key];
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function bucket(ms: number, grain: string): string {
  if (grain === 'hour') return fmt(ms - (ms % 3_600_000));
  const day = ms - (ms % DAY_MS);
  if (grain === 'day') return fmt(day);
  if (grain === 'week') return fmt(day - ((new Date(day).getUTCDay() + 6) % 7) * DAY_MS);
  const d = new Date(day);
  return fmt(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
}

/** A dimension's value for one event of a visit; `shift`: added to time buckets (the previous period's events). */
function valueOf(d: InsightDimension, e: EventRow, v: Visit, shift: number): Cell {
  if (d.startsWith('prop:')) return propValue(e, d.slice(5));
  if (d.startsWith('time:')) return bucket(msOf(e) + shift, d.slice(5));
  switch (d) {
    case 'source':
      return v.entry.source;
    case 'medium':
      return v.entry.medium;
    case 'campaign':
      return v.entry.campaign;
    case 'channel':
      return v.entry.channel;
    case 'entry_path':
      return v.entryPath;
    case 'exit_path':
      return v.exitPath;
    default:
      return e[d as 'event_name' | 'country' | 'device_type' | 'browser' | 'os' | 'path'];
  }
}

export function holds(c: InsightCondition, e: EventRow, v: Visit): boolean {
  if (c.op === 'or') return c.conditions.some((x) => holds(x, e, v));
  const x = valueOf(c.dimension, e, v, 0);
  switch (c.op) {
    case 'is':
      return x !== null && c.values.includes(x);
    case 'is_not':
      return x === null || !c.values.includes(x);
    case 'contains':
      return x !== null && c.values.some((s) => x.includes(s));
    case 'not_contains':
      return x === null || !c.values.some((s) => x.includes(s));
  }
}

/** Whether an event (of visit v) completes the goal: docs/conversions.md. */
export function completes(g: Goal, e: EventRow, v: Visit): boolean {
  if (g.event !== undefined && e.event_name !== g.event) return false;
  if (g.path !== undefined && (e.path === null || (g.prefix ? !e.path.startsWith(g.path) : e.path !== g.path))) return false;
  return g.filters.every((c) => holds(c, e, v));
}

/** The visits (session_id, anonymous_id) of the project's events in [from, to), bots left out unless asked. */
export function visitsOf(rows: EventRow[], projectId: string, from: number, to: number, includeBots: boolean): Visit[] {
  const visits = new Map<string, EventRow[]>();
  for (const r of rows) {
    const ms = msOf(r);
    if (r.project_id !== projectId || ms < from || ms >= to || (!includeBots && r.device_type === 'bot')) continue;
    const key = JSON.stringify([r.session_id, r.anonymous_id]);
    visits.set(key, [...(visits.get(key) ?? []), r]);
  }
  return [...visits.values()].map(visitOf);
}
export { msOf, valueOf };

interface Group {
  cells: Cell[];
  events: number;
  pageviews: number;
  anons: Set<string>;
  converted: Set<string>;
  visits: Set<Visit>;
}

/** Every group of one period: the matching events of each visit under their dimension values. */
function groupsOf(rows: EventRow[], projectId: string, q: InsightsQuery, from: number, to: number, shift: number): Map<string, Group> {
  const groups = new Map<string, Group>();
  for (const v of visitsOf(rows, projectId, from, to, q.include_bots)) {
    for (const e of v.events) {
      if (!q.filters.every((c) => holds(c, e, v))) continue;
      const cells = q.dimensions.map((d) => valueOf(d, e, v, shift));
      const key = JSON.stringify(cells);
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { cells, events: 0, pageviews: 0, anons: new Set(), converted: new Set(), visits: new Set() }));
      g.events++;
      if (e.event_name === '$pageview') g.pageviews++;
      if (e.anonymous_id !== '') g.anons.add(e.anonymous_id);
      if (e.anonymous_id !== '' && q.goal && completes(q.goal, e, v)) g.converted.add(e.anonymous_id);
      g.visits.add(v);
    }
  }
  return groups;
}

function metricOf(m: InsightMetric, g: Group | undefined): number {
  if (!g) return 0;
  const vs = [...g.visits];
  const per = (sum: number) => (vs.length === 0 ? 0 : sum / vs.length);
  switch (m) {
    case 'events':
      return g.events;
    case 'pageviews':
      return g.pageviews;
    case 'visitors':
      return g.anons.size;
    case 'visits':
      return vs.length;
    case 'bounce_rate':
      return per(vs.filter((v) => v.n === 1 && v.pv === 1).length);
    case 'visit_duration':
      return per(vs.reduce((s, v) => s + v.durMs, 0)) / 1000;
    case 'views_per_visit':
      return per(vs.reduce((s, v) => s + v.pv, 0));
    case 'conversions':
      return g.converted.size;
    case 'conversion_rate':
      return g.anons.size === 0 ? 0 : g.converted.size / g.anons.size;
  }
}

/**
 * The answer of POST /v1/insights. With compare, the previous period is the range of the same length before `from`; when
 * the range includes `now` (issue 47, like for like), only as long as from..now; `compare_range` names it.
 */
export function expectedInsights(rows: EventRow[], projectId: string, q: InsightsQuery, now = Date.now()): { rows: InsightsRow[]; compare_range?: { from: string; to: string }; annotations?: [] } {
  const span = q.to - q.from;
  const current = groupsOf(rows, projectId, q, q.from, q.to, 0);
  const lo = Math.max(q.from - span, LIMITS.timestamp.min);
  const hi = q.to > now ? Math.max(lo, Math.min(q.from, q.from - span + Math.min(Math.max(now - q.from, 0), span))) : q.from;
  const previous = q.compare ? groupsOf(rows, projectId, q, lo, hi, span) : undefined;
  if (q.dimensions.length === 0 && current.size === 0) current.set('[]', { cells: [], events: 0, pageviews: 0, anons: new Set(), converted: new Set(), visits: new Set() });
  const out = [...current.entries()].map(([key, g]) => {
    const row: InsightsRow = {};
    q.dimensions.forEach((d, i) => (row[d] = g.cells[i]!));
    for (const m of q.metrics) row[m] = metricOf(m, g);
    if (previous) row.comparison = Object.fromEntries(q.metrics.map((m) => [m, metricOf(m, previous.get(key))]));
    return row;
  });
  const order: Array<[string, 'asc' | 'desc']> = [...(q.order_by ?? [[q.metrics[0]!, 'desc']])];
  for (const d of q.dimensions) if (!order.some(([n]) => n === d)) order.push([d, 'asc']);
  out.sort((a, b) => {
    for (const [name, dir] of order) {
      const x = a[name] as Cell | number;
      const y = b[name] as Cell | number;
      if (x === y) continue;
      if (x === null) return 1;
      if (y === null) return -1;
      const c = typeof x === 'number' ? x - (y as number) : compareStrings(x, y as string);
      if (c !== 0) return dir === 'asc' ? c : -c;
    }
    return 0;
  });
  // A time series answers the range's annotations beside its rows (issue 48): the seeded projects have none.
  const series = q.dimensions.some((d) => d.startsWith('time:'));
  return { rows: out.slice(0, q.limit), ...(q.compare ? { compare_range: { from: new Date(lo).toISOString(), to: new Date(hi).toISOString() } } : {}), ...(series ? { annotations: [] as [] } : {}) };
}

/**
 * GET /v1/properties from the raw events: every stored event of the range (bots included, optionally one event name);
 * without `key` the top-level keys with the events having each, with it the key's values (as prop:<key> reads them,
 * absent and null left out) with their events. Most used first, ties ascending; at most `limit` rows.
 */
export function expectedProperties(rows: EventRow[], projectId: string, p: { from: number; to: number; event?: string; key?: string }, limit = 1000) {
  const counts = new Map<string, number>();
  for (const r of rows) {
    const ms = Date.parse(`${r.timestamp.replace(' ', 'T')}Z`);
    if (r.project_id !== projectId || ms < p.from || ms >= p.to || (p.event !== undefined && r.event_name !== p.event)) continue;
    const cells = p.key === undefined ? Object.keys(JSON.parse(r.properties) as object) : [propValue(r, p.key)];
    for (const c of cells) if (c !== null) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).slice(0, limit);
  return { rows: sorted.map(([c, events]) => (p.key === undefined ? { key: c, events } : { value: c, events })) };
}
