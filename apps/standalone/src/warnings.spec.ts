import request from 'supertest';
import type { Express } from 'express';
import { openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from './app';

// Issue 50, "typos vanish silently": the spec's answer is kept (unknown fields are ignored, the event is written), and
// an additive `warnings` array names each ignored field with the name it likely meant, on ingest and read routes.
type Stores = Awaited<ReturnType<typeof openTestStores>>;
const SECRETS = { ADMIN_TOKEN: 'admin-token-warnings', IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal-warnings' };
const RANGE = { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' };

let stores: Stores;
let app: Express;
let keys: { sk: string; rk: string };

beforeAll(async () => {
  stores = await openTestStores();
  app = buildApp({ stores, secrets: SECRETS, logger: silentLogger });
  keys = (await stores.keyStore.createProject({ name: 'typos' })).keys;
});
afterAll(() => stores.close());

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('warnings for what a request sent and the server ignored', () => {
  it("answers the README's typo example with 202, writes the event as the spec says, and names each ignored field", async () => {
    const res = await request(app)
      .post('/v1/track')
      .set(bearer(keys.sk))
      .send({ event: 'typo_test', timestamp: '2026-06-01T10:00:00Z', userId: 'u-1', anonymousId: 'a-1', props: { plan: 'pro' }, country: 'FR' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      ok: true,
      event_id: expect.any(String),
      warnings: [
        'unknown field userId; did you mean user_id?',
        'unknown field anonymousId; did you mean anonymous_id?',
        'unknown field props; did you mean properties?',
        'field country is computed by the server; ignored',
      ],
    });
    const rows = (await request(app).get('/v1/query').query({ ...RANGE, event: 'typo_test' }).set(bearer(keys.rk))).body.rows as Array<Record<string, unknown>>;
    expect(rows).toHaveLength(1);
    // Ignored, as the spec says: the misspelt ids and properties are not taken.
    expect(rows[0]).toMatchObject({ user_id: null, properties: '{}' });
    expect(rows[0]!.anonymous_id).not.toBe('a-1');
  });

  it('adds no warnings to a request the schema knows whole', async () => {
    const res = await request(app).post('/v1/track').set(bearer(keys.sk)).send({ event: 'clean', user_id: 'u-2', properties: { userId: 'free-form keys are not checked' } });
    expect(res.status).toBe(202);
    expect(res.body).not.toHaveProperty('warnings');
    const stats = await request(app).get('/v1/stats').query({ ...RANGE, group_by: 'source' }).set(bearer(keys.rk));
    expect(stats.status).toBe(200);
    expect(stats.body).not.toHaveProperty('warnings');
  });

  it('names a batch event\'s misspelt field once, and a read route\'s misspelt parameter', async () => {
    const events = Array.from({ length: 3 }, (_, i) => ({ event: 'b', timestamp: '2026-06-01T10:00:00Z', anonymous_id: `a-${i}`, userID: `u-${i}` }));
    const batch = await request(app).post('/v1/batch').set(bearer(keys.sk)).send({ events });
    expect(batch.status).toBe(202);
    expect(batch.body).toEqual({ ok: true, count: 3, warnings: ['unknown field events[0].userID (and in 2 more); did you mean user_id?'] });

    const stats = await request(app).get('/v1/stats').query({ ...RANGE, groupby: 'source' }).set(bearer(keys.rk));
    expect(stats.status).toBe(200);
    expect(stats.body.warnings).toEqual(['unknown parameter groupby; did you mean group_by?']);
    // Plain totals, as the spec answers a request without group_by.
    expect(stats.body.rows.every((r: Record<string, unknown>) => !('source' in r))).toBe(true);

    const insights = await request(app).post('/v1/insights').set(bearer(keys.rk)).send({ from: '2026-06-01T00:00:00Z', to: '2026-06-02T00:00:00Z', metrics: ['visitors'], dimension: ['source'] });
    // POST /v1/insights refuses unknown fields (its schema is strict): the refusal names the field meant.
    expect(insights.status).toBe(400);
    expect(insights.body).toMatchObject({ error: 'invalid_payload', details: { formErrors: ['Unrecognized key: "dimension"'], warnings: ['unknown field dimension; did you mean dimensions?'] } });
  });

  it('does not warn on admin routes, which keep their answers as they are', async () => {
    const res = await request(app).post('/admin/projects').set(bearer(SECRETS.ADMIN_TOKEN)).send({ name: 'p', nmae: 'x' });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('warnings');
  });
});
