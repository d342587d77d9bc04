import type { AddressInfo } from 'node:net';
import { type Server as HttpServer } from 'node:http';
import { Redis } from 'ioredis';
import { Authenticator, KeyStore, migrateKeyStore, type SqlPort } from '@analytics/auth';
import { EventStore } from '@analytics/event-store';
import { IngestService } from '@analytics/ingest';
import { createIngestRouter } from '@analytics/ingest-api';
import { createMcpRouter } from '@analytics/mcp-gateway';
import { createReadRouter } from '@analytics/read-api';
import { createRetentionRouter } from '@analytics/retention-worker';
import { MemoryRateLimiter, createLogger, createServiceApp } from '@analytics/service-kit';
import { TcpProxy, hostPortOf, viaProxy } from '@analytics/topology';
import { ADMIN_TOKEN, INTERNAL_SECRET, type Server, call, createKey, createProject, sleep, startServer } from './support/server';
import { memoryPglitePort } from '@analytics/testing';

const PG_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL;
const track = (base: string, key: string, event = 'fault_probe') => call(base, 'POST', '/v1/track', { key, body: { event } });
const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
  const t = Date.now();
  const r = await fn();
  return [r, Date.now() - t];
};

// Set TEST_DATABASE_URL to run it (.ci/run does); when set, an unreachable PostgreSQL fails the suite, never skips it.
(PG_URL ? describe : describe.skip)('PostgreSQL unreachable (key store behind a TCP proxy)', () => {
  let proxy: TcpProxy;
  let server: Server;

  beforeAll(async () => {
    proxy = await TcpProxy.start(hostPortOf(PG_URL!));
    server = await startServer({ env: { DATABASE_URL: viaProxy(PG_URL!, proxy) } });
  });
  afterAll(async () => {
    await server?.dispose();
    await proxy?.close();
  });

  it.each(['refuse', 'blackhole'] as const)('keeps cached keys working, answers uncached ones 502 upstream_failed, and recovers without a restart (%s)', async (how) => {
    const p = await createProject(server.base, `pg-${how}`);
    expect((await track(server.base, p.sk)).status).toBe(202); // now cached
    const uncached = await createKey(server.base, p.id, 'sk');

    await proxy.cut(how);
    const [cached, cachedMs] = await timed(() => track(server.base, p.sk));
    expect(cached.status).toBe(202);
    expect(cachedMs).toBeLessThan(2_000);
    const [miss, missMs] = await timed(() => track(server.base, uncached));
    expect({ status: miss.status, body: miss.body }).toEqual({ status: 502, body: { error: 'upstream_failed' } });
    expect(missMs).toBeLessThan(15_000); // pg connectionTimeoutMillis (3 s) / query_timeout (10 s), never a hang
    const admin = await call(server.base, 'GET', '/admin/projects', { key: ADMIN_TOKEN });
    expect({ status: admin.status, body: admin.body }).toEqual({ status: 502, body: { error: 'upstream_failed' } });
    const [ready, readyMs] = await timed(() => call<{ error: string; checks: Record<string, string> }>(server.base, 'GET', '/readyz'));
    expect([ready.status, ready.body.error, ready.body.checks.event_store]).toEqual([503, 'not_ready', 'ok']);
    expect(ready.body.checks.key_store).not.toBe('ok');
    expect(readyMs).toBeLessThan(4_000); // bounded by the readiness timeout (2 s), never a hang
    expect((await call(server.base, 'GET', '/healthz')).status).toBe(200); // liveness does not touch a store

    await proxy.restore();
    let back = await track(server.base, uncached);
    for (let i = 0; i < 20 && back.status !== 202; i++) {
      await sleep(250);
      back = await track(server.base, uncached);
    }
    expect(back.status).toBe(202); // the unknown key is looked up again (missing entries are not cached on errors)
    expect((await call(server.base, 'GET', '/admin/projects', { key: ADMIN_TOKEN })).status).toBe(200);
    expect((await call(server.base, 'GET', '/readyz')).status).toBe(200);
  });

  it('logged the outage without the key or the database password', () => {
    expect(server.log()).not.toMatch(/sk_live_[0-9A-Za-z]+_[0-9A-Za-z]{8,}/);
  });
});

