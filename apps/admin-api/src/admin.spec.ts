import { randomBytes } from 'node:crypto';
import request from 'supertest';
import type { Express } from 'express';
import { Redis as RedisClient } from 'ioredis';
import { Accounts, PasswordHasher } from '@analytics/accounts';
import { Authenticator, InvalidationBus, KeyStore, LocalRevocationEpoch, RedisRevocationEpoch, migrateKeyStore, type SqlPort } from '@analytics/auth';
import { createLogger } from '@analytics/service-kit';
import { type ContractCheck, REDIS, answerOf, contractChecked, redisClients, systemServer, memoryPglitePort } from '@analytics/testing';
import { routes } from '@analytics/schema';
import { buildApp } from './app';
import { adminWiring } from './wiring';

const TOKEN = 'admin-token-for-tests-0123456789';
let db: SqlPort;
let app: Express;
let contract: ContractCheck;
let auth: Authenticator;
const revoked: string[] = [];
const changed: string[] = [];

beforeAll(async () => {
  db = await memoryPglitePort();
  await migrateKeyStore(db);
  const keyStore = new KeyStore(db);
  auth = new Authenticator(keyStore);
  contract = contractChecked(buildApp({
    logger: createLogger({ level: 'silent' }),
    keyStore,
    accounts: new Accounts({ db, keyStore, throttleSecret: 'test', hasher: new PasswordHasher({ params: { N: 1024, r: 8, p: 1 } }) }),
    adminToken: TOKEN,
    onKeyRevoked: (p) => {
      revoked.push(p);
      auth.invalidateKey(p);
    },
    onProjectChanged: (id) => {
      changed.push(id);
      auth.invalidateProject(id);
    },
  }));
  app = contract.app;
});
afterAll(() => db.close());

const admin = (method: 'get' | 'post' | 'patch' | 'delete', path: string, token = TOKEN) => request(app)[method](path).set('authorization', `Bearer ${token}`);

