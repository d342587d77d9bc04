import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRedis, redisReady } from '@analytics/service-kit';
import { EpochUnknownError, LocalRevocationEpoch, RedisRevocationEpoch } from './revocation-epoch';
import { REDIS, systemServer } from './test-servers';

// Against real Redis (TEST_REDIS_URL, set by .ci/run): fails, not skips, when it is set and Redis is down.
const REDIS_SERVER = systemServer(REDIS);

describe('the revocation epoch of one process', () => {
  it('reads the value advance() put, a new random one each time', async () => {
    const epoch = new LocalRevocationEpoch();
    const seen = new Set([await epoch.read()]);
    for (let i = 0; i < 3; i++) {
      await epoch.advance();
      seen.add(await epoch.read());
    }
    expect(seen.size).toBe(4);
  });
});

describe('the revocation epoch in Redis, unreachable', () => {
  it('throws from advance() once its bound passed, and from read() at once', async () => {
    // A closed client: every command fails at once, as with Redis unreachable.
    const down = new Redis({ lazyConnect: true, enableOfflineQueue: false });
    down.disconnect();
    const epoch = new RedisRevocationEpoch(down, { advanceTimeoutMs: 300 });
    const t0 = Date.now();
    await expect(epoch.advance()).rejects.toThrow();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    await expect(epoch.read()).rejects.toThrow();
  });
});

REDIS_SERVER.describe('the revocation epoch in Redis', () => {
  const clients: Redis[] = [];
  const connect = async () => {
    const c = createRedis(REDIS_SERVER.url!, { warn: () => undefined } as never);
    clients.push(c);
    expect(await redisReady(c, 5_000)).toBe(true);
    return c;
  };
  /** A key of this test's own: other suites sharing the Redis server never move it. */
  const key = () => `analytics:test-epoch:${randomBytes(6).toString('hex')}`;
  afterAll(() => clients.forEach((c) => c.disconnect()));

  it('answers a read that began after advance() resolved with the new value, though a GET sent before is still unanswered', async () => {
    const k = key();
    const reader = await connect();
    const instance = new RedisRevocationEpoch(reader, { key: k });
    const admin = new RedisRevocationEpoch(await connect(), { key: k });
    await admin.advance();
    const before = await instance.read();
    // A loaded instance: Redis answers its GET at once, the answer waits in the socket.
    reader.stream.pause();
    const early = instance.read();
    await new Promise((r) => setTimeout(r, 50));
    await admin.advance(); // the revocation's SET, after Redis answered that GET
    const late = instance.read();
    reader.stream.resume();
    expect(await early).toBe(before);
    expect(await late).not.toBe(before);
    expect(await instance.read()).toBe(await late);
  });

  it('reads as unknown while the key is missing (a Redis restarted empty), then a fresh value never read before', async () => {
    const k = key();
    const redis = await connect();
    const epoch = new RedisRevocationEpoch(redis, { key: k });
    const values = new Set<string>();
    for (let i = 0; i < 3; i++) {
      await redis.del(k);
      await expect(epoch.read()).rejects.toBeInstanceOf(EpochUnknownError);
      values.add(await epoch.read());
    }
    expect(values.size).toBe(3);
  });
});