(REDIS_URL ? describe : describe.skip)('Redis unreachable (buckets and invalidations behind a TCP proxy)', () => {
  let proxy: TcpProxy;
  let server: Server;
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(REDIS_URL!, { maxRetriesPerRequest: 1, connectTimeout: 2_000 });
    await redis.ping(); // fails the suite when TEST_REDIS_URL is set and Redis is down
    proxy = await TcpProxy.start(hostPortOf(REDIS_URL!));
    server = await startServer({ env: { REDIS_URL: viaProxy(REDIS_URL!, proxy) } });
  });
  afterAll(async () => {
    await server?.dispose();
    await proxy?.close();
    redis?.disconnect();
  });

  it.each(['refuse', 'blackhole'] as const)('serves from in-memory buckets while Redis is down and uses Redis again once it is back (%s)', async (how) => {
    const p = await createProject(server.base, `redis-${how}`);
    const bucket = `analytics:bucket:${p.id}:track`;
    expect((await track(server.base, p.sk)).status).toBe(202);
    expect(await redis.exists(bucket)).toBe(1);

    await proxy.cut(how);
    await redis.del(bucket);
    for (let i = 0; i < 5; i++) {
      const [r, ms] = await timed(() => track(server.base, p.sk));
      expect(r.status).toBe(202);
      expect(ms).toBeLessThan(2_000); // ioredis commandTimeout 500 ms, then the memory bucket
    }
    expect(await redis.exists(bucket)).toBe(0);
    // The revocation is saved and applies at once on this instance (it cannot read the revocation epoch, so it trusts
    // no cached key); the answer says Redis did not take the epoch, so another instance may not know yet.
    const extra = await createKey(server.base, p.id, 'sk');
    expect((await track(server.base, extra)).status).toBe(202);
    const revoked = await call(server.base, 'DELETE', `/admin/keys/${extra}`, { key: ADMIN_TOKEN });
    expect({ status: revoked.status, error: revoked.body.error }).toEqual({ status: 502, error: 'upstream_failed' });
    expect(revoked.body.details).toMatch(/^The revocation is saved in the key store, but Redis did not take the revocation epoch/);
    expect((await track(server.base, extra)).body).toEqual({ error: 'invalid_api_key' });

    await proxy.restore();
    let shared = 0;
    for (let i = 0; i < 40 && !shared; i++) {
      expect((await track(server.base, p.sk)).status).toBe(202);
      shared = await redis.exists(bucket);
      if (!shared) await sleep(250);
    }
    expect(shared).toBe(1); // the shared bucket is written again: recovered without a restart
  });
});

