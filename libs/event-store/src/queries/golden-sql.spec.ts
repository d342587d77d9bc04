import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type FunnelBody,
  type InsightsBody,
  type RetentionBody,
  funnelBodySchema,
  insightsBodySchema,
  propertiesParamsSchema,
  queryParamsSchema,
  retentionBodySchema,
  sourcesParamsSchema,
  statsParamsSchema,
} from '@analytics/schema';
import { readTablesOf } from '../tables/read-tables';
import type { Query } from './dimension-sql';
import { buildFunnel } from './funnel.query';
import { buildInsights } from './insights.query';
import { buildProperties } from './properties.query';
import { buildQueryEvents } from './query-events.query';
import { buildRetention } from './retention.query';
import { buildSources, buildSourcesFromDays } from './sources.query';
import { type StatsSource, planStats } from './stats.planner';

// Golden SQL (issue 44): every planner renders a matrix of named requests, and the SQL and bound params are compared
// with the committed files in __golden__/ (one per planner), so a change in generated SQL shows in a diff that is
// reviewed like code. `UPDATE_GOLDEN=1 npx jest -c libs/event-store/jest.config.cjs golden-sql` rewrites the files.
// Every request names its range: nothing here depends on the day or the machine.

const GOLDEN_DIR = join(__dirname, '__golden__');
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const P = '11111111-1111-4111-8111-111111111111';
/** The embedded store's tables (daily_uniques_by, sources_daily); SERVER lacks them, as on a ClickHouse server. */
const EMBEDDED = readTablesOf({ db: 'analytics', eventsTable: 'analytics.events', buildsAggregates: true });
const SERVER = readTablesOf({ db: 'analytics', eventsTable: 'analytics.events', buildsAggregates: false });

// Whole UTC days (a Monday to the next), a range cut mid-day, one day.
const WEEK = { from: '2026-03-02T00:00:00Z', to: '2026-03-09T00:00:00Z' };
const PARTIAL = { from: '2026-03-02T10:30:00Z', to: '2026-03-05T18:00:00Z' };
const DAY = { from: '2026-03-04T00:00:00Z', to: '2026-03-05T00:00:00Z' };

type Case = readonly [name: string, render: () => Query];

