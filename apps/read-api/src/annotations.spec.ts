import request from 'supertest';
import type { Express } from 'express';
import { ANNOTATION_LIMITS } from '@analytics/schema';
import type { ContractCheck } from '@analytics/testing';
import { type Keys, ORIGIN, type Stores, openCheckedReadService, sendBatch } from './test-support/seeded-service';

// GET, POST and DELETE /v1/annotations (issue 48, docs/alerts-and-reports.md "Annotations"): the sk_ key writes (a
// deploy marker from CI) and deletes its own, the rk_ key lists a range oldest first; and POST /v1/insights with a
// time dimension answers the range's annotations beside its rows. Roles on the admin routes: admin-api's specs.

let stores: Stores, app: Express, contract: ContractCheck, ingestApp: Express;
let a: Keys, b: Keys;
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const create = (key: string, body: unknown) => request(app).post('/v1/annotations').set(bearer(key)).send(body as object);
const list = (key: string, query: Record<string, string>) => request(app).get('/v1/annotations').query(query).set(bearer(key));
const remove = (key: string, id: string) => request(app).delete(`/v1/annotations/${id}`).set(bearer(key));
const RANGE = { from: '2026-03-01T00:00:00Z', to: '2026-04-01T00:00:00Z' };

beforeAll(async () => {
  ({ stores, ingestApp, contract, app, keys: { a, b } } = await openCheckedReadService('a', 'b'));
});
afterAll(() => stores.close());

describe('POST /v1/annotations', () => {
  it('adds an annotation with the sk_ key: 201 { annotation } with created_by key:<prefix>, kind note by default, text trimmed', async () => {
    const res = await create(a.sk, { at: '2026-03-04T09:30:00+01:00', text: '  Deployed v2.4.0 ', kind: 'deploy' });
    expect(res.status).toBe(201);
    const prefix = a.sk.split('_')[2];
    expect(res.body).toEqual({ annotation: { id: expect.any(String), at: '2026-03-04T08:30:00.000Z', text: 'Deployed v2.4.0', kind: 'deploy', created_by: `key:${prefix}`, created_at: expect.any(String) } });
    const plain = await create(a.sk, { at: '2026-03-02', text: 'A note' });
    expect(plain.status).toBe(201);
    expect(plain.body.annotation).toMatchObject({ at: '2026-03-02T00:00:00.000Z', kind: 'note' });
  });

  it('refuses a bad body with 400 invalid_payload naming each field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ text: 'no time' }, 'at'],
      [{ at: 'yesterday', text: 'x' }, 'at'],
      [{ at: '1999-01-01T00:00:00Z', text: 'x' }, 'at'],
      [{ at: '2026-03-01T00:00:00Z' }, 'text'],
      [{ at: '2026-03-01T00:00:00Z', text: '   ' }, 'text'],
      [{ at: '2026-03-01T00:00:00Z', text: 'x'.repeat(ANNOTATION_LIMITS.text + 1) }, 'text'],
      [{ at: '2026-03-01T00:00:00Z', text: 'x', kind: 'party' }, 'kind'],
      [{ at: '2026-03-01T00:00:00Z', text: 'x', colour: 'red' }, 'colour'],
    ];
    for (const [body, field] of cases) {
      const res = await create(a.sk, body);
      expect({ field, status: res.status, error: res.body.error }).toEqual({ field, status: 400, error: 'invalid_payload' });
      expect({ field, details: JSON.stringify(res.body.details) }).toEqual({ field, details: expect.stringContaining(field) });
    }
    expect((await create(a.sk, { at: '2026-03-01T00:00:00Z', text: 'x'.repeat(ANNOTATION_LIMITS.text) })).status).toBe(201);
  });

  it('refuses pk_ and rk_ keys with 403 insufficient_scope, and no key with 401', async () => {
    const body = { at: '2026-03-01T00:00:00Z', text: 'x' };
    const pk = await request(app).post('/v1/annotations').set({ ...bearer(a.pk), origin: ORIGIN }).send(body);
    expect([pk.status, pk.body]).toEqual([403, { error: 'insufficient_scope', required: 'annotate', got: 'ingest' }]);
    const rk = await create(a.rk, body);
    expect([rk.status, rk.body.error]).toEqual([403, 'insufficient_scope']);
    expect((await request(app).post('/v1/annotations').send(body)).status).toBe(401);
    expect((await remove(a.rk, '00000000-0000-4000-8000-000000000000')).status).toBe(403);
  });
});

