import fc from 'fast-check';
import request from 'supertest';
import type { Express } from 'express';
import { type StatsSource, planStats, readTablesOf, runStatsPlan } from '@analytics/event-store';
import { LIMITS, type EventRow, type StatsParams, queryParamsSchema, sourcesParamsSchema, toClickHouseTime } from '@analytics/schema';
import { expectedQuery, expectedSources, expectedStats } from './test-support/expected-answers';
import { DAY_MS, HOUR_MS, type SeededBatch, enrichBatches, ingestBatches } from './test-support/seeded-dataset';
import { type Stores, openReadService } from './test-support/seeded-service';

// Every accepted timestamp lands in the same hour, day and Monday week on every read path: events sent through the
// real ingest path at generated instants over the whole accepted range, then each path compared with the buckets
// computed in plain TypeScript (test-support/expected-answers).

const { min: MIN, max: MAX } = LIMITS.timestamp;
const WEEK_MS = 7 * DAY_MS;
const MONDAY_1999_12_27 = Date.UTC(1999, 11, 27);

let stores: Stores, ingestApp: Express, readApp: Express;

beforeAll(async () => {
  ({ stores, ingestApp, readApp } = await openReadService());
});
afterAll(() => stores.close());

const clampIn = (ms: number) => Math.min(Math.max(ms, MIN), MAX - 1);
/** Start of the UTC hour, day or Monday week holding `ms`. */
const boundaryOf = (ms: number, unit: number) => (unit === WEEK_MS ? MONDAY_1999_12_27 + Math.floor((ms - MONDAY_1999_12_27) / WEEK_MS) * WEEK_MS : ms - (ms % unit));

// Instants anywhere in the range, right at (and 1 ms around) hour, day and week boundaries, and at its ends.
const anywhere = fc.integer({ min: MIN, max: MAX - 1 });
const atBoundary = fc
  .tuple(anywhere, fc.constantFrom(HOUR_MS, DAY_MS, WEEK_MS), fc.constantFrom(-1, 0, 1))
  .map(([ms, unit, delta]) => clampIn(boundaryOf(ms, unit) + delta));
const edges = fc.constantFrom(
  MIN, MIN + 1, MAX - 1, MAX - 2,
  Date.UTC(2000, 0, 2, 23, 59, 59, 999), // Sunday: the first (partial) week's last instant, bucketed 1999-12-27
  Date.UTC(2000, 0, 3), // the first whole week's Monday
  Date.UTC(2099, 11, 27, 23, 59, 59, 999), // the last whole week's Sunday
  Date.UTC(2099, 11, 28), // the last week's Monday, partial: cut by the range's end
  Date.UTC(2099, 11, 31),
  Date.UTC(2000, 1, 29, 12), // leap days
  Date.UTC(2096, 1, 29, 23, 59, 59, 999),
);
const instants = fc.array(fc.oneof(anywhere, atBoundary, edges), { minLength: 100, maxLength: 200 });

const iso = (ms: number) => new Date(ms).toISOString();
const get = async (path: string, rk: string, query: Record<string, string | number>) => {
  const res = await request(readApp).get(path).set('authorization', `Bearer ${rk}`).query(query);
  expect(res.status).toBe(200);
  return res.body;
};

/** Every planner path that can answer (source, interval, metric), each forced, over the whole accepted range. */
const PLANS: ReadonlyArray<readonly [StatsSource, NonNullable<StatsParams['interval']>, StatsParams['metric']]> = [
  ...(['hour', 'day', 'week'] as const).flatMap((i) => [['events', i, 'count'], ['events', i, 'uniques']] as const),
  ...(['day', 'week'] as const).flatMap((i) => [['rollup', i, 'count'], ['rollup', i, 'uniques'], ['uniques', i, 'uniques']] as const),
  ...(['hour', 'day', 'week'] as const).flatMap((i) => [['quarters', i, 'count'], ['quarters', i, 'uniques']] as const),
];

/** Sources windows: the whole range, its first and last days and its first and last (partial) weeks. */
const WINDOWS: Array<[number, number]> = [
  [MIN, MAX],
  [MIN, MIN + DAY_MS],
  [MAX - DAY_MS, MAX],
  [MIN, Date.UTC(2000, 0, 3)],
  [Date.UTC(2099, 11, 28), MAX],
];

let runs = 0;

