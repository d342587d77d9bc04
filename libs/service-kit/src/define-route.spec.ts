import request from 'supertest';
import { z } from 'zod';
import { ApiError, type AuthContext, type Caller, routes } from '@analytics/schema';
import { type ServiceLimits, createServiceApp } from './app';
import { ByteBudget } from './byte-budget';
import { ANSWERED, type RouteGuards, type SessionGuard, defineRoute, expressPath, routerOf } from './define-route';
import { createLogger } from './logger';

const TOKEN = 'admin-token-define-route';
const CALLER = { projectId: 'p-1', kind: 'rk', prefix: 'abc' } as AuthContext;
// Stands in for libs/auth's key check: `Bearer rk` is the caller above, anything else is refused.
const apiKey: RouteGuards['apiKey'] = async (req, _res, route) => {
  if (req.get('authorization') !== 'Bearer rk') throw new ApiError('missing_bearer_token');
  return { ...CALLER, prefix: route.access ?? 'none' };
};
// Stands in for libs/accounts' session guard: `Bearer <TOKEN>` is the operator; the body-scoped check records what it saw.
const bodyChecks: unknown[] = [];
const session: SessionGuard = {
  async authenticate(req) {
    if (req.get('authorization') !== `Bearer ${TOKEN}`) throw new ApiError('invalid_session');
    return { kind: 'operator' };
  },
  async authorizeBody(caller, auth, body) {
    bodyChecks.push({ of: auth.of, role: auth.role, org_id: (body as { org_id?: string }).org_id });
    if ((body as { org_id?: string }).org_id === '00000000-0000-4000-8000-00000000000f') throw new ApiError('insufficient_role', { details: { required: 'admin', role: 'viewer' } });
    return { ...caller, org: { id: 'o-1', role: null } } as Caller;
  },
};

function appOf(guards: RouteGuards, definitions: Parameters<typeof routerOf>[1], limits?: ServiceLimits) {
  return createServiceApp({ name: 'kit', logger: createLogger({ level: 'silent' }), routers: [routerOf(guards, definitions)], limits });
}