const insights = (body: Partial<InsightsBody>) => () => buildInsights(EMBEDDED, P, insightsBodySchema.parse({ ...WEEK, ...body }));
/** The same at a given now: a range that includes it cuts its previous period within a day. */
const insightsAt = (body: Partial<InsightsBody>, now: string) => () => buildInsights(EMBEDDED, P, insightsBodySchema.parse({ ...WEEK, ...body }), { now: Date.parse(now) });
const INSIGHTS: Case[] = [
  // Metric families, no dimension.
  ['totals: visitors (the default)', insights({})],
  ['totals: events, pageviews, visitors', insights({ metrics: ['events', 'pageviews', 'visitors'] })],
  ['totals: visit metrics, whole days (visits aggregate alone)', insights({ metrics: ['visits', 'bounce_rate', 'visit_duration', 'views_per_visit'] })],
  ['totals: visit metrics, partial range (visits aggregate and its edges\' events folded)', insights({ ...PARTIAL, metrics: ['visits', 'bounce_rate', 'visit_duration', 'views_per_visit'] })],
  ['totals: every event and visit metric', insights({ metrics: ['events', 'pageviews', 'visitors', 'visits', 'bounce_rate'] })],
  // Event-column dimensions.
  ['events by event_name', insights({ metrics: ['events'], dimensions: ['event_name'] })],
  ['visitors by country, device_type', insights({ dimensions: ['country', 'device_type'] })],
  ['pageviews by browser, os, path', insights({ metrics: ['pageviews'], dimensions: ['browser', 'os', 'path'] })],
  ['visitors, pageviews by path, whole days (daily_dims)', insights({ metrics: ['visitors', 'pageviews'], dimensions: ['path'], limit: 10 })],
  ['visitors, pageviews by time:day, compare, the range includes now (daily_dims and the cut day\'s events)', insightsAt({ metrics: ['visitors', 'pageviews'], dimensions: ['time:day'], compare: 'previous_period' }, '2026-03-08T14:05:00Z')],
  ['visitors, pageviews by path, a week of Berlin days, compare (daily_dims and the edges\' events)', insights({ from: '2026-03-01T23:00:00Z', to: '2026-03-08T23:00:00Z', metrics: ['visitors', 'pageviews'], dimensions: ['path'], compare: 'previous_period' })],
  ['visitors, events by event_name, a week of Berlin days, compare (daily_rollup and the edges\' events)', insights({ from: '2026-03-01T23:00:00Z', to: '2026-03-08T23:00:00Z', metrics: ['visitors', 'events'], dimensions: ['event_name'], compare: 'previous_period' })],
  ['visitors, visits, bounce rate by source, compare, the range includes now (visit_dims\' fresh days, the visits of the others and the cut day\'s events)', () =>
    buildInsights(EMBEDDED, P, insightsBodySchema.parse({ ...WEEK, metrics: ['visitors', 'visits', 'bounce_rate'], dimensions: ['source'], compare: 'previous_period' }), { now: Date.parse('2026-03-08T14:05:00Z'), visitDays: ['2026-02-24', '2026-02-25', '2026-03-02', '2026-03-03', '2026-03-04'] })],
  ['totals: visit metrics, whole days (visit_dims\' fresh days beside the visits of the others)', () =>
    buildInsights(EMBEDDED, P, insightsBodySchema.parse({ ...WEEK, metrics: ['visitors', 'visits', 'bounce_rate', 'visit_duration', 'views_per_visit', 'pageviews'] }), { visitDays: ['2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-06'] })],
  ['visits by source where the channel is ai_assistant, whole days (visit_dims\' rows of source split by channel)', () =>
    buildInsights(EMBEDDED, P, insightsBodySchema.parse({ ...WEEK, metrics: ['visits'], dimensions: ['source'], filters: [['is', 'channel', ['ai_assistant']]], limit: 1000 }), { visitDays: ['2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-06'] })],
  ['visitors, pageviews by time:day in Europe/Berlin, a week of its days, compare (quarter_hours and the edges\' events)', () => buildInsights(EMBEDDED, P, insightsBodySchema.parse({ from: '2026-03-02', to: '2026-03-09', metrics: ['visitors', 'pageviews'], dimensions: ['time:day'], compare: 'previous_period' }), { timezone: 'Europe/Berlin' })],
  ['events by time:hour, bots included (quarter_hours)', insights({ ...DAY, metrics: ['events'], dimensions: ['time:hour'], include_bots: true })],
  ['events by browser where the device type is bot, bots included, whole days (daily_dims\' rows by their bot flag)', insights({ metrics: ['events'], dimensions: ['browser'], filters: [['is', 'device_type', ['bot']]], include_bots: true, limit: 1000 })],
  ['visitors, events by os, compare, bots included, whole days (daily_dims)', insights({ metrics: ['visitors', 'events'], dimensions: ['os'], compare: 'previous_period', include_bots: true })],
  // Visit dimensions.
  ['visits by source, whole days (visits aggregate alone)', insights({ metrics: ['visits'], dimensions: ['source'] })],
  ['visitors by medium, campaign, whole days', insights({ metrics: ['visitors', 'visits'], dimensions: ['medium', 'campaign'] })],
  ['visits by source, a Berlin week that includes now (its last UTC day from the aggregate when nothing follows `to` on it)', insightsAt({ from: '2026-03-01T23:00:00Z', to: '2026-03-08T23:00:00Z', metrics: ['visits', 'bounce_rate'], dimensions: ['source'] }, '2026-03-08T14:05:00Z')],
  ['visits by channel, partial range', insights({ ...PARTIAL, metrics: ['visits'], dimensions: ['channel'] })],
  ['events by entry_path, exit_path, whole days', insights({ metrics: ['events', 'visits'], dimensions: ['entry_path', 'exit_path'] })],
  ['events by entry_path, partial range', insights({ ...PARTIAL, metrics: ['events'], dimensions: ['entry_path'] })],
  ['events by source (visit dimension, no visit metric), whole days', insights({ metrics: ['events'], dimensions: ['source'] })],
  // A visit metric or dimension beside an event dimension: events joined to their visit.
  ['bounce_rate by country, whole days (joined to visits)', insights({ metrics: ['bounce_rate', 'visits'], dimensions: ['country'] })],
  ['bounce_rate by country, partial range (joined to visit rows of the aggregate and the edges)', insights({ ...PARTIAL, metrics: ['bounce_rate'], dimensions: ['country'] })],
  ['visits by channel and path, whole days', insights({ metrics: ['visits'], dimensions: ['channel', 'path'] })],
  // Time buckets.
  ['events by time:hour', insights({ ...DAY, metrics: ['events'], dimensions: ['time:hour'] })],
  ['visitors by time:day', insights({ dimensions: ['time:day'] })],
  ['visits by time:week, whole days', insights({ from: '2026-02-02T00:00:00Z', to: '2026-03-30T00:00:00Z', metrics: ['visits'], dimensions: ['time:week'] })],
  ['pageviews by time:month and source', insights({ from: '2026-01-01T00:00:00Z', to: '2026-04-01T00:00:00Z', metrics: ['pageviews'], dimensions: ['time:month', 'source'] })],
  // Property dimensions.
  ['events by prop:plan', insights({ metrics: ['events'], dimensions: ['prop:plan'] })],
  ['events by prop:plan and prop:tier, filtered on prop:plan (one bound key)', insights({ metrics: ['events'], dimensions: ['prop:plan', 'prop:tier'], filters: [['is', 'prop:plan', ['pro', 'team']]] })],
  // Filters of each operator.
  ['filter is (event dimension)', insights({ metrics: ['events'], filters: [['is', 'country', ['DE', 'FR']]] })],
  ['filter is_not (event dimension)', insights({ metrics: ['events'], filters: [['is_not', 'device_type', ['bot']]] })],
  ['filter contains', insights({ metrics: ['events'], dimensions: ['path'], filters: [['contains', 'path', ['/blog/']]] })],
  ['filter not_contains', insights({ metrics: ['events'], filters: [['not_contains', 'browser', ['Chrome']]] })],
  ['filter or, nested', insights({ metrics: ['events'], filters: [['or', [['is', 'event_name', ['signup']], ['or', [['contains', 'path', ['/pricing']], ['is', 'prop:plan', ['pro']]]]]]] })],
  ['filter on a visit dimension with visit dimensions only, whole days', insights({ metrics: ['visits'], dimensions: ['source'], filters: [['is', 'channel', ['organic_search']]] })],
  ['filter on a visit dimension with an event dimension, whole days', insights({ metrics: ['events'], dimensions: ['country'], filters: [['is', 'channel', ['ai_assistant']]] })],
  ['filter on a visit dimension, partial range', insights({ ...PARTIAL, metrics: ['events'], dimensions: ['path'], filters: [['is_not', 'entry_path', ['/']]] })],
  // Compare.
  ['compare previous_period, totals', insights({ metrics: ['events', 'visitors'], compare: 'previous_period' })],
  ['compare previous_period, visits by source, whole days', insights({ metrics: ['visits', 'bounce_rate'], dimensions: ['source'], compare: 'previous_period' })],
  ['compare previous_period, events by country, partial range', insights({ ...PARTIAL, metrics: ['events'], dimensions: ['country'], compare: 'previous_period' })],
  // Goals.
  ['conversions, goal by event', insights({ metrics: ['conversions'], goal: { event: 'signup' } })],
  ['conversion_rate and visitors, goal by path prefix', insights({ metrics: ['visitors', 'conversion_rate'], goal: { path: '/docs/*' } })],
  ['conversions by country, goal with filters', insights({ metrics: ['conversions', 'conversion_rate'], dimensions: ['country'], goal: { event: 'purchase', path: '/checkout', filters: [['is', 'prop:plan', ['pro']]] } })],
  ['conversion_rate and visits by source, whole days (goal over visits)', insights({ metrics: ['visits', 'conversion_rate'], dimensions: ['source'], goal: { event: 'signup' }, compare: 'previous_period' })],
  ['conversions and bounce_rate by channel, partial range', insights({ ...PARTIAL, metrics: ['conversions', 'bounce_rate'], dimensions: ['channel'], goal: { event: 'signup' } })],
  ['goal naming a visit dimension, visits by country', insights({ metrics: ['visits', 'conversions'], dimensions: ['country'], goal: { event: 'signup', filters: [['is', 'source', ['google']]] } })],
  // Ordering, limit, bots.
  ['order_by a dimension ascending, limit 10, bots included', insights({ metrics: ['events', 'visitors'], dimensions: ['event_name', 'country'], order_by: [['country', 'asc'], ['visitors', 'desc']], limit: 10, include_bots: true })],
];

