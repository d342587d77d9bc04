import request from 'supertest';
import type { Express } from 'express';
import { createEnricher } from '@analytics/enrichment';
import { openTestStores, silentLogger, type ContractCheck, answerOf, contractChecked } from '@analytics/testing';
import { routes } from '@analytics/schema';
import { buildApp } from './app';

type Stores = Awaited<ReturnType<typeof openTestStores>>;
const SECRET = 'internal-secret-for-tests';
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

let stores: Stores;
let app: Express;
let contract: ContractCheck;
let shortId: string;
let longId: string;
let sk: string;

beforeAll(async () => {
  stores = await openTestStores();
  contract = contractChecked(buildApp({ logger: silentLogger, keyStore: stores.keyStore, events: stores.events, internalSecret: SECRET, clock: () => NOW }));
  app = contract.app;
  const a = await stores.keyStore.createProject({ name: 'short', retention_days: 30 });
  const b = await stores.keyStore.createProject({ name: 'long' });
  shortId = a.project.id;
  longId = b.project.id;
  sk = a.keys.sk;
  const rows = [];
  for (const [projectId, ages] of [[shortId, [10, 60, 800]], [longId, [60, 400, 800]]] as const) {
    const enrich = createEnricher({ projectId, ip: '203.0.113.1', userAgent: '', host: 'x.example', nowMs: NOW, ipHashSecret: 's' });
    for (const age of ages) rows.push(enrich({ event: `age_${age}`, anonymous_id: 'a', timestamp: NOW - age * DAY }));
  }
  await stores.events.write(rows);
});
afterAll(() => stores.close());

const namesOf = async (projectId: string) =>
  (await stores.events.select<{ event_name: string }>(`SELECT event_name FROM ${stores.events.eventsTable} WHERE project_id = {p:UUID} ORDER BY timestamp DESC`, { p: projectId })).map((r) => r.event_name);

async function until(check: () => Promise<boolean>, ms = 30_000) {
  const end = Date.now() + ms;
  while (Date.now() < end && !(await check())) await new Promise((r) => setTimeout(r, 200));
}

describe('POST /internal/retention/run', () => {
  it.each([
    ['no secret', {}],
    ['a wrong secret', { 'x-internal-secret': 'nope' }],
    ['an API key instead', { authorization: 'Bearer sk_live_x_y' }],
  ])('refuses %s with 401 unauthorized and deletes nothing', async (_n, headers) => {
    const res = await request(app).post('/internal/retention/run').set(headers as Record<string, string>);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized' });
    expect(await namesOf(shortId)).toHaveLength(3);
  });

  it('refuses a real sk key too', async () => {
    expect((await request(app).post('/internal/retention/run').set('authorization', `Bearer ${sk}`)).status).toBe(401);
  });

  it("deletes each project's events past its retention_days, dropping partitions past every project's retention", async () => {
    const [first, second] = await Promise.all([
      request(app).post('/internal/retention/run').set('x-internal-secret', SECRET),
      request(app).post('/internal/retention/run').set('x-internal-secret', SECRET),
    ]);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(first.body).toMatchObject({ ok: true, projects: 2 });
    const dropped = new Set([...first.body.dropped_partitions, ...second.body.dropped_partitions]);
    // 800 and 400 days back are past even the longest retention (365 days): whole partitions go.
    const monthOf = (age: number) => new Date(NOW - age * DAY).toISOString().slice(0, 7).replace('-', '');
    expect(dropped).toEqual(new Set([monthOf(800), monthOf(400)]));

    await until(async () => (await namesOf(shortId)).length === 1 && (await namesOf(longId)).length === 1);
    expect(await namesOf(shortId)).toEqual(['age_10']);
    expect(await namesOf(longId)).toEqual(['age_60']);
  });

  it('is idempotent: a later run finds nothing left to delete', async () => {
    const res = await request(app).post('/internal/retention/run').set('x-internal-secret', SECRET);
    expect(res.body).toEqual({ ok: true, projects: 2, mutations: 0, dropped_partitions: [] });
    expect(await namesOf(shortId)).toEqual(['age_10']);
  });
});

describe('the contract (libs/schema API_ROUTES)', () => {
  it("parses every answer of this suite with its route's response schema, with only the error codes the route declares", () => {
    expect(contract.violations).toEqual([]);
    expect([...contract.checked.keys()]).toEqual(expect.arrayContaining([answerOf(routes.runRetention, 200), answerOf(routes.runRetention, 401)]));
  });
});