describe('timestamps outside the accepted range', () => {
  it('are refused by /v1/track and /v1/batch with 400 invalid_payload naming the range, and nothing is written', async () => {
    const created = await stores.keyStore.createProject({ name: 'outside', allowed_origins: [] });
    const send = (path: string, body: object) => request(ingestApp).post(path).set('authorization', `Bearer ${created.keys.sk}`).send(body);
    const range = 'must be between 2000-01-01T00:00:00Z and 2099-12-31T23:59:59.999Z';
    for (const timestamp of ['2190-01-01T10:00:00Z', '2100-01-01T00:00:00Z', '1999-12-31T23:59:59.999Z', '1970-01-01T00:00:00Z']) {
      const track = await send('/v1/track', { event: 'x', timestamp });
      expect(track.status).toBe(400);
      expect(track.body).toMatchObject({ error: 'invalid_payload', details: { fieldErrors: { timestamp: [range] } } });
      const batch = await send('/v1/batch', { events: [{ event: 'x', timestamp: iso(MIN) }, { event: 'x', timestamp }] });
      expect(batch.status).toBe(400);
      expect(batch.body).toMatchObject({ error: 'invalid_payload', details: { issues: [{ path: 'events.1.timestamp', message: range }] } });
    }
    expect((await get('/v1/query', created.keys.rk, { from: '0001-01-01', to: '9999-12-31' })).rows).toEqual([]);
  });
});

describe('every accepted timestamp lands in the right bucket on every path', () => {
  it('rollup, daily_uniques, raw events, sessions, /v1/query and /v1/stats agree with UTC hour, day and Monday week (property, real chDB)', async () => {
    await fc.assert(
      fc.asyncProperty(instants, async (sample) => {
        const n = ++runs;
        const created = await stores.keyStore.createProject({ name: `buckets-${n}`, allowed_origins: [] });
        const projectId = created.project.id;
        // one visitor and one session per event: uniques equal counts, each session starts at its only event
        const batch: SeededBatch = {
          project: 'p',
          ip: undefined,
          userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
          events: sample.map((ms, i) => ({ event: 'tick', event_id: `e-${String(i).padStart(4, '0')}`, anonymous_id: `v-${i}`, session_id: `s-${i}`, timestamp: iso(ms) })),
        };
        await ingestBatches(ingestApp, () => created.keys.sk, [batch]);
        const rows: EventRow[] = enrichBatches([batch], () => projectId);

        const tables = readTablesOf(stores.events);
        for (const [source, interval, metric] of PLANS) {
          const params: StatsParams = { from: MIN, to: MAX, interval, metric, limit: 1000 };
          const answer = await runStatsPlan(stores.events, planStats(tables, projectId, params, [], source));
          expect({ source, interval, metric, rows: answer }).toEqual({ source, interval, metric, rows: expectedStats(rows, projectId, params, []).rows });
        }
        // the API's own plan (rollup, daily_uniques or events) for each interval and metric
        for (const interval of ['hour', 'day', 'week'] as const) {
          for (const metric of ['count', 'uniques'] as const) {
            const body = await get('/v1/stats', created.keys.rk, { from: iso(MIN), to: iso(MAX), interval, metric, limit: 1000 });
            expect(body).toEqual(expectedStats(rows, projectId, { from: MIN, to: MAX, interval, metric, limit: 1000 }, []));
          }
        }

        const q = { from: iso(MIN), to: iso(MAX), limit: 1000 };
        expect(await get('/v1/query', created.keys.rk, q)).toEqual({ rows: expectedQuery(rows, projectId, queryParamsSchema.parse(q)) });

        const sessions = await stores.events.select<{ session_id: string; day: string; first_ts: string }>(
          `SELECT session_id, day, first_ts FROM ${tables.sessions} WHERE project_id = {p:UUID} ORDER BY session_id`,
          { p: projectId },
        );
        expect(sessions).toEqual(
          sample
            .map((ms, i) => ({ session_id: `s-${i}`, day: iso(ms).slice(0, 10), first_ts: toClickHouseTime(ms) }))
            .sort((a, b) => (a.session_id < b.session_id ? -1 : 1)),
        );
        for (const [from, to] of WINDOWS) {
          const s = { from: iso(from), to: iso(to), breakdown: 'source_medium', limit: 200 };
          expect(await get('/v1/sources', created.keys.rk, s)).toEqual(expectedSources(rows, projectId, sourcesParamsSchema.parse(s)));
        }
      }),
      { numRuns: 3, endOnFailure: true },
    );
  });
});