const funnel = (body: Partial<FunnelBody>) => () =>
  buildFunnel(EMBEDDED, P, funnelBodySchema.parse({ ...WEEK, steps: [{ event: '$pageview', path: '/pricing' }, { event: 'signup' }], ...body }));
const FUNNEL: Case[] = [
  ['two steps, by visitor (defaults)', funnel({})],
  ['three steps, one hour window, step filters', funnel({ window_s: 3600, steps: [{ path: '/blog/*' }, { event: 'signup', filters: [['is', 'prop:plan', ['pro']]] }, { event: 'purchase' }] })],
  ['count_by user', funnel({ count_by: 'user' })],
  ['count_by session, bots included', funnel({ count_by: 'session', include_bots: true })],
  ['breakdown by an event dimension (country)', funnel({ breakdown: 'country' })],
  ['breakdown by a property', funnel({ breakdown: 'prop:plan' })],
  ['breakdown by a visit dimension, whole days (visits aggregate)', funnel({ breakdown: 'channel' })],
  ['breakdown by a visit dimension, partial range (events grouped by visit)', funnel({ ...PARTIAL, breakdown: 'source' })],
  ['breakdown by entry_path with an event filter, whole days', funnel({ breakdown: 'entry_path', filters: [['is', 'country', ['DE']]] })],
  ['filter on a visit dimension', funnel({ filters: [['is', 'medium', ['paid']]] })],
  ['step naming a visit dimension, breakdown by source', funnel({ steps: [{ event: '$pageview', filters: [['is', 'channel', ['email']]] }, { event: 'signup' }], breakdown: 'source' })],
];

