import request from 'supertest';
import type { Express } from 'express';
import { openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from './app';

// The spec's order is authentication first: a refused credential is answered before the body is buffered or parsed,
// so a malformed body gets the 401/403 (not 400) and a body over the 16 MB limit gets it too (not 413).
type Stores = Awaited<ReturnType<typeof openTestStores>>;
const SECRETS = { ADMIN_TOKEN: 'admin-token-auth-order', IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal-auth-order' };
const MALFORMED = '{"event":';
const HUGE = `{"events":[${'x'.repeat(17 * 1024 * 1024)}`;
let stores: Stores;
let app: Express;
let keys: { pk: string; sk: string; rk: string };
let projectId: string;

beforeAll(async () => {
  stores = await openTestStores();
  app = buildApp({ stores, secrets: SECRETS, logger: silentLogger });
  const created = await stores.keyStore.createProject({ name: 'auth-order', allowed_origins: ['https://shop.example.com'] });
  keys = created.keys;
  projectId = created.project.id;
});
afterAll(() => stores.close());

type Credential = { name: string; headers: () => Record<string, string>; status: number; error: string };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const UNKNOWN = 'sk_live_AAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
const none: Credential = { name: 'no key', headers: () => ({}), status: 401, error: 'missing_bearer_token' };
const unknown: Credential = { name: 'an unknown key', headers: () => bearer(UNKNOWN), status: 401, error: 'invalid_api_key' };
const readKey: Credential = { name: 'an rk_ key', headers: () => bearer(keys.rk), status: 403, error: 'insufficient_scope' };
const foreignOrigin: Credential = { name: 'a pk_ key from a foreign Origin', headers: () => ({ ...bearer(keys.pk), origin: 'https://evil.example' }), status: 403, error: 'origin_not_allowed' };
const publicKey: Credential = { name: 'a pk_ key', headers: () => ({ ...bearer(keys.pk), origin: 'https://shop.example.com' }), status: 403, error: 'forget_requires_secret_key' };
const wrongAdmin: Credential = { name: 'a wrong admin token', headers: () => bearer('not-the-admin-token'), status: 401, error: 'invalid_session' };
const noAdmin: Credential = { ...wrongAdmin, name: 'no admin token', headers: () => ({}) };
const wrongSecret: Credential = { name: 'a wrong internal secret', headers: () => ({ 'x-internal-secret': 'nope' }), status: 401, error: 'unauthorized' };
const mcpPublic: Credential = { name: 'a pk_ key', headers: () => bearer(keys.pk), status: 403, error: 'insufficient_scope' };

const ROUTES: Array<[method: 'post' | 'patch', path: (id: string) => string, credentials: Credential[]]> = [
  ['post', (_id) => '/v1/track', [none, unknown, readKey, foreignOrigin]],
  ['post', (_id) => '/v1/batch', [none, unknown, readKey, foreignOrigin]],
  ['post', (_id) => '/v1/identify', [none, unknown, readKey, foreignOrigin]],
  ['post', (_id) => '/v1/forget', [none, unknown, readKey, publicKey]],
  ['post', (_id) => '/admin/projects', [noAdmin, wrongAdmin]],
  ['patch', (id) => `/admin/projects/${id}`, [wrongAdmin]],
  ['post', (id) => `/admin/projects/${id}/keys`, [wrongAdmin]],
  ['post', (_id) => '/internal/retention/run', [wrongSecret]],
  ['post', (_id) => '/mcp', [none, unknown, mcpPublic]],
];
const CASES = ROUTES.flatMap(([method, path, credentials]) => credentials.map((c) => [method, path, c] as const));
const send = (method: 'post' | 'patch', path: string, headers: Record<string, string>, body: string) =>
  request(app)[method](path).set(headers).set('content-type', 'application/json').send(body);
const eventCount = async () =>
  Number((await stores.events.select<{ c: string }>(`SELECT count() AS c FROM ${stores.events.eventsTable} WHERE project_id = {p:UUID}`, { p: projectId }))[0]!.c);

describe('authentication before the body is read', () => {
  for (const [method, path, c] of CASES) {
    it(`${method.toUpperCase()} ${path(':id')} with ${c.name} and a malformed body answers ${c.status} ${c.error}, not 400`, async () => {
      const res = await send(method, path(projectId), c.headers(), MALFORMED);
      expect([res.status, res.body.error]).toEqual([c.status, c.error]);
    });
  }

  for (const [method, path, [c]] of ROUTES) {
    it(`${method.toUpperCase()} ${path(':id')} with ${c!.name} and a 17 MB body answers ${c!.status} ${c!.error}, not 413`, async () => {
      const res = await send(method, path(projectId), c!.headers(), HUGE);
      expect([res.status, res.body.error]).toEqual([c!.status, c!.error]);
    });
  }

  it('wrote nothing for any refused request, and an accepted key still gets its body validated', async () => {
    expect(await eventCount()).toBe(0);
    const res = await send('post', '/v1/track', bearer(keys.sk), MALFORMED);
    expect([res.status, res.body.error]).toEqual([400, 'invalid_payload']);
    const big = await send('post', '/v1/batch', bearer(keys.sk), HUGE);
    expect([big.status, big.body.error]).toEqual([413, 'payload_too_large']);
  });
});