describe('ClickHouse unreachable (event store client pointed at a proxy that refuses or never answers)', () => {
  // No ClickHouse server runs here, so the ingest, read, MCP and retention routers run in-process over an
  // EventStore.connect() client (no migrations) aimed at the proxy, with a 2 s request timeout.
  let keyDb: SqlPort;
  let http: HttpServer;
  let base: string;
  let proxy: TcpProxy;
  let events: EventStore;
  let keys: { pk: string; sk: string; rk: string };
  const REQUEST_TIMEOUT_MS = 2_000;

  beforeAll(async () => {
    // The proxy's target is a port nothing listens on: "pass" mode is itself unreachable; cut() chooses how.
    proxy = await TcpProxy.start({ host: '127.0.0.1', port: 9 });
    keyDb = await memoryPglitePort();
    await migrateKeyStore(keyDb);
    const keyStore = new KeyStore(keyDb);
    const authenticator = new Authenticator(keyStore);
    events = EventStore.connect({ url: `http://127.0.0.1:${proxy.port}`, database: 'analytics', requestTimeoutMs: REQUEST_TIMEOUT_MS });
    const logger = createLogger({ level: 'silent' });
    const ingest = new IngestService({ store: events, limiter: new MemoryRateLimiter() });
    const app = createServiceApp({
      name: 'faults',
      logger,
      ready: { event_store: () => events.ping() },
      routers: [
        createIngestRouter({ authenticator, ingest, events, ipHashSecret: 'x' }),
        createReadRouter({ authenticator, events }),
        createMcpRouter({ authenticator, ingest, events, ipHashSecret: 'x', logger }),
        createRetentionRouter({ keyStore, events, internalSecret: INTERNAL_SECRET }),
      ],
    });
    keys = (await keyStore.createProject({ name: 'ch', allowed_origins: [] })).keys;
    http = app.listen(0, '127.0.0.1');
    await new Promise((r) => http.once('listening', r));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    http?.close();
    await events?.close().catch(() => undefined);
    await keyDb?.close();
    await proxy?.close();
  });

  const range = 'from=2026-01-01&to=2026-02-01';
  const calls: Array<[string, () => Promise<{ status: number; body: unknown }>]> = [
    ['POST /v1/track', () => call(base, 'POST', '/v1/track', { key: keys.sk, body: { event: 'x' } })],
    ['POST /v1/batch', () => call(base, 'POST', '/v1/batch', { key: keys.sk, body: { events: [{ event: 'x' }, { event: 'y' }] } })],
    ['POST /v1/identify', () => call(base, 'POST', '/v1/identify', { key: keys.sk, body: { anonymous_id: 'a', user_id: 'u' } })],
    ['POST /v1/forget', () => call(base, 'POST', '/v1/forget', { key: keys.sk, body: { user_id: 'u' } })],
    ['GET /v1/query', () => call(base, 'GET', `/v1/query?${range}`, { key: keys.rk })],
    ['GET /v1/stats', () => call(base, 'GET', `/v1/stats?${range}&group_by=source`, { key: keys.rk })],
    ['GET /v1/stats (raw events path)', () => call(base, 'GET', `/v1/stats?from=2026-01-01T00:00:01Z&to=2026-02-01&group_by=path`, { key: keys.rk })],
    ['GET /v1/sources', () => call(base, 'GET', `/v1/sources?${range}`, { key: keys.rk })],
    ['POST /internal/retention/run', () => call(base, 'POST', '/internal/retention/run', { headers: { 'x-internal-secret': INTERNAL_SECRET } })],
  ];

  it.each(['refuse', 'blackhole'] as const)('GET /readyz answers 503 not_ready within its timeout while /healthz stays 200 (%s)', async (how) => {
    await proxy.cut(how);
    const [res, ms] = await timed(() => call(base, 'GET', '/readyz'));
    expect({ status: res.status, body: res.body }).toEqual({ status: 503, body: { error: 'not_ready', checks: { event_store: expect.stringMatching(/^(failed|timeout)$/) } } });
    expect(ms).toBeLessThan(4_000);
    expect((await call(base, 'GET', '/healthz')).status).toBe(200);
  });

  for (const how of ['refuse', 'blackhole'] as const) {
    it.each(calls.map(([name, fn]) => [name, fn] as const))(`%s answers 502 upstream_failed within the request timeout (${how})`, async (_name, fn) => {
      await proxy.cut(how);
      const [res, ms] = await timed(fn);
      expect({ status: res.status, body: res.body }).toEqual({ status: 502, body: { error: 'upstream_failed' } });
      expect(ms).toBeLessThan(REQUEST_TIMEOUT_MS + 3_000);
    });

    it(`MCP track_event and query_events report tool_failed upstream_failed within the timeout (${how})`, async () => {
      await proxy.cut(how);
      for (const [key, name, args] of [[keys.sk, 'track_event', { event: 'x' }], [keys.rk, 'query_events', { from: '2026-01-01', to: '2026-02-01' }]] as const) {
        const [res, ms] = await timed(() =>
          call<{ error?: { code: number; message: string; data: { error: string } } }>(base, 'POST', '/mcp', {
            key,
            body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
          }),
        );
        expect(res.status).toBe(200);
        expect(res.body.error).toMatchObject({ code: -32000, message: 'tool_failed', data: { error: 'upstream_failed' } });
        expect(ms).toBeLessThan(REQUEST_TIMEOUT_MS + 3_000);
      }
    });
  }
});