const retention = (body: Partial<RetentionBody>) => () => buildRetention(EMBEDDED, P, retentionBodySchema.parse({ ...WEEK, period: 'day', ...body }));
const RETENTION: Case[] = [
  ['by day, any event, by visitor, whole days (visits aggregate)', retention({ count_by: 'visitor' })],
  ['by day, any event, by visitor, bots included', retention({ count_by: 'visitor', include_bots: true })],
  ['by day, any event, by visitor, partial range (events)', retention({ ...PARTIAL, count_by: 'visitor' })],
  ['by day, any event, by user (default)', retention({})],
  ['by week, start signup, return purchase, by user', retention({ from: '2026-01-05T00:00:00Z', to: '2026-03-30T00:00:00Z', period: 'week', start: { event: 'signup' }, return: { event: 'purchase' } })],
  ['by month, start by path, filters', retention({ from: '2026-01-01T00:00:00Z', to: '2026-04-01T00:00:00Z', period: 'month', start: { path: '/welcome' }, filters: [['is', 'country', ['DE']]] })],
  ['by day, by visitor, filter on a visit dimension', retention({ count_by: 'visitor', filters: [['is', 'channel', ['organic_social']]] })],
];

const stats = (query: Record<string, string>, force?: StatsSource, tables = EMBEDDED) => () => {
  const params = statsParamsSchema.parse({ ...WEEK, ...query });
  const plan = planStats(tables, P, params, params.group_by ?? [], force);
  return { sql: `-- source: ${plan.source}\n${plan.sql}`, params: plan.params };
};
const STATS: Case[] = [
  ['count, whole days (rollup)', stats({})],
  ['count by every rollup column, interval day (rollup)', stats({ group_by: 'event_name,source,medium,country,device_type', interval: 'day' })],
  ['count by source, interval week, event filter (rollup)', stats({ group_by: 'source', interval: 'week', event: 'signup' })],
  ['uniques (daily_uniques_by, embedded)', stats({ metric: 'uniques' })],
  ['uniques (daily_uniques, server)', stats({ metric: 'uniques' }, undefined, SERVER)],
  ['uniques by event_name, interval day (daily_uniques)', stats({ metric: 'uniques', group_by: 'event_name', interval: 'day' })],
  ['uniques, event filter (daily_uniques)', stats({ metric: 'uniques', event: 'signup' })],
  ['uniques by source, event filter (daily_uniques_by)', stats({ metric: 'uniques', group_by: 'source', event: 'signup' })],
  ['uniques by device_type, interval week (daily_uniques_by)', stats({ metric: 'uniques', group_by: 'device_type', interval: 'week' })],
  ['uniques by country, server (rollup)', stats({ metric: 'uniques', group_by: 'country' }, undefined, SERVER)],
  ['count, interval hour (quarter_hours)', stats({ ...DAY, interval: 'hour' })],
  ['count, interval hour by source (events)', stats({ ...DAY, interval: 'hour', group_by: 'source' })],
  ['pageviews, interval day in Europe/Berlin (quarter_hours)', stats({ from: '2026-03-02', to: '2026-03-09', interval: 'day', event: '$pageview', tz: 'Europe/Berlin' })],
  ['count by browser (events)', stats({ group_by: 'browser' })],
  ['count by channel (events)', stats({ group_by: 'channel' })],
  ['count by source, medium, os, partial range (events, hashed keys)', stats({ ...PARTIAL, group_by: 'source,medium,os' })],
  ['uniques by path, interval day (events, one hashed key with the bucket)', stats({ metric: 'uniques', group_by: 'path,channel', interval: 'day' })],
  ['count, forced events', stats({ group_by: 'event_name' }, 'events')],
  ['uniques, forced rollup', stats({ metric: 'uniques', interval: 'week' }, 'rollup')],
  ['uniques by event_name, forced uniques', stats({ metric: 'uniques', group_by: 'event_name' }, 'uniques')],
  ['limit', stats({ group_by: 'country', limit: '5' })],
];

