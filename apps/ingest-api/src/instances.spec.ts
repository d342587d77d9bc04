import request from 'supertest';
import type { Express } from 'express';
import { Authenticator, InvalidationBus } from '@analytics/auth';
import { IngestService } from '@analytics/ingest';
import { RedisRateLimiter, createRedis, redisReady } from '@analytics/service-kit';
import { REDIS, openTestStores, silentLogger, systemServer } from '@analytics/testing';
import { buildApp } from './app';

// Against real Redis (TEST_REDIS_URL, set by .ci/run): fails, not skips, when it is set and Redis is down.
const REDIS_SERVER = systemServer(REDIS);
const REDIS_URL = REDIS_SERVER.url;

REDIS_SERVER.describe('several instances through Redis', () => {
  type Stores = Awaited<ReturnType<typeof openTestStores>>;
  let stores: Stores;
  const clients: Array<{ disconnect(): void }> = [];
  const instances: Array<{ app: Express; bus: InvalidationBus }> = [];
  let keys: { sk: string };

  beforeAll(async () => {
    stores = await openTestStores();
    keys = (await stores.keyStore.createProject({ name: 'shared' })).keys;
    const bucketPrefix = `analytics:test:${Date.now()}:`;
    for (let i = 0; i < 2; i++) {
      const redis = createRedis(REDIS_URL!, silentLogger);
      const sub = createRedis(REDIS_URL!, silentLogger, { subscriber: true });
      clients.push(redis, sub);
      expect(await redisReady(redis, 5_000)).toBe(true);
      const authenticator = new Authenticator(stores.keyStore);
      const bus = new InvalidationBus(authenticator, redis, sub);
      await bus.start();
      const ingest = new IngestService({
        store: stores.events,
        limiter: new RedisRateLimiter(redis, silentLogger, bucketPrefix),
        rateRules: { track: { ratePerS: 1, burst: 6 }, batch: { ratePerS: 1, burst: 6 } },
      });
      instances.push({ app: buildApp({ logger: silentLogger, authenticator, ingest, events: stores.events, ipHashSecret: 's' }), bus });
    }
  });
  afterAll(async () => {
    clients.forEach((c) => c.disconnect());
    await stores.close();
  });

  const track = (i: number, key = keys.sk) => request(instances[i]!.app).post('/v1/track').set('authorization', `Bearer ${key}`).send({ event: 'x' });

  it('share one token bucket per project instead of one each', async () => {
    const statuses: number[] = [];
    for (let n = 0; n < 10; n++) statuses.push((await track(n % 2)).status);
    // burst 6 for the project, across both instances (a refill of 1/s may add one during the loop)
    const accepted = statuses.filter((s) => s === 202).length;
    expect(accepted).toBeGreaterThanOrEqual(6);
    expect(accepted).toBeLessThanOrEqual(7);
    expect(statuses.filter((s) => s === 429).length).toBe(10 - accepted);
  });

  it('refuse a key revoked on the other instance within one second', async () => {
    const minted = (await stores.keyStore.createKey((await stores.keyStore.listProjects())[0]!.id, 'sk'))!;
    // both instances have it cached
    const limited = new Set([202, 429]);
    expect(limited.has((await track(0, minted.key)).status)).toBe(true);
    expect(limited.has((await track(1, minted.key)).status)).toBe(true);
    await stores.keyStore.revokeKey(minted.prefix);
    await instances[0]!.bus.keyRevoked(minted.prefix);
    const start = Date.now();
    let code = '';
    while (Date.now() - start < 1_000) {
      code = (await track(1, minted.key)).body.error;
      if (code === 'invalid_api_key') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(code).toBe('invalid_api_key');
  });
});

describe('Redis unreachable', () => {
  it('falls back to in-memory buckets and keeps serving', async () => {
    const redis = createRedis('redis://127.0.0.1:1', silentLogger);
    const limiter = new RedisRateLimiter(redis, silentLogger);
    const rule = { ratePerS: 1, burst: 2 };
    const results = [await limiter.take('p:track', rule), await limiter.take('p:track', rule), await limiter.take('p:track', rule)];
    expect(results.map((r) => r.allowed)).toEqual([true, true, false]);
    redis.disconnect();
  });

  it('opens the stores and serves with Redis down at start (the subscription does not hold the start)', async () => {
    // Held by the subscription, the open would never resolve (ioredis retries for ever): the test's own timeout is
    // the bound, not a wall-clock figure that depends on how fast this machine opens the embedded stores.
    const stores = await openTestStores({ REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      const created = await stores.keyStore.createProject({ name: 'redis-down', allowed_origins: [] });
      expect(await stores.authenticator.authenticate(`Bearer ${created.keys.sk}`, 'ingest')).toMatchObject({ project: { id: created.project.id } });
    } finally {
      await stores.close();
    }
  }, 180_000);
});