describe('defineRoute', () => {
  const seen: unknown[] = [];
  const definitions: Parameters<typeof routerOf>[1] = [
    defineRoute(routes.createProject, ({ body }, caller) => {
      seen.push({ ...body, org: caller.org });
      return { project: { id: 'p-1', name: body.name, allowed_origins: [], retention_days: 30, created_at: '2026-01-01T00:00:00.000Z', org_id: null, timezone: 'UTC' }, keys: { pk: 'pk_a', sk: 'sk_b', rk: 'rk_c' } };
    }),
    defineRoute(routes.revokeKey, ({ params }) => void seen.push(params.prefix)),
    defineRoute(routes.query, ({ query }, auth) => {
      seen.push({ limit: query.limit, auth: auth.prefix });
      return { rows: [] };
    }),
    defineRoute(routes.mcp, (_input, _auth, { res }) => {
      res.status(202).end();
      return ANSWERED;
    }, { body: z.unknown() }),
  ];
  const app = appOf({ apiKey, session, adminToken: TOKEN }, definitions);
  const admin = { authorization: `Bearer ${TOKEN}` };
  beforeEach(() => {
    seen.length = 0;
    bodyChecks.length = 0;
  });

  it('checks the declared credential before the body is read: a malformed body with a wrong token is 401, not 400', async () => {
    const res = await request(app).post('/admin/projects').set('content-type', 'application/json').send('{"name":');
    expect([res.status, res.body]).toEqual([401, { error: 'invalid_session' }]);
    expect(seen).toEqual([]);
  });

  it("parses the body with the declaration's schema (400 invalid_payload) and answers the declared success status", async () => {
    const bad = await request(app).post('/admin/projects').set(admin).send({ name: 5 });
    expect([bad.status, bad.body.error, Object.keys(bad.body.details.fieldErrors)]).toEqual([400, 'invalid_payload', ['name']]);
    const ok = await request(app).post('/admin/projects').set(admin).send({ name: 'shop' });
    expect([ok.status, ok.body.project.name]).toEqual([201, 'shop']);
    expect(seen).toEqual([expect.objectContaining({ name: 'shop' })]);
  });

  it('checks a role the declaration places in the body after the body parsed and before the handler, which gets the checked caller', async () => {
    const bad = await request(app).post('/admin/projects').set(admin).send({ name: 5, org_id: '00000000-0000-4000-8000-000000000001' });
    expect([bad.status, bad.body.error, bodyChecks]).toEqual([400, 'invalid_payload', []]);
    const refused = await request(app).post('/admin/projects').set(admin).send({ name: 'shop', org_id: '00000000-0000-4000-8000-00000000000f' });
    expect([refused.status, refused.body]).toEqual([403, { error: 'insufficient_role', details: { required: 'admin', role: 'viewer' } }]);
    expect(seen).toEqual([]);
    const ok = await request(app).post('/admin/projects').set(admin).send({ name: 'shop', org_id: '00000000-0000-4000-8000-000000000001' });
    expect(ok.status).toBe(201);
    expect(bodyChecks).toEqual([
      { of: 'org_id', role: 'admin', org_id: '00000000-0000-4000-8000-00000000000f' },
      { of: 'org_id', role: 'admin', org_id: '00000000-0000-4000-8000-000000000001' },
    ]);
    expect(seen).toEqual([expect.objectContaining({ name: 'shop', org: { id: 'o-1', role: null } })]);
  });

  it('passes path parameters and answers a body-less status without content', async () => {
    const res = await request(app).delete('/admin/keys/abc123').set(admin);
    expect([res.status, res.text]).toEqual([204, '']);
    expect(seen).toEqual(['abc123']);
  });

  it("parses the query with the declaration's schema (400 invalid_params) and hands the guard's caller to the handler", async () => {
    const bad = await request(app).get('/v1/query').set('authorization', 'Bearer rk').query({ from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z', limit: 'many' });
    expect([bad.status, bad.body.error]).toEqual([400, 'invalid_params']);
    const ok = await request(app).get('/v1/query').set('authorization', 'Bearer rk').query({ from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z', limit: 5 });
    expect([ok.status, ok.body]).toEqual([200, { rows: [] }]);
    expect(seen).toEqual([{ limit: 5, auth: 'read' }]);
  });

  it('leaves the answer to a handler that wrote it itself', async () => {
    const res = await request(app).post('/mcp').set('authorization', 'Bearer rk').send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(res.status).toBe(202);
  });

  it('reads every body through the body budget: a full budget is 503 server_busy', async () => {
    const full = new ByteBudget(10);
    await full.acquire(10, 0);
    const busy = appOf({ apiKey, session, adminToken: TOKEN }, definitions, { body: { budget: full, waitMs: 10, readTimeoutMs: 10_000 } });
    const res = await request(busy).post('/mcp').set('authorization', 'Bearer rk').send({ jsonrpc: '2.0', method: 'ping', id: 1 });
    expect([res.status, res.body.error]).toEqual([503, 'server_busy']);
  });

  it("refuses a route whose router lacks the declared credential's guard (500), and 405s the declared path's other methods", async () => {
    const unguarded = appOf({}, [defineRoute(routes.runRetention, () => ({ ok: true, projects: 0, mutations: 0, dropped_partitions: [] }))]);
    expect((await request(unguarded).post('/internal/retention/run').set('x-internal-secret', 'x')).status).toBe(500);
    const other = await request(unguarded).get('/internal/retention/run');
    expect([other.status, other.headers['allow']]).toEqual([405, 'POST']);
  });

  it('writes OpenAPI path templates as express paths', () => {
    expect(expressPath('/admin/projects/{id}/keys')).toBe('/admin/projects/:id/keys');
  });
});