const SOURCES: Case[] = [
  ['from sessions, source_medium (default)', () => buildSources(SERVER, P, sourcesParamsSchema.parse(PARTIAL))],
  ['from sessions, source, limit', () => buildSources(SERVER, P, sourcesParamsSchema.parse({ ...WEEK, breakdown: 'source', limit: '10' }))],
  ['from visits without bots (include_bots=false)', () => buildSources(EMBEDDED, P, sourcesParamsSchema.parse({ ...WEEK, include_bots: 'false' }))],
  ['sources_daily: fresh days only', () => buildSourcesFromDays(EMBEDDED, P, sourcesParamsSchema.parse(WEEK), { fresh: ['2026-03-02', '2026-03-03', '2026-03-04'], stale: [], weeks: [], unmerged: [] })!],
  ['sources_daily: stale days only', () => buildSourcesFromDays(EMBEDDED, P, sourcesParamsSchema.parse(WEEK), { fresh: [], stale: ['2026-03-07', '2026-03-08'], weeks: [], unmerged: [] })!],
  ['sources_daily: fresh and stale days, source', () => buildSourcesFromDays(EMBEDDED, P, sourcesParamsSchema.parse({ ...WEEK, breakdown: 'source' }), { fresh: ['2026-03-02', '2026-03-03'], stale: ['2026-03-08'], weeks: [], unmerged: [] })!],
  ['sources_weekly: a whole week, fresh and stale days', () => buildSourcesFromDays(EMBEDDED, P, sourcesParamsSchema.parse({ from: '2026-03-01', to: '2026-03-10' }), { fresh: ['2026-03-01'], stale: ['2026-03-09'], weeks: ['2026-03-02'], unmerged: [] })!],
];

