import { createHmac } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { ApiError } from '@analytics/schema';
import { type Logger, RedisOrMemory } from '@analytics/service-kit';

/** The bound: more than 10 failures per account or per client address in 15 minutes is 429 rate_limited. */
export interface FailureWindow {
  limit: number;
  windowMs: number;
}
export const SIGN_IN_FAILURES: FailureWindow = { limit: 10, windowMs: 15 * 60_000 };

/** Failures per key within a sliding window. */
export interface FailureCounter {
  /** Milliseconds until `key` has fewer than `limit` failures in the window (0: it may try now). */
  blockedFor(key: string, window: FailureWindow): Promise<number>;
  record(key: string, window: FailureWindow): Promise<void>;
  clear(key: string): Promise<void>;
}

/** The times of each key's last `limit` failures, in this process (at most `maxKeys` keys, least recently used dropped). */
export class MemoryFailureCounter implements FailureCounter {
  private readonly failures: LRUCache<string, number[]>;

  constructor(
    private readonly now: () => number = Date.now,
    maxKeys = 100_000,
  ) {
    this.failures = new LRUCache<string, number[]>({ max: maxKeys });
  }

  private recent(key: string, window: FailureWindow): number[] {
    const since = this.now() - window.windowMs;
    return (this.failures.get(key) ?? []).filter((t) => t > since);
  }

  async blockedFor(key: string, window: FailureWindow): Promise<number> {
    const times = this.recent(key, window);
    return times.length < window.limit ? 0 : times[times.length - window.limit]! + window.windowMs - this.now();
  }

  async record(key: string, window: FailureWindow): Promise<void> {
    this.failures.set(key, [...this.recent(key, window), this.now()].slice(-window.limit));
  }

  async clear(key: string): Promise<void> {
    this.failures.delete(key);
  }
}

// A sorted set of failure times per key (Redis's own clock, so every instance agrees), trimmed to the window.
const RECORD_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
redis.call('ZADD', KEYS[1], now, now .. ':' .. t[2] .. ':' .. math.random(1000000))
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -tonumber(ARGV[2]) - 1)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`;
const BLOCKED_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then return 0 end
local first = redis.call('ZRANGE', KEYS[1], -limit, -limit, 'WITHSCORES')
return math.max(1, tonumber(first[2]) + window - now)
`;

type Scripted = Redis & {
  analyticsFailureRecord(key: string, windowMs: number, limit: number): Promise<number>;
  analyticsFailureBlocked(key: string, windowMs: number, limit: number): Promise<number>;
};

/**
 * Failures counted in Redis, so the bound holds across every admin-api instance (REDIS_URL, as the other shared
 * limits). When Redis cannot answer, this instance's memory counts (logged once per outage), as RedisRateLimiter does.
 */
export class RedisFailureCounter implements FailureCounter {
  private readonly fallback = new MemoryFailureCounter();
  private readonly shared: RedisOrMemory;

  constructor(private readonly redis: Redis, logger: Logger, private readonly prefix = 'analytics:signin-failures:') {
    redis.defineCommand('analyticsFailureRecord', { numberOfKeys: 1, lua: RECORD_SCRIPT });
    redis.defineCommand('analyticsFailureBlocked', { numberOfKeys: 1, lua: BLOCKED_SCRIPT });
    this.shared = new RedisOrMemory(logger, { unavailable: 'redis unavailable: sign-in failures counted in memory', recovered: 'redis sign-in throttle recovered' });
  }

  private run<T>(op: (r: Scripted) => Promise<T>, fallback: () => Promise<T>): Promise<T> {
    return this.shared.run(() => op(this.redis as Scripted), fallback);
  }

  blockedFor(key: string, window: FailureWindow): Promise<number> {
    return this.run(async (r) => Number(await r.analyticsFailureBlocked(this.prefix + key, window.windowMs, window.limit)), () => this.fallback.blockedFor(key, window));
  }

  async record(key: string, window: FailureWindow): Promise<void> {
    await this.run<unknown>((r) => r.analyticsFailureRecord(this.prefix + key, window.windowMs, window.limit), () => this.fallback.record(key, window));
  }

  async clear(key: string): Promise<void> {
    await this.run<unknown>((r) => r.del(this.prefix + key), () => this.fallback.clear(key));
  }
}

/** The keys of one attempt: the account (its email) and the client address, as HMACs (no address or email in Redis). */
export interface ThrottleKeys {
  account: string;
  address: string;
}

/**
 * Sign-in failures per account and per client address (SIGN_IN_FAILURES). Checked before any password is hashed, so a
 * refused attempt costs no hashing; an unknown email is counted as a known one (no account discovery). The client
 * address is `req.ip` as TRUST_PROXY decides: name the proxy there, or every client shares its address.
 */
export class SignInThrottle {
  constructor(
    private readonly counter: FailureCounter,
    /** Keys the HMAC of emails and addresses (derived from ADMIN_TOKEN: the same on every instance). */
    private readonly secret: string,
    private readonly window: FailureWindow = SIGN_IN_FAILURES,
    private readonly namespace = 'signin',
  ) {}

  keys(email: string, address: string | undefined): ThrottleKeys {
    const mac = (v: string) => createHmac('sha256', this.secret).update(`${this.namespace}\u0000${v}`).digest('base64url').slice(0, 32);
    return { account: `a:${mac(email)}`, address: `i:${mac(address ?? '')}` };
  }

  /**
   * 429 rate_limited (Retry-After: the seconds until the oldest failure leaves the window) when the account or the
   * address is over the bound (`address`: the address only).
   */
  async check(keys: ThrottleKeys, which: 'both' | 'address' = 'both'): Promise<void> {
    const [account, address] = await Promise.all([which === 'both' ? this.counter.blockedFor(keys.account, this.window) : 0, this.counter.blockedFor(keys.address, this.window)]);
    const waitMs = Math.max(account, address);
    if (waitMs > 0) throw new ApiError('rate_limited', { retry_after_s: Math.max(1, Math.ceil(waitMs / 1000)) });
  }

  /** Only the account's count: whether the account may get another mail now (a reset request answers 202 either way). */
  async accountBlocked(keys: ThrottleKeys): Promise<boolean> {
    return (await this.counter.blockedFor(keys.account, this.window)) > 0;
  }

  async failed(keys: ThrottleKeys): Promise<void> {
    await Promise.all([this.counter.record(keys.account, this.window), this.counter.record(keys.address, this.window)]);
  }

  /** A successful sign-in clears its account's failures (not its address's). */
  async succeeded(keys: ThrottleKeys): Promise<void> {
    await this.counter.clear(keys.account);
  }
}
