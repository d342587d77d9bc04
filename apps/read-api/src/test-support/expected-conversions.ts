import { DAILY_IDS_NOTE } from '@analytics/event-store';
import { DAY_MS, type EventRow, type FunnelQuery, type FunnelResponse, type FunnelStep, type RetentionQuery, type RetentionResponse } from '@analytics/schema';
import { completes, holds, msOf, valueOf, visitsOf } from './expected-insights';

// POST /v1/funnel and POST /v1/retention recomputed in plain TypeScript from the stored rows, from docs/conversions.md's
// "Conversions" meanings alone (not from the SQL): brute force over every start of every entity.

type Cell = string | null;
const compareCells = (a: Cell, b: Cell) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : Buffer.compare(Buffer.from(a), Buffer.from(b)));

function entityOf(countBy: 'visitor' | 'user' | 'session', e: EventRow): string {
  return countBy === 'visitor' ? e.anonymous_id : countBy === 'user' ? (e.user_id ?? '') : e.session_id;
}

/** The events the filters keep, with their visit, per entity (no '' entity). */
function eventsByEntity(rows: EventRow[], projectId: string, q: FunnelQuery | RetentionQuery) {
  const out = new Map<string, Array<{ e: EventRow; v: ReturnType<typeof visitsOf>[number] }>>();
  for (const v of visitsOf(rows, projectId, q.from, q.to, q.include_bots)) {
    for (const e of v.events) {
      if (!q.filters.every((c) => holds(c, e, v))) continue;
      const ent = entityOf(q.count_by, e);
      if (ent === '') continue;
      out.set(ent, [...(out.get(ent) ?? []), { e, v }]);
    }
  }
  return out;
}

/** The standard median (the mean of the two middle values for an even count). */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

interface Reached {
  level: number;
  /** Milliseconds between consecutive steps of the kept chain. */
  gaps: number[];
  value: Cell;
}

function stepsOf(entities: Reached[], n: number): FunnelStep[] {
  const count = (k: number) => entities.filter((r) => r.level >= k).length;
  return Array.from({ length: n }, (_, i) => {
    const k = i + 1;
    const reached = entities.filter((r) => r.level >= k);
    return {
      index: k,
      count: reached.length,
      conversion_rate: count(1) === 0 ? 0 : reached.length / count(1),
      drop_off: k === 1 ? 0 : count(k - 1) - reached.length,
      median_time_to_convert_s: k === 1 || reached.length === 0 ? null : median(reached.map((r) => r.gaps[k - 2]!)) / 1000,
    };
  });
}

export function expectedFunnel(rows: EventRow[], projectId: string, q: FunnelQuery): FunnelResponse {
  const W = q.window_s * 1000;
  const reached: Reached[] = [];
  let daily = 0;
  for (const [ent, events] of eventsByEntity(rows, projectId, q)) {
    const starts: Array<{ ms: number; value: Cell }> = [];
    const times: number[][] = q.steps.map(() => []);
    for (const { e, v } of events) {
      q.steps.forEach((g, j) => {
        if (!completes(g, e, v)) return;
        times[j]!.push(msOf(e));
        if (j === 0) starts.push({ ms: msOf(e), value: q.breakdown ? valueOf(q.breakdown, e, v, 0) : null });
      });
    }
    if (starts.length === 0) continue;
    let best: { level: number; s: number; chain: number[]; value: Cell } | undefined;
    for (const { ms: s, value } of starts) {
      // From this start: each next step's earliest event at or after the previous step, within the window.
      const chain = [s];
      for (let j = 1; j < q.steps.length; j++) {
        const next = times[j]!.filter((t) => t >= chain.at(-1)! && t <= s + W).sort((a, b) => a - b)[0];
        if (next === undefined) break;
        chain.push(next);
      }
      if (!best || chain.length > best.level || (chain.length === best.level && s >= best.s)) best = { level: chain.length, s, chain, value };
    }
    reached.push({ level: best!.level, gaps: best!.chain.slice(1).map((t, i) => t - best!.chain[i]!), value: best!.value });
    if (ent.startsWith('d_')) daily++;
  }
  const out: FunnelResponse = { steps: stepsOf(reached, q.steps.length) };
  if (q.breakdown) {
    const values = [...new Set(reached.map((r) => r.value))].map((value) => ({ value, entities: reached.filter((r) => r.value === value) }));
    values.sort((a, b) => b.entities.length - a.entities.length || compareCells(a.value, b.value));
    out.breakdown = values.slice(0, 100).map(({ value, entities }) => ({ value, steps: stepsOf(entities, q.steps.length) }));
  }
  if (q.count_by === 'visitor' && q.to - q.from > DAY_MS && reached.length > 0 && daily * 2 >= reached.length) out.notes = [DAILY_IDS_NOTE];
  return out;
}

const ymd = (ms: number) => new Date(ms).toISOString().slice(0, 10);
function periodOf(ms: number, period: RetentionQuery['period']): number {
  const day = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
  if (period === 'day') return day;
  if (period === 'week') return day - ((new Date(day).getUTCDay() + 6) % 7) * DAY_MS;
  const d = new Date(day);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
function nextPeriod(start: number, period: RetentionQuery['period']): number {
  if (period === 'day') return start + DAY_MS;
  if (period === 'week') return start + 7 * DAY_MS;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

export function expectedRetention(rows: EventRow[], projectId: string, q: RetentionQuery): RetentionResponse {
  const cohorts = new Map<number, { size: number; periods: number[]; returned: number[] }>();
  let ents = 0;
  let daily = 0;
  for (const [ent, events] of eventsByEntity(rows, projectId, q)) {
    const startTimes = events.filter(({ e, v }) => !q.start || completes(q.start, e, v)).map(({ e }) => msOf(e));
    if (startTimes.length === 0) continue;
    const cohortStart = periodOf(Math.min(...startTimes), q.period);
    let c = cohorts.get(cohortStart);
    if (!c) {
      const periods: number[] = [];
      for (let p = cohortStart; p < q.to; p = nextPeriod(p, q.period)) periods.push(p);
      cohorts.set(cohortStart, (c = { size: 0, periods, returned: periods.map(() => 0) }));
    }
    c.size++;
    ents++;
    if (ent.startsWith('d_')) daily++;
    const active = new Set(events.filter(({ e, v }) => !q.return || completes(q.return, e, v)).map(({ e }) => periodOf(msOf(e), q.period)));
    c.periods.forEach((p, k) => {
      if (active.has(p)) c.returned[k]!++;
    });
  }
  const out: RetentionResponse = {
    cohorts: [...cohorts.entries()].sort(([a], [b]) => a - b).map(([start, c]) => ({ cohort: ymd(start), size: c.size, returned: c.returned })),
  };
  if (q.count_by === 'visitor' && q.to - q.from > DAY_MS && ents > 0 && daily * 2 >= ents) out.notes = [DAILY_IDS_NOTE];
  return out;
}
