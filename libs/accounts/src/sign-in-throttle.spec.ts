import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ApiError } from '@analytics/schema';
import { createLogger, createRedis, redisReady } from '@analytics/service-kit';
import { REDIS, systemServer } from '@analytics/auth/testing';
import { type FailureCounter, MemoryFailureCounter, RedisFailureCounter, SIGN_IN_FAILURES, SignInThrottle } from './sign-in-throttle';

const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => (e instanceof ApiError ? { code: e.code, retry: e.extra.retry_after_s } : e));

describe('SignInThrottle (memory)', () => {
  it('allows 10 failures per account in 15 minutes, refuses the 11th attempt until the oldest failure leaves the window', async () => {
    const clock = { now: 1_000_000 };
    const throttle = new SignInThrottle(new MemoryFailureCounter(() => clock.now), 'secret');
    const keys = throttle.keys('a@example.com', '203.0.113.1');
    for (let i = 0; i < 10; i++) {
      await throttle.check(keys);
      await throttle.failed(keys);
      clock.now += 1_000;
    }
    expect(await refusal(throttle.check(throttle.keys('a@example.com', '203.0.113.2')))).toEqual({ code: 'rate_limited', retry: 890 });
    clock.now = 1_000_000 + SIGN_IN_FAILURES.windowMs + 1;
    expect(await refusal(throttle.check(keys))).toBeUndefined();
  });

  it('counts per address across accounts, keys by HMAC (no email or address in a key), and clears an account on success', async () => {
    const throttle = new SignInThrottle(new MemoryFailureCounter(), 'secret');
    const keys = throttle.keys('b@example.com', '198.51.100.7');
    expect(JSON.stringify(keys)).not.toMatch(/example|198\.51/);
    for (let i = 0; i < 10; i++) await throttle.failed(throttle.keys(`user${i}@example.com`, '198.51.100.7'));
    expect((await refusal(throttle.check(keys))) as { code: string }).toMatchObject({ code: 'rate_limited' });
    expect(await refusal(throttle.check(throttle.keys('b@example.com', '198.51.100.8')))).toBeUndefined();
    const from = (i: number) => throttle.keys('c@example.com', `198.51.100.${20 + i}`);
    for (let i = 0; i < 9; i++) await throttle.failed(from(i));
    await throttle.succeeded(from(9));
    await throttle.failed(from(10));
    expect(await refusal(throttle.check(from(11)))).toBeUndefined();
  });
});

// Several admin-api instances count together in Redis (REDIS_URL): real Redis through TEST_REDIS_URL.
const REDIS_SERVER = systemServer(REDIS);
REDIS_SERVER.describe('SignInThrottle through Redis', () => {
  const clients: Redis[] = [];
  afterAll(() => clients.forEach((c) => c.disconnect()));
  const counter = async (prefix: string): Promise<FailureCounter> => {
    const redis = createRedis(REDIS_SERVER.url!, createLogger({ level: 'silent' }));
    clients.push(redis);
    // The client fails fast while it connects (callers fall back to memory): wait for it here.
    expect(await redisReady(redis)).toBe(true);
    return new RedisFailureCounter(redis, createLogger({ level: 'silent' }), prefix);
  };

  it('refuses on one instance the 11th attempt after 10 failures made on another, with Retry-After up to 15 minutes', async () => {
    const prefix = `analytics:test-signin-${randomBytes(4).toString('hex')}:`;
    const [one, two] = [new SignInThrottle(await counter(prefix), 'secret'), new SignInThrottle(await counter(prefix), 'secret')];
    const keys = one.keys('d@example.com', '192.0.2.1');
    for (let i = 0; i < 10; i++) await one.failed(keys);
    const refused = (await refusal(two.check(two.keys('d@example.com', '192.0.2.2')))) as { code: string; retry: number };
    expect(refused.code).toBe('rate_limited');
    expect(refused.retry).toBeGreaterThan(800);
    expect(refused.retry).toBeLessThanOrEqual(900);
    await two.succeeded(keys);
    expect(await refusal(one.check(one.keys('d@example.com', '192.0.2.3')))).toBeUndefined();
  });
});
