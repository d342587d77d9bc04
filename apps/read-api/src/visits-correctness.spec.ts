import request from 'supertest';
import type { Express } from 'express';
import { createEnricher } from '@analytics/enrichment';
import { buildInsights, readTablesOf } from '@analytics/event-store';
import { IngestService } from '@analytics/ingest';
import { buildApp as buildIngestApp } from '@analytics/ingest-api';
import { DAY_MS, type EventRow, INSIGHT_METRICS, eventInputSchema, insightsBodySchema, sourcesParamsSchema } from '@analytics/schema';
import { openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from './app';
import { expectedSources } from './test-support/expected-answers';
import { expectedInsights } from './test-support/expected-insights';
import { SITE_HOST, seededRandom } from './test-support/seeded-dataset';

// Visits by inactivity (issue 47): events sent near their arrival time without session_id, then every insights visit
// metric compared with plain TypeScript answers whose visits are computed from the raw events by the rule alone: a
// visitor's events (by time) split where the gap is 30 minutes or more, or 24 hours after the visit's first event;
// the id is `<visitor>-<30-minute bucket of the visit's first event>`. Visits cross clock buckets, hours and midnight.

const MIN = 60_000;
const IDLE = 30 * MIN;
const BUCKET = 30 * MIN;
/** The arrival time of every request: noon of the data set's second day. */
const D0 = Date.UTC(2026, 10, 26);
const NOW = D0 + DAY_MS + 12 * 3_600_000;
const SITE = `https://${SITE_HOST}`;
const iso = (ms: number) => new Date(ms).toISOString();
const msOf = (row: EventRow) => Date.parse(`${row.timestamp.replace(' ', 'T')}Z`);

type Batch = { ua: string; events: Array<Record<string, unknown>> };

/** Visitors whose events are 5 s to 50 min apart (about one gap in five ends a visit), from 23 h 50 min before NOW. */
function generate(visitors: number, rand: () => number): Batch[] {
  const pages = ['/', '/pricing', '/docs', '/signup'];
  const referrers = ['https://www.google.com/', 'https://news.ycombinator.com/', undefined, 'https://chatgpt.com/'];
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  let seq = 0;
  return Array.from({ length: visitors }, (_, v) => {
    const anon = `anon-${v}`;
    const userId = rand() < 0.2 ? `user-${v}` : undefined;
    let t = NOW - 23 * 3_600_000 - 50 * MIN + Math.floor(rand() * 22 * 3_600_000);
    const events: Array<Record<string, unknown>> = [];
    const count = 1 + Math.floor(rand() * 12);
    let page = pick(pages);
    for (let e = 0; e < count && t < NOW; e++) {
      const roll = rand();
      const name = roll < 0.6 ? '$pageview' : roll < 0.8 ? 'signup' : 'purchase';
      if (name === 'purchase' && userId && rand() < 0.5) {
        events.push({ event: name, event_id: `e${v}-${seq++}`, timestamp: iso(t), user_id: userId });
      } else {
        const prev = page;
        page = pick(pages);
        const referrer = e === 0 || rand() < 0.1 ? pick(referrers) : `${SITE}${prev}`;
        events.push({
          event: name,
          event_id: `e${v}-${seq++}`,
          timestamp: iso(t),
          anonymous_id: anon,
          ...(userId && e > 1 ? { user_id: userId } : {}),
          ...(rand() < 0.05 ? { session_id: `client-${v}` } : {}),
          url: `${SITE}${page}`,
          ...(referrer ? { referrer } : {}),
        });
      }
      const gapRoll = rand();
      t += gapRoll < 0.8 ? 5_000 + Math.floor(rand() * 25 * MIN) : gapRoll < 0.9 ? IDLE + Math.floor(rand() * 20 * MIN) : IDLE - 1_000 + Math.floor(rand() * 2_000);
    }
    return { ua: pick(['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1']), events };
  });
}

/** The rows as stored, session ids by the rule computed here from the raw events (not by the state the service keeps). */
function expectedRows(batches: Batch[], projectId: string): EventRow[] {
  const rows: EventRow[] = [];
  const plain: EventRow[] = [];
  for (const b of batches) {
    const enrich = createEnricher({ projectId, ip: '81.2.69.160', userAgent: b.ua, host: SITE_HOST, nowMs: NOW, ipHashSecret: 's' });
    for (const e of b.events) {
      const row = enrich(eventInputSchema.parse(e));
      rows.push(row);
      if (e.session_id === undefined) plain.push(row);
    }
  }
  const byVisitor = new Map<string, EventRow[]>();
  for (const r of plain) {
    const owner = r.anonymous_id || r.user_id!;
    byVisitor.set(owner, [...(byVisitor.get(owner) ?? []), r]);
  }
  for (const [owner, events] of byVisitor) {
    let first = -Infinity;
    let last = -Infinity;
    for (const r of events.sort((a, b) => msOf(a) - msOf(b))) {
      const t = msOf(r);
      if (t - last >= IDLE || t - first >= DAY_MS) first = t;
      last = t;
      r.session_id = `${owner}-${Math.floor(first / BUCKET)}`;
    }
  }
  return rows;
}

type Stores = Awaited<ReturnType<typeof openTestStores>>;
let stores: Stores;
let ingestApp: Express;
let readApp: Express;
type Project = { id: string; sk: string; rk: string };
let project: Project;
let issue: Project;

beforeAll(async () => {
  stores = await openTestStores();
  const ingest = new IngestService({ store: stores.events, limiter: stores.limiter, rateRules: { track: { ratePerS: 1e6, burst: 1e6 }, batch: { ratePerS: 1e6, burst: 1e6 } } });
  ingestApp = buildIngestApp({ logger: silentLogger, trustProxy: ['loopback'], authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: 's', clock: () => NOW });
  readApp = buildApp({ logger: silentLogger, authenticator: stores.authenticator, events: stores.events });
  const open = async (name: string): Promise<Project> => {
    const p = await stores.keyStore.createProject({ name, allowed_origins: [] });
    return { id: p.project.id, sk: p.keys.sk, rk: p.keys.rk };
  };
  project = await open('generated');
  issue = await open('issue-47');
}, 120_000);
afterAll(() => stores.close());

const send = async (ua: string, events: object[], to = project) => {
  const res = await request(ingestApp).post('/v1/batch').set('authorization', `Bearer ${to.sk}`).set('host', SITE_HOST).set('x-forwarded-for', '81.2.69.160').set('user-agent', ua).send({ events });
  expect(res.status).toBe(202);
};
const insights = async (body: Record<string, unknown>, of = project) => {
  const res = await request(readApp).post('/v1/insights').set('authorization', `Bearer ${of.rk}`).send(body);
  expect({ status: res.status, error: res.body.error }).toMatchObject({ status: 200 });
  return res.body;
};

describe('visits by inactivity, read back', () => {
  it('10:29:50 from google then 10:30:10 is one visit: bounce rate 0, entry source google', async () => {
    const ua = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36 one-visit';
    const t = Date.UTC(2026, 10, 27, 10, 29, 50);
    await send(ua, [
      { event: '$pageview', timestamp: iso(t), anonymous_id: 'issue-47', url: `${SITE}/`, referrer: 'https://www.google.com/' },
      { event: '$pageview', timestamp: iso(t + 20_000), anonymous_id: 'issue-47', url: `${SITE}/pricing`, referrer: `${SITE}/` },
    ], issue);
    const body = await insights({ from: iso(t - MIN), to: iso(t + MIN), metrics: ['visitors', 'visits', 'bounce_rate', 'visit_duration'], dimensions: ['source', 'entry_path', 'exit_path'] }, issue);
    expect(body.rows).toEqual([{ source: 'google', entry_path: '/', exit_path: '/pricing', visitors: 1, visits: 1, bounce_rate: 0, visit_duration: 20 }]);
  });

  describe('a generated day of traffic', () => {
    let rows: EventRow[];
    beforeAll(async () => {
      const batches = generate(150, seededRandom(20261128));
      for (const b of batches) await send(b.ua, b.events);
      rows = expectedRows(batches, project.id);
    }, 120_000);
    const RANGES: Array<[number, number]> = [
      [D0, D0 + 2 * DAY_MS], // whole days: the visits aggregate, visits crossing midnight merged
      [D0 + DAY_MS, D0 + 2 * DAY_MS],
      [NOW - 20 * 3_600_000 + 1234, NOW - 2 * 3_600_000], // not on hours: the events
    ];
    const DIMENSIONS = [[], ['source'], ['entry_path', 'exit_path'], ['channel'], ['time:hour'], ['time:day', 'source'], ['path']];

    it('has visits that cross clock buckets and midnight, and gaps either side of the idle time', () => {
      const sessions = new Map<string, number[]>();
      for (const r of rows) sessions.set(r.session_id, [...(sessions.get(r.session_id) ?? []), msOf(r)]);
      const spans = [...sessions.values()].map((ts) => [Math.min(...ts), Math.max(...ts)] as const);
      expect(spans.filter(([a, b]) => Math.floor(a / BUCKET) !== Math.floor(b / BUCKET)).length).toBeGreaterThan(20);
      expect(spans.filter(([a, b]) => Math.floor(a / DAY_MS) !== Math.floor(b / DAY_MS)).length).toBeGreaterThan(0);
      expect(sessions.size).toBeGreaterThan(150);
    });

    it('answers every insights visit metric as the plain answers with inactivity visits', async () => {
      let i = 0;
      for (const dimensions of DIMENSIONS) {
        for (const [from, to] of RANGES) {
          i++;
          const body = { from: iso(from), to: iso(to), metrics: [...INSIGHT_METRICS], goal: i % 2 ? { event: 'signup' } : { path: '/pricing' }, dimensions, ...(i % 3 === 0 ? { include_bots: true } : {}), limit: 10_000 };
          expect(await insights(body)).toEqual(expectedInsights(rows, project.id, insightsBodySchema.parse(body)));
        }
      }
    });

    it('answers the visits aggregate path (whole days, visit dimensions) the same', async () => {
      const body = { from: iso(D0), to: iso(D0 + 2 * DAY_MS), metrics: ['visitors', 'visits', 'pageviews', 'events', 'bounce_rate', 'visit_duration', 'views_per_visit'], dimensions: ['source', 'entry_path'], limit: 10_000 };
      const parsed = insightsBodySchema.parse(body);
      expect(buildInsights(readTablesOf(stores.events), project.id, parsed).sql).toMatch(/FROM \w+\.visits\n/);
      expect(await insights(body)).toEqual(expectedInsights(rows, project.id, parsed));
    });

    it('answers /v1/sources by the visits entry sources', async () => {
      const params = { from: iso(D0 + DAY_MS), to: iso(D0 + 2 * DAY_MS), breakdown: 'source', limit: '100' };
      const res = await request(readApp).get('/v1/sources').query(params).set('authorization', `Bearer ${project.rk}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expectedSources(rows, project.id, sourcesParamsSchema.parse(params)));
    });
  });
});
