import { type SourcesReader, readCapabilities, readScopeOf } from '@analytics/event-store';
import { type InsightsRow, type ReportFrequency, type SavedLookup, insightsRequestSchema, parseOrThrow, wallClock } from '@analytics/schema';
import type { ReportPeriod } from './schedule';

/** The annotations of a project in [from, to) (the annotations store, wired where it exists). */
export type AnnotationsOf = (projectId: string, from: string, to: string) => Promise<Array<{ at: string; text: string; kind: string }>>;

/** The headline metrics of a report, in the order shown. */
export const REPORT_METRICS = [
  { key: 'visitors', label: 'Visitors' },
  { key: 'visits', label: 'Visits' },
  { key: 'pageviews', label: 'Pageviews' },
  { key: 'bounce_rate', label: 'Bounce rate' },
  { key: 'visit_duration', label: 'Visit duration' },
] as const;
export type ReportMetric = (typeof REPORT_METRICS)[number]['key'];

/** Rows of each top list. */
export const REPORT_TOP = 5;
/** Saved goals whose conversions a report counts (the first saved): each is one read. */
export const REPORT_GOALS_COUNTED = 20;

export interface ReportFigure {
  key: ReportMetric;
  label: string;
  value: number;
  previous: number;
  /** (value - previous) / previous; null when previous is 0. */
  change: number | null;
}

/** What one report holds, computed for a project and a period (the same for every recipient). */
export interface ReportContent {
  project: { id: string; name: string; timezone: string };
  frequency: ReportFrequency;
  period: { from: string; to: string };
  previous: { from: string; to: string };
  segment: { id: string; name: string } | null;
  figures: ReportFigure[];
  sources: Array<{ name: string; visitors: number }>;
  pages: Array<{ path: string; pageviews: number }>;
  goals: Array<{ name: string; conversions: number }>;
  /** Undefined when no annotations store is wired; a list (maybe empty) when there is. */
  annotations?: Array<{ at: string; text: string; kind: string }>;
  /** The dashboard over the period (PUBLIC_URL), when known. */
  dashboardUrl?: string;
}

export interface ReportContentDeps {
  events: SourcesReader;
  saved: SavedLookup;
  annotations?: AnnotationsOf;
  publicUrl?: string;
}

/** The dashboard's `to` (a local date, exclusive) for a period: its end, or for a preview cut at now the day after now. */
function dashboardTo(period: ReportPeriod, tz: string): string {
  if (!period.to.includes('T')) return period.to;
  const w = wallClock(period.toMs, tz);
  return new Date(Date.UTC(w.y, w.m - 1, w.d + 1)).toISOString().slice(0, 10);
}

const num = (row: InsightsRow | undefined, key: string) => (typeof row?.[key] === 'number' ? (row[key] as number) : 0);

/**
 * A report's figures, through the read capability POST /v1/insights runs (libs/event-store readCapabilities: the same
 * queries, the same time zone handling, the same saved segment resolution): the period and the one before as two reads
 * of local dates (a week across a daylight-saving change is 167 or 169 hours; a month is its own length), then the top
 * sources, pages and saved goals of the period.
 */
export async function reportContent(
  deps: ReportContentDeps,
  project: { id: string; name: string; timezone?: string },
  report: { frequency: ReportFrequency; segment: string | null },
  period: ReportPeriod,
  previous: ReportPeriod,
  now: number,
): Promise<ReportContent> {
  const scope = readScopeOf(project, now);
  // A segment deleted since the report was saved: the report covers the whole site (and says which segment it is not).
  const segment = report.segment ? await deps.saved.get(project.id, 'segment', report.segment) : undefined;
  const insights = async (range: ReportPeriod, body: Record<string, unknown>) =>
    (await readCapabilities.insights(deps.events, project.id, parseOrThrow(insightsRequestSchema, { from: range.from, to: range.to, ...(segment ? { segment: segment.id } : {}), ...body }), deps.saved, scope)).rows;
  const metrics = REPORT_METRICS.map((m) => m.key);
  const [[current], [before], sourceRows, pageRows, goals, annotations] = await Promise.all([
    insights(period, { metrics }),
    insights(previous, { metrics }),
    insights(period, { metrics: ['visitors'], dimensions: ['source'], limit: REPORT_TOP }),
    insights(period, { metrics: ['pageviews'], dimensions: ['path'], filters: [['is', 'event_name', ['$pageview']]], limit: REPORT_TOP }),
    deps.saved.list(project.id, 'goal'),
    deps.annotations ? deps.annotations(project.id, new Date(period.fromMs).toISOString(), new Date(period.toMs).toISOString()) : Promise.resolve(undefined),
  ]);
  const conversions = await Promise.all(
    goals.slice(0, REPORT_GOALS_COUNTED).map(async (g) => ({ name: g.name, conversions: num((await insights(period, { metrics: ['conversions'], goal: { id: g.id } }))[0], 'conversions') })),
  );
  const figures = REPORT_METRICS.map(({ key, label }) => {
    const value = num(current, key);
    const prev = num(before, key);
    return { key, label, value, previous: prev, change: prev === 0 ? null : (value - prev) / prev };
  });
  const base = deps.publicUrl?.replace(/\/+$/, '');
  return {
    project: scope.project,
    frequency: report.frequency,
    period: { from: period.from, to: period.to },
    previous: { from: previous.from, to: previous.to },
    segment: segment ? { id: segment.id, name: segment.name } : null,
    figures,
    sources: sourceRows.filter((r) => num(r, 'visitors') > 0).map((r) => ({ name: r.source === null || r.source === '' ? '(direct)' : String(r.source), visitors: num(r, 'visitors') })),
    pages: pageRows.filter((r) => r.path !== null && num(r, 'pageviews') > 0).map((r) => ({ path: String(r.path), pageviews: num(r, 'pageviews') })),
    goals: conversions
      .filter((g) => g.conversions > 0)
      .sort((a, b) => b.conversions - a.conversions || a.name.localeCompare(b.name))
      .slice(0, REPORT_TOP),
    ...(annotations ? { annotations } : {}),
    ...(base ? { dashboardUrl: `${base}/?from=${period.from}&to=${dashboardTo(period, scope.project.timezone)}&compare=1` } : {}),
  };
}
