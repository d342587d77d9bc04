import { type SavedLookup, type AlertDefinition, ALERT_WINDOW_MS, insightsRequestSchema, parseOrThrow } from '@analytics/schema';
import { type SourcesReader, readCapabilities, readScopeOf } from '@analytics/event-store';
import { ANOMALY_WEEKS, type Verdict, judge } from './anomaly';

export const WEEK_MS = 7 * 86_400_000;

/** The project an alert reads, as a read's scope takes it. */
export interface AlertProject {
  id: string;
  name: string;
  timezone?: string;
}

type Row = Record<string, unknown>;
/** An insights read as POST /v1/insights runs it (the same capability function), at the clock `now`. */
export type InsightsRead = (project: AlertProject, body: Record<string, unknown>, now: number) => Promise<{ rows: Row[] }>;

/** The insights capability over an event store's reader and the key store's saved goals (what read-api and MCP call). */
export function insightsThrough(reader: SourcesReader, saved: SavedLookup): InsightsRead {
  return async (project, body, now) => readCapabilities.insights(reader, project.id, parseOrThrow(insightsRequestSchema, body, 'invalid_params'), saved, readScopeOf(project, now)) as Promise<{ rows: Row[] }>;
}

/** The dimensions whose values the messages name as the largest contributors to a change. */
export const CONTRIBUTOR_DIMENSIONS = ['source', 'path', 'country'] as const;
export type ContributorDimension = (typeof CONTRIBUTOR_DIMENSIONS)[number];
/** Contributors named per dimension, and values read per dimension and window. */
const CONTRIBUTORS_PER_DIMENSION = 3;
const VALUES_READ = 100;

export interface Contributor {
  dimension: ContributorDimension;
  /** The dimension's value ("news.ycombinator.com", "/pricing", "FR"); "(none)" where it is absent. */
  value: string;
  current: number;
  expected: number;
  change: number;
  /** The part of the whole change it brought, 0..1. */
  share: number;
}

/** The insights body of an alert's metric over [from, to), by one dimension or in total. */
export function readOf(def: AlertDefinition, from: number, to: number, dimension?: ContributorDimension): Record<string, unknown> {
  return {
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    metrics: [def.metric],
    filters: def.event !== undefined ? [['is', 'event_name', [def.event]]] : [],
    ...(def.goal !== undefined ? { goal: def.goal } : {}),
    ...(dimension ? { dimensions: [dimension], limit: VALUES_READ } : {}),
  };
}

export interface Evaluation {
  value: number;
  /** The same window in each of the last four weeks (anomaly), newest first; one week before (thresholds). */
  history: number[];
  verdict: Verdict;
}

/**
 * An alert's value over the window ending at `point` and the verdict of its condition (an anomaly's history: the same
 * window 1 to 4 weeks before), through the insights capability.
 */
export async function evaluate(read: InsightsRead, project: AlertProject, def: AlertDefinition, point: number, wasFiring: boolean, now: number): Promise<Evaluation> {
  const width = ALERT_WINDOW_MS[def.window];
  const total = async (end: number) => Number((await read(project, readOf(def, end - width, end), now)).rows[0]?.[def.metric] ?? 0);
  const weeks = 'anomaly' in def.condition ? ANOMALY_WEEKS : 0;
  const [value, ...history] = await Promise.all([point, ...Array.from({ length: weeks }, (_, k) => point - (k + 1) * WEEK_MS)].map(total));
  return { value: value!, history, verdict: judge(def.condition, value!, history, wasFiring) };
}

/**
 * The values of sources, pages and countries that moved most in the direction of the change: each value's count in
 * the window against its mean in the reference windows (an anomaly's four weeks; a threshold's week before), the
 * largest `CONTRIBUTORS_PER_DIMENSION` of each dimension, largest share first (ties: sources, pages, countries). `share`: its part of the whole change.
 */
export async function contributorsOf(read: InsightsRead, project: AlertProject, def: AlertDefinition, point: number, value: number, now: number): Promise<{ contributors: Contributor[]; reference: number }> {
  const width = ALERT_WINDOW_MS[def.window];
  const weeks = 'anomaly' in def.condition ? ANOMALY_WEEKS : 1;
  const ends = Array.from({ length: weeks }, (_, k) => point - (k + 1) * WEEK_MS);
  const totals = await Promise.all(ends.map(async (end) => Number((await read(project, readOf(def, end - width, end), now)).rows[0]?.[def.metric] ?? 0)));
  const reference = totals.reduce((a, b) => a + b, 0) / weeks;
  const whole = value - reference;
  if (whole === 0) return { contributors: [], reference };
  const byDimension = await Promise.all(
    CONTRIBUTOR_DIMENSIONS.map(async (dimension) => {
      const counts = async (end: number) => {
        const map = new Map<string, number>();
        for (const row of (await read(project, readOf(def, end - width, end, dimension), now)).rows) map.set(row[dimension] === null || row[dimension] === '' ? '(none)' : String(row[dimension]), Number(row[def.metric] ?? 0));
        return map;
      };
      const [current, ...past] = await Promise.all([point, ...ends].map(counts));
      const names = new Set([...current!.keys(), ...past.flatMap((m) => [...m.keys()])]);
      return [...names]
        .map((name): Contributor => {
          const expected = past.reduce((n, m) => n + (m.get(name) ?? 0), 0) / weeks;
          const now_ = current!.get(name) ?? 0;
          const change = now_ - expected;
          return { dimension, value: name, current: now_, expected: round(expected), change: round(change), share: Math.min(1, Math.max(0, change / whole)) };
        })
        .filter((c) => Math.sign(c.change) === Math.sign(whole) && c.share > 0)
        .sort((a, b) => Math.abs(b.change) - Math.abs(a.change) || a.value.localeCompare(b.value))
        .slice(0, CONTRIBUTORS_PER_DIMENSION);
    }),
  );
  return { contributors: byDimension.flat().sort((a, b) => b.share - a.share || CONTRIBUTOR_DIMENSIONS.indexOf(a.dimension) - CONTRIBUTOR_DIMENSIONS.indexOf(b.dimension)), reference };
}

export const round = (n: number) => Math.round(n * 100) / 100;