describe('admin API', () => {
  it.each([
    ['no token', undefined],
    ['a wrong token', 'Bearer nope'],
    ['a token of another scheme', `Basic ${TOKEN}`],
  ])('answers %s with 401 invalid_session', async (_n, header) => {
    const req = request(app).get('/admin/projects');
    if (header) req.set('authorization', header);
    const res = await req;
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid_session' });
  });

  it('creates a project with its three keys, shows secrets only at creation', async () => {
    const res = await admin('post', '/admin/projects').send({ name: 'Shop', allowed_origins: ['https://Shop.example.com/'], retention_days: 90 });
    expect(res.status).toBe(201);
    expect(res.body.project).toEqual({ id: expect.any(String), name: 'Shop', allowed_origins: ['https://shop.example.com'], retention_days: 90, created_at: expect.any(String), org_id: null, timezone: 'UTC' });
    expect(res.body.keys.pk).toMatch(/^pk_live_/);
    expect(res.body.keys.sk).toMatch(/^sk_live_/);
    expect(res.body.keys.rk).toMatch(/^rk_live_/);
    const got = await admin('get', `/admin/projects/${res.body.project.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ project: res.body.project });
    expect(JSON.stringify(got.body)).not.toContain(res.body.keys.sk.split('_')[3]);
  });

  it('defaults retention to 365 days and validates input', async () => {
    expect((await admin('post', '/admin/projects').send({ name: 'x' })).body.project.retention_days).toBe(365);
    for (const body of [{}, { name: '' }, { name: 'x', retention_days: 0 }, { name: 'x', retention_days: 3651 }, { name: 'x', allowed_origins: ['not an origin'] }, { name: 'x', allowed_origins: 'https://a.example' }]) {
      const res = await admin('post', '/admin/projects').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_payload');
    }
  });

  it('refuses a NUL character in a name or origin with 400 invalid_payload (PostgreSQL text cannot hold it)', async () => {
    const { body: created } = await admin('post', '/admin/projects').send({ name: 'nul' });
    for (const [method, path, body] of [
      ['post', '/admin/projects', { name: 'a\u0000b' }],
      ['post', '/admin/projects', { name: 'x', allowed_origins: ['https://a.example\u0000'] }],
      ['patch', `/admin/projects/${created.project.id}`, { name: '\u0000' }],
    ] as const) {
      const res = await admin(method, path).send(body);
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 400, error: 'invalid_payload' });
    }
  });

  it('patches origins and retention and tells caches', async () => {
    const { body } = await admin('post', '/admin/projects').send({ name: 'p' });
    const res = await admin('patch', `/admin/projects/${body.project.id}`).send({ allowed_origins: ['https://new.example'], retention_days: 7 });
    expect(res.status).toBe(200);
    expect(res.body.project).toMatchObject({ allowed_origins: ['https://new.example'], retention_days: 7 });
    expect(changed).toContain(body.project.id);
    expect((await admin('patch', `/admin/projects/${body.project.id}`).send({ retention_days: -1 })).status).toBe(400);
  });

  it('sets a project time zone on create and patch, shows it on every project object, refuses an unknown name, and tells caches', async () => {
    const res = await admin('post', '/admin/projects').send({ name: 'Berlin shop', timezone: 'Europe/Berlin' });
    expect(res.status).toBe(201);
    expect(res.body.project.timezone).toBe('Europe/Berlin');
    const id = res.body.project.id as string;
    expect((await admin('get', `/admin/projects/${id}`)).body.project.timezone).toBe('Europe/Berlin');
    expect((await admin('get', '/admin/projects')).body.projects.find((p: { id: string }) => p.id === id).timezone).toBe('Europe/Berlin');
    // An IANA link Intl resolves (Asia/Kolkata on a runtime that lists Asia/Calcutta) is kept as sent.
    const patched = await admin('patch', `/admin/projects/${id}`).send({ timezone: 'Asia/Kolkata' });
    expect(patched.status).toBe(200);
    expect(patched.body.project).toMatchObject({ timezone: 'Asia/Kolkata', name: 'Berlin shop' });
    expect(changed).toContain(id);
    expect((await admin('patch', `/admin/projects/${id}`).send({ name: 'renamed' })).body.project.timezone).toBe('Asia/Kolkata');
    for (const timezone of ['Mars/Olympus', 'CET', 'europe/berlin', '+02:00', '', 'UTC; DROP TABLE projects', 7]) {
      for (const bad of [await admin('post', '/admin/projects').send({ name: 'x', timezone }), await admin('patch', `/admin/projects/${id}`).send({ timezone })]) {
        expect({ timezone, status: bad.status, error: bad.body.error }).toEqual({ timezone, status: 400, error: 'invalid_payload' });
        expect(bad.body.details.fieldErrors.timezone).toBeDefined();
      }
    }
    expect((await admin('get', `/admin/projects/${id}`)).body.project.timezone).toBe('Asia/Kolkata');
    expect((await admin('post', '/admin/projects').send({ name: 'default' })).body.project.timezone).toBe('UTC');
  });

  it.each([
    ['https://*.com', 'wildcard over a public suffix (com) would allow every site under it'],
    ['https://*.co.uk', 'wildcard over a public suffix (co.uk) would allow every site under it'],
    ['https://*.github.io', 'wildcard over a public suffix (github.io) would allow every site under it'],
    ['https://*', 'a bare wildcard host matches no origin'],
    ['https://*.10.0.0.1', 'a wildcard over an IP address (10.0.0.1)'],
  ])('refuses the origin %s on create and on patch with 400 invalid_payload saying why', async (origin, why) => {
    const { body: created } = await admin('post', '/admin/projects').send({ name: 'o', allowed_origins: ['https://shop.example.com'] });
    for (const res of [
      await admin('post', '/admin/projects').send({ name: 'x', allowed_origins: ['https://shop.example.com', origin] }),
      await admin('patch', `/admin/projects/${created.project.id}`).send({ allowed_origins: [origin] }),
    ]) {
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_payload');
      expect(res.body.details.fieldErrors.allowed_origins).toEqual([expect.stringContaining(why)]);
    }
    expect((await admin('get', `/admin/projects/${created.project.id}`)).body.project.allowed_origins).toEqual(['https://shop.example.com']);
  });

  it('keeps wildcards over a registrable domain, *.localhost and "*" (any origin)', async () => {
    const allowed_origins = ['*', 'https://*.example.com', 'https://*.shop.example.co.uk', 'https://*.alice.github.io', 'http://*.localhost:3000'];
    const res = await admin('post', '/admin/projects').send({ name: 'w', allowed_origins });
    expect(res.status).toBe(201);
    expect(res.body.project.allowed_origins).toEqual(allowed_origins);
    const patched = await admin('patch', `/admin/projects/${res.body.project.id}`).send({ allowed_origins: ['https://*.Example.com:443/'] });
    expect(patched.body.project.allowed_origins).toEqual(['https://*.example.com']);
  });

  it('answers unknown projects with 404 not_found', async () => {
    expect((await admin('get', '/admin/projects/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await admin('get', '/admin/projects/nope')).body).toEqual({ error: 'not_found' });
    expect((await admin('patch', '/admin/projects/nope').send({ retention_days: 5 })).status).toBe(404);
    expect((await admin('post', '/admin/projects/nope/keys').send({ kind: 'sk' })).status).toBe(404);
  });

  it('mints keys of every kind and revokes them by prefix', async () => {
    const { body } = await admin('post', '/admin/projects').send({ name: 'k' });
    for (const kind of ['pk', 'sk', 'rk', 'ak']) {
      const res = await admin('post', `/admin/projects/${body.project.id}/keys`).send({ kind });
      expect(res.status).toBe(201);
      expect(res.body.key).toMatch(new RegExp(`^${kind}_live_`));
      expect(res.body).toMatchObject({ kind, project_id: body.project.id, prefix: expect.any(String) });
    }
    expect((await admin('post', `/admin/projects/${body.project.id}/keys`).send({ kind: 'xk' })).status).toBe(400);

    const sk = body.keys.sk as string;
    expect((await auth.authenticate(`Bearer ${sk}`, 'ingest')).kind).toBe('sk');
    const prefix = sk.split('_')[2]!;
    const del = await admin('delete', `/admin/keys/${prefix}`);
    expect(del.status).toBe(204);
    expect(revoked).toContain(prefix);
    await expect(auth.authenticate(`Bearer ${sk}`, 'ingest')).rejects.toMatchObject({ code: 'invalid_api_key' });
    expect((await admin('delete', `/admin/keys/${prefix}`)).status).toBe(404);
    // the `kind_env_prefix` form names the same key
    const rkPrefix = (body.keys.rk as string).split('_').slice(0, 3).join('_');
    expect((await admin('delete', `/admin/keys/${rkPrefix}`)).status).toBe(204);
  });

  it('answers CORS preflight on /admin/* (the spec: CORS is permissive there) and sets no cookie', async () => {
    const pre = await request(app)
      .options('/admin/projects')
      .set('origin', 'https://dashboard.example')
      .set('access-control-request-method', 'POST')
      .set('access-control-request-headers', 'authorization,content-type');
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    expect(pre.headers['access-control-allow-headers']).toMatch(/authorization/i);
    const res = await admin('get', '/admin/projects').set('origin', 'https://dashboard.example');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('lists projects', async () => {
    const res = await admin('get', '/admin/projects');
    expect(res.status).toBe(200);
    expect(res.body.projects.length).toBeGreaterThan(3);
  });
});

describe('the contract (libs/schema API_ROUTES)', () => {
  it("parses every answer of this suite with its route's response schema, with only the error codes the route declares", () => {
    expect(contract.violations).toEqual([]);
    expect([...contract.checked.keys()]).toEqual(
      expect.arrayContaining([answerOf(routes.createProject, 201), answerOf(routes.listProjects, 200), answerOf(routes.getProject, 200), answerOf(routes.updateProject, 200), answerOf(routes.createKey, 201), answerOf(routes.createProject, 400), answerOf(routes.listProjects, 401)]),
    );
  });
});

describe('admin API when Redis does not take the revocation epoch', () => {
  it('answers a revocation with 502 upstream_failed saying the key is revoked but may be accepted for up to the cache TTL', async () => {
    // A closed client: every command fails at once, as with Redis unreachable.
    const down = new RedisClient({ lazyConnect: true, enableOfflineQueue: false });
    down.disconnect();
    const keyStore = new KeyStore(db);
    const epoch = new RedisRevocationEpoch(down, { advanceTimeoutMs: 200 });
    const app = request(buildApp({ logger: createLogger({ level: 'silent' }), ...adminWiring({ keyStore, bus: new InvalidationBus(undefined), epoch, accounts: new Accounts({ db, keyStore, throttleSecret: 'test' }) }, TOKEN) }));
    const { keys } = await keyStore.createProject({ name: 'redis-down' });
    const res = await app.delete(`/admin/keys/${keys.sk.split('_')[2]}`).set('authorization', `Bearer ${TOKEN}`);
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ error: 'upstream_failed', details: expect.stringMatching(/^The revocation is saved in the key store, but Redis did not take the revocation epoch: .*KEY_CACHE_TTL_MS/) });
    expect((await keyStore.findKey(keys.sk.split('_')[2]!))?.key.revoked_at).not.toBeNull();
  });
});

// Keys minted through admin-api reach the other instances before the 201, so their first requests are looked up even
// when the unknown-prefix lookup budget is spent (a burst of new-key requests used to meet 401s). Real Redis
// (TEST_REDIS_URL, set by .ci/run).
const REDIS_SERVER = systemServer(REDIS);
REDIS_SERVER.describe('admin API through Redis: a minted key works at once on another instance, a revoked one is refused at once', () => {
  const connect = redisClients(REDIS_SERVER);

  it('announces the keys of a new project and a new key, and answers once the other instance has them', async () => {
    const channel = `analytics:test-minted-${randomBytes(4).toString('hex')}`;
    const keyStore = new KeyStore(db);
    // the other instance: its own key store over the same database (no in-process minted listener shared)
    const replica = new Authenticator(new KeyStore(db));
    await replica.loadKnownPrefixes(3_600_000);
    await new InvalidationBus(replica, connect(), connect(true), { channel }).start();
    const adminBus = new InvalidationBus(undefined, connect(), connect(true), { channel });
    await adminBus.start();
    const withBus = request(buildApp({ logger: createLogger({ level: 'silent' }), ...adminWiring({ keyStore, bus: adminBus, epoch: new LocalRevocationEpoch(), accounts: new Accounts({ db, keyStore, throttleSecret: 'test' }) }, TOKEN) }));
    // spend the replica's budget of lookups for prefixes it does not know
    for (let i = 0; i < 40; i++) await replica.resolve(`Bearer sk_live_${randomBytes(8).toString('hex')}_${randomBytes(16).toString('hex')}`).catch(() => undefined);

    const created = await withBus.post('/admin/projects').set('authorization', `Bearer ${TOKEN}`).send({ name: 'minted' });
    expect(created.status).toBe(201);
    for (const key of Object.values(created.body.keys as Record<string, string>)) expect((await replica.resolve(`Bearer ${key}`)).project.id).toBe(created.body.project.id);
    const minted = await withBus.post(`/admin/projects/${created.body.project.id}/keys`).set('authorization', `Bearer ${TOKEN}`).send({ kind: 'rk' });
    expect(minted.status).toBe(201);
    expect((await replica.resolve(`Bearer ${minted.body.key}`)).project.id).toBe(created.body.project.id);
  });

  it('answers a revocation once the epoch in Redis is replaced: a replica that got no message refuses the cached key on its next request', async () => {
    const epochKey = `analytics:test-epoch-${randomBytes(4).toString('hex')}`;
    const keyStore = new KeyStore(db);
    // The other instance: its own key store and epoch reader, subscribed to nothing (every message to it is lost).
    const replica = new Authenticator(new KeyStore(db), { epoch: new RedisRevocationEpoch(connect(), { key: epochKey }) });
    const adminApp = request(buildApp({ logger: createLogger({ level: 'silent' }), ...adminWiring({ keyStore, bus: new InvalidationBus(undefined), epoch: new RedisRevocationEpoch(connect(), { key: epochKey }), accounts: new Accounts({ db, keyStore, throttleSecret: 'test' }) }, TOKEN) }));
    const { keys } = await keyStore.createProject({ name: 'revoked-everywhere' });
    expect((await replica.resolve(`Bearer ${keys.rk}`)).kind).toBe('rk');
    expect((await adminApp.delete(`/admin/keys/${keys.rk.split('_')[2]}`).set('authorization', `Bearer ${TOKEN}`)).status).toBe(204);
    await expect(replica.resolve(`Bearer ${keys.rk}`)).rejects.toMatchObject({ code: 'invalid_api_key' });
  });
});