describe('DELETE /v1/annotations/{annotation_id}', () => {
  it('deletes one made by the same key: another key of the project, another project or an editor\'s is 404', async () => {
    const mine = (await create(a.sk, { at: '2026-03-10T00:00:00Z', text: 'mine', kind: 'incident' })).body.annotation;
    const projectA = (await stores.keyStore.listProjects()).find((p) => p.name === 'a')!;
    const second = (await stores.keyStore.createKey(projectA.id, 'sk'))!;
    expect((await remove(second.key, mine.id)).status).toBe(404);
    expect((await remove(b.sk, mine.id)).status).toBe(404);
    expect((await remove(a.sk, 'not-a-uuid')).status).toBe(404);
    const theirs = (await create(second.key, { at: '2026-03-10T00:00:00Z', text: 'theirs' })).body.annotation;
    expect((await remove(a.sk, theirs.id)).status).toBe(404);
    expect((await remove(a.sk, mine.id)).status).toBe(204);
    expect((await remove(a.sk, mine.id)).status).toBe(404);
    expect((await remove(second.key, theirs.id)).status).toBe(204);
  });
});

describe('GET /v1/annotations', () => {
  it('lists the range [from, to) oldest first for the rk_ key, the project\'s only', async () => {
    for (const [at, text] of [['2026-05-03T00:00:00Z', 'third'], ['2026-05-01T00:00:00Z', 'first'], ['2026-05-02T12:00:00Z', 'second'], ['2026-05-04T00:00:00Z', 'at to']]) {
      expect((await create(a.sk, { at, text })).status).toBe(201);
    }
    await create(b.sk, { at: '2026-05-02T00:00:00Z', text: 'other project' });
    const res = await list(a.rk, { from: '2026-05-01', to: '2026-05-04T00:00:00Z' });
    expect(res.status).toBe(200);
    expect(res.body.annotations.map((x: { text: string }) => x.text)).toEqual(['first', 'second', 'third']);
    expect(res.body.truncated).toBeUndefined();
    expect((await list(b.rk, { from: '2026-05-01', to: '2026-05-05' })).body.annotations.map((x: { text: string }) => x.text)).toEqual(['other project']);
  });

  it('answers 400 invalid_params for a bad or missing from/to, 403 for an sk_ key, and names a parameter it ignores', async () => {
    for (const query of [{ from: 'soon', to: '2026-05-01' }, { to: '2026-05-01' }, { from: '2026-05-02', to: '2026-05-01' }] as Array<Record<string, string>>) {
      const res = await list(a.rk, query);
      expect({ query, status: res.status, error: res.body.error }).toEqual({ query, status: 400, error: 'invalid_params' });
    }
    expect((await list(a.sk, RANGE)).status).toBe(403);
    // A parameter it does not take is ignored and named, as the other reads do.
    const extra = await list(a.rk, { ...RANGE, kinds: 'deploy' });
    expect([extra.status, extra.body.warnings]).toEqual([200, [expect.stringContaining('unknown parameter kinds')]]);
  });
});

describe('POST /v1/insights with a time dimension', () => {
  it('answers the range\'s annotations beside its rows (in the project\'s time zone); absent without one', async () => {
    const { project, keys } = await stores.keyStore.createProject({ name: 'paris', allowed_origins: [ORIGIN], timezone: 'Europe/Paris' });
    await sendBatch(ingestApp, keys.sk, [{ event: '$pageview', anonymous_id: 'u1', timestamp: '2026-06-02T10:00:00Z', url: `${ORIGIN}/` }]);
    // 2026-06-01 in Paris starts at 2026-05-31T22:00Z: the first is in the range, the last (June 3, 00:30 in Paris) is not.
    for (const [at, text] of [['2026-05-31T22:30:00Z', 'late May in UTC, June 1 in Paris'], ['2026-06-02T09:00:00Z', 'deploy'], ['2026-06-02T22:30:00Z', 'June 3 in Paris']]) {
      expect((await create(keys.sk, { at, text })).status).toBe(201);
    }
    const body = { from: '2026-06-01', to: '2026-06-03', metrics: ['pageviews'] };
    const series = await request(app).post('/v1/insights').set(bearer(keys.rk)).send({ ...body, dimensions: ['time:day'] });
    expect(series.status).toBe(200);
    expect(series.body.rows.length).toBeGreaterThan(0);
    expect(series.body.annotations.map((x: { text: string }) => x.text)).toEqual(['late May in UTC, June 1 in Paris', 'deploy']);
    const flat = await request(app).post('/v1/insights').set(bearer(keys.rk)).send({ ...body, dimensions: ['path'] });
    expect(flat.status).toBe(200);
    expect(flat.body).not.toHaveProperty('annotations');
    expect(project.timezone).toBe('Europe/Paris');
  });
});

describe('the contract', () => {
  it('every answer matched its declared schema', () => expect(contract.violations).toEqual([]));
});