const PROPERTIES: Case[] = [
  ['keys', () => buildProperties(EMBEDDED, P, propertiesParamsSchema.parse(WEEK))],
  ['keys of one event', () => buildProperties(EMBEDDED, P, propertiesParamsSchema.parse({ ...PARTIAL, event: 'signup' }))],
  ['values of a key', () => buildProperties(EMBEDDED, P, propertiesParamsSchema.parse({ ...WEEK, key: 'plan' }))],
];

const QUERY_EVENTS: Case[] = [
  ['range only', () => buildQueryEvents(EMBEDDED, P, queryParamsSchema.parse(PARTIAL))],
  ['every filter, limit', () => buildQueryEvents(EMBEDDED, P, queryParamsSchema.parse({ ...WEEK, event: 'signup', source: 'google', medium: 'organic', user_id: 'u-1', limit: '10' }))],
];

/** The planners, each with its golden file `__golden__/<name>.golden`. */
const PLANNERS: ReadonlyArray<readonly [planner: string, what: string, cases: Case[]]> = [
  ['insights', 'buildInsights (POST /v1/insights)', INSIGHTS],
  ['funnel', 'buildFunnel (POST /v1/funnel)', FUNNEL],
  ['retention', 'buildRetention (POST /v1/retention)', RETENTION],
  ['stats', 'planStats (GET /v1/stats), the table it chose first', STATS],
  ['sources', 'buildSources and buildSourcesFromDays (GET /v1/sources)', SOURCES],
  ['properties', 'buildProperties (GET /v1/properties)', PROPERTIES],
  ['query-events', 'buildQueryEvents (GET /v1/query)', QUERY_EVENTS],
];

// --- rendering -------------------------------------------------------------------------------------------------------

type Token = { kind: 'string' | 'space' | 'open' | 'close' | 'word' | 'other'; text: string };

function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    let j = i + 1;
    let kind: Token['kind'];
    if (c === "'") {
      while (j < sql.length && sql[j] !== "'") j += sql[j] === '\\' ? 2 : 1;
      j++;
      kind = 'string';
    } else if (/\s/.test(c)) {
      while (j < sql.length && /\s/.test(sql[j]!)) j++;
      kind = 'space';
    } else if (/\w/.test(c)) {
      while (j < sql.length && /\w/.test(sql[j]!)) j++;
      kind = 'word';
    } else kind = c === '(' ? 'open' : c === ')' ? 'close' : 'other';
    out.push({ kind, text: sql.slice(i, j) });
    i = j;
  }
  return out;
}

/** Clause keywords that start a line of their (sub)query; the multi-word ones by their words. */
const CLAUSES = ['SELECT', 'FROM', 'PREWHERE', 'WHERE', 'GROUP BY', 'HAVING', 'ORDER BY', 'LIMIT', 'INNER JOIN', 'LEFT JOIN', 'RIGHT JOIN', 'ARRAY JOIN', 'UNION ALL', 'SETTINGS'].map((k) => k.split(' '));

/**
 * The SQL laid out for review, deterministically: runs of white space outside string literals become one space, each
 * clause (SELECT, FROM, WHERE, ...) starts a line, a subquery is indented inside its parentheses, and each item of a
 * SELECT list takes a line. Nothing but white space outside literals is changed, so equal layouts are equal SQL up to
 * white space.
 */
