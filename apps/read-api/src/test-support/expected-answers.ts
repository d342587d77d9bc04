import { DAY_MS, type EventRow, type QueryParams, type SourcesParams, type StatsGroupBy, type StatsParams } from '@analytics/schema';

// The read endpoints' answers recomputed in plain TypeScript from the enriched rows, to compare with the service.

const msOf = (row: EventRow) => Date.parse(`${row.timestamp.replace(' ', 'T')}Z`);
const fmt = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
type Cell = string | null;

/** ClickHouse's order for our values: strings by bytes (ASCII here), NULL after every string when ascending. */
function compareCells(a: Cell, b: Cell): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

const inRange = (ms: number, p: { from: number; to: number }) => ms >= p.from && ms < p.to;

export function expectedQuery(rows: EventRow[], projectId: string, p: QueryParams) {
  return rows
    .filter((r) => r.project_id === projectId && inRange(msOf(r), p))
    .filter((r) => (p.event === undefined || r.event_name === p.event) && (p.source === undefined || r.source === p.source))
    .filter((r) => (p.medium === undefined || r.medium === p.medium) && (p.user_id === undefined || r.user_id === p.user_id))
    .sort((a, b) => msOf(b) - msOf(a) || compareCells(b.event_id, a.event_id))
    .slice(0, p.limit)
    .map((r) => ({
      timestamp: new Date(msOf(r)).toISOString(),
      event_name: r.event_name,
      anonymous_id: r.anonymous_id,
      user_id: r.user_id,
      source: r.source,
      medium: r.medium,
      campaign: r.campaign,
      source_confidence: r.source_confidence,
      referrer: r.referrer,
      url: r.url,
      path: r.path,
      country: r.country,
      device_type: r.device_type,
      properties: r.properties,
      event_id: r.event_id,
      session_id: r.session_id,
      channel: r.channel,
      browser: r.browser,
      os: r.os,
    }));
}

function bucketOf(ms: number, interval: NonNullable<StatsParams['interval']>): string {
  if (interval === 'hour') return fmt(ms - (ms % 3_600_000));
  const day = ms - (ms % DAY_MS);
  if (interval === 'day') return fmt(day);
  const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday = 0
  return fmt(day - weekday * DAY_MS);
}

export type ExpectedStatsRow = Record<string, Cell | number>;

export function expectedStats(rows: EventRow[], projectId: string, p: StatsParams, groupBy: StatsGroupBy[]): { metric: string; rows: ExpectedStatsRow[] } {
  const groups = new Map<string, { cells: Cell[]; count: number; anons: Set<string> }>();
  for (const r of rows) {
    const ms = msOf(r);
    if (r.project_id !== projectId || !inRange(ms, p) || (p.event !== undefined && r.event_name !== p.event)) continue;
    const cells: Cell[] = [...(p.interval ? [bucketOf(ms, p.interval)] : []), ...groupBy.map((c) => r[c])];
    const key = JSON.stringify(cells);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { cells, count: 0, anons: new Set() }));
    g.count++;
    if (r.anonymous_id !== '') g.anons.add(r.anonymous_id);
  }
  // Without group_by and interval the answer is one row, even over no events.
  if (groups.size === 0 && groupBy.length === 0 && !p.interval) groups.set('[]', { cells: [], count: 0, anons: new Set() });
  const names = [...(p.interval ? ['bucket'] : []), ...groupBy];
  const out = [...groups.values()].map((g) => ({ cells: g.cells, value: p.metric === 'count' ? g.count : g.anons.size }));
  const b = p.interval ? 1 : 0;
  out.sort((x, y) => {
    if (b && x.cells[0] !== y.cells[0]) return compareCells(x.cells[0]!, y.cells[0]!);
    if (x.value !== y.value) return y.value - x.value;
    for (let i = b; i < x.cells.length; i++) {
      const c = compareCells(x.cells[i]!, y.cells[i]!);
      if (c !== 0) return c;
    }
    return 0;
  });
  return {
    metric: p.metric,
    rows: out.slice(0, p.limit).map((o) => ({ ...Object.fromEntries(names.map((n, i) => [n, o.cells[i]!])), value: o.value })),
  };
}

/** A session's entry event: earliest timestamp; ties to the shorter, then lower, source, then lower medium. */
const entryKey = (r: EventRow) => `${String(msOf(r)).padStart(15, '0')}${String(Buffer.byteLength(r.source)).padStart(5, '0')}${r.source}${r.medium}`;

export function expectedSources(rows: EventRow[], projectId: string, p: SourcesParams) {
  type Session = { anon: string; entry: EventRow; first: number; events: number };
  const sessions = new Map<string, Session>();
  for (const r of rows) {
    if (r.project_id !== projectId) continue;
    // include_bots=false: a session is its events that are not bots' (entered by the first of them).
    if (!p.include_bots && r.device_type === 'bot') continue;
    const key = JSON.stringify([r.session_id, r.anonymous_id]);
    const ms = msOf(r);
    const s = sessions.get(key);
    if (!s) {
      sessions.set(key, { anon: r.anonymous_id, entry: r, first: ms, events: 1 });
      continue;
    }
    s.events++;
    if (entryKey(r) < entryKey(s.entry)) s.entry = r;
    s.first = Math.min(s.first, ms);
  }
  const withMedium = p.breakdown === 'source_medium';
  const groups = new Map<string, { source: string; medium: string; events: number; paid: number; anons: Set<string> }>();
  for (const s of sessions.values()) {
    if (!inRange(s.first, p)) continue;
    const key = JSON.stringify(withMedium ? [s.entry.source, s.entry.medium] : [s.entry.source]);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { source: s.entry.source, medium: s.entry.medium, events: 0, paid: 0, anons: new Set() }));
    g.events += s.events;
    if (s.entry.medium === 'paid') g.paid += s.events;
    if (s.anon !== '') g.anons.add(s.anon);
  }
  const out = [...groups.values()].sort(
    (a, b) => b.events - a.events || compareCells(a.source, b.source) || (withMedium ? compareCells(a.medium, b.medium) : 0),
  );
  return {
    breakdown: p.breakdown,
    rows: out.slice(0, p.limit).map((g) => ({
      source: g.source,
      ...(withMedium ? { medium: g.medium } : {}),
      events: g.events,
      uniques: g.anons.size,
      paid_share: g.paid / g.events,
    })),
  };
}