function layOut(sql: string): string {
  const tokens = tokenize(sql);
  const lines: string[] = [''];
  let space = false;
  // One frame per (sub)query: its indent, the parentheses open within it, whether a SELECT list is being written.
  const frames = [{ indent: 0, depth: 0, select: false }];
  const frame = () => frames.at(-1)!;
  const newline = (indent: number) => {
    if (lines.at(-1)!.trim() === '') lines[lines.length - 1] = '  '.repeat(indent);
    else lines.push('  '.repeat(indent));
    space = false;
  };
  const emit = (text: string) => {
    const line = lines.at(-1)!;
    lines[lines.length - 1] = line + (space && line.trim() !== '' && !line.endsWith('(') ? ' ' : '') + text;
    space = false;
  };
  const nextWords = (from: number, n: number) => {
    const words: string[] = [];
    for (let k = from; k < tokens.length && words.length < n; k++) {
      if (tokens[k]!.kind === 'space') continue;
      if (tokens[k]!.kind !== 'word') break;
      words.push(tokens[k]!.text);
    }
    return words;
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const f = frame();
    if (t.kind === 'space') {
      space = true;
    } else if (t.kind === 'open') {
      emit('(');
      if (nextWords(i + 1, 1)[0] === 'SELECT') {
        frames.push({ indent: f.indent + 1, depth: 0, select: false });
        newline(f.indent + 1);
      } else f.depth++;
    } else if (t.kind === 'close') {
      if (f.depth === 0 && frames.length > 1) {
        frames.pop();
        newline(frame().indent);
      } else f.depth--;
      emit(')');
    } else if (t.kind === 'word' && f.depth === 0) {
      const clause = CLAUSES.find((words) => nextWords(i, words.length).join(' ') === words.join(' '));
      if (clause) {
        newline(f.indent);
        f.select = clause[0] === 'SELECT';
      }
      emit(t.text);
    } else if (t.kind === 'other' && t.text === ',' && f.depth === 0 && f.select) {
      emit(',');
      newline(f.indent + 2);
    } else {
      emit(t.text);
    }
  }
  return lines.map((l) => l.trimEnd()).join('\n');
}

/** Keys sorted, so the params line names the same binding the same way whatever order the builder set them in. */
const sorted = (o: Record<string, unknown>) => Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));

function render(name: string, q: Query): string {
  // A planner's own note (`-- source: ...`) stays a line of its own above the SQL.
  const [notes, sql] = q.sql.startsWith('-- ') ? [q.sql.slice(0, q.sql.indexOf('\n')), q.sql.slice(q.sql.indexOf('\n') + 1)] : [undefined, q.sql];
  return [`-- ${name}`, `-- params: ${JSON.stringify(sorted(q.params))}`, ...(notes ? [notes] : []), layOut(sql)].join('\n');
}

const header = (what: string) =>
  [
    `-- Golden SQL of ${what}: each case is "-- <name>", "-- params: <the bound parameters>", then the SQL (laid out for review).`,
    '-- Generated by libs/event-store/src/queries/golden-sql.spec.ts; after a deliberate change of the SQL,',
    '-- UPDATE_GOLDEN=1 npx jest -c libs/event-store/jest.config.cjs golden-sql rewrites it, and the diff is reviewed like code.',
  ].join('\n');

/** The case blocks of a golden file by name (blocks are separated by one empty line; the SQL has none). */
function casesOf(text: string): Map<string, string> {
  const blocks = text.trimEnd().split('\n\n').slice(1);
  return new Map(blocks.map((b) => [b.slice(3, b.indexOf('\n')), b]));
}

describe.each(PLANNERS)('golden SQL: %s', (planner, what, cases) => {
  const file = join(GOLDEN_DIR, `${planner}.golden`);
  const rendered = cases.map(([name, build]) => [name, render(name, build())] as const);
  const golden = existsSync(file) ? casesOf(readFileSync(file, 'utf8')) : new Map<string, string>();

  if (UPDATE) {
    afterAll(() => writeFileSync(file, `${[header(what), ...rendered.map(([, block]) => block)].join('\n\n')}\n`));
  }

  it('names every case once, and the file holds exactly these cases', () => {
    expect(new Set(cases.map(([name]) => name)).size).toBe(cases.length);
    if (!UPDATE) expect([...golden.keys()]).toEqual(cases.map(([name]) => name));
  });

  it.each(rendered)('%s', (name, block) => {
    if (UPDATE) return;
    if (!golden.has(name)) throw new Error(`no golden SQL for "${name}" in ${file}: run UPDATE_GOLDEN=1 npx jest -c libs/event-store/jest.config.cjs golden-sql, then review the diff`);
    expect(block).toBe(golden.get(name));
  });
});
