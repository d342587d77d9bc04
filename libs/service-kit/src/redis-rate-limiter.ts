import type { Redis } from 'ioredis';
import type { Logger } from './logger';
import { type BucketRule, MemoryRateLimiter, type RateLimiter, type TakeResult } from './rate-limiter';

// One atomic take: refill by elapsed time (Redis's own clock, so every instance agrees), then spend.
const TAKE_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(b[1])
local ts = tonumber(b[2])
if tokens == nil or ts == nil then tokens = burst; ts = now end
tokens = math.min(burst, tokens + math.max(0, now - ts) / 1000 * rate)
local allowed = 0
if tokens >= cost then tokens = tokens - cost; allowed = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
if allowed == 1 then return {1, 0} end
return {0, math.ceil((cost - tokens) / rate)}
`;

/**
 * A Redis operation, or this instance's memory while Redis cannot answer: the outage is logged once as it starts
 * (warn, with `unavailable`) and once as it ends (info, with `recovered`). What the shared limits run through.
 */
export class RedisOrMemory {
  private degraded = false;

  constructor(
    private readonly logger: Logger,
    private readonly messages: { unavailable: string; recovered: string },
  ) {}

  async run<T>(op: () => Promise<T>, fallback: () => T | Promise<T>): Promise<T> {
    try {
      const out = await op();
      if (this.degraded) {
        this.degraded = false;
        this.logger.info(this.messages.recovered);
      }
      return out;
    } catch (e) {
      if (!this.degraded) {
        this.degraded = true;
        this.logger.warn({ err: (e as Error).message }, this.messages.unavailable);
      }
      return fallback();
    }
  }
}

/**
 * Token buckets shared by every instance through Redis, so the per-project limits hold with N instances.
 * When Redis cannot answer, takes fall back to this instance's memory buckets (logged once per outage).
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly fallback = new MemoryRateLimiter();
  private readonly shared: RedisOrMemory;

  constructor(private readonly redis: Redis, logger: Logger, private readonly prefix = 'analytics:bucket:') {
    redis.defineCommand('analyticsTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    this.shared = new RedisOrMemory(logger, { unavailable: 'redis unavailable: using in-memory rate limits', recovered: 'redis rate limiter recovered' });
  }

  take(key: string, rule: BucketRule, cost = 1): Promise<TakeResult> {
    return this.shared.run(async () => {
      const [allowed, retry] = (await (this.redis as unknown as { analyticsTake: (...a: unknown[]) => Promise<[number, number]> }).analyticsTake(
        this.prefix + key, rule.ratePerS, rule.burst, cost,
      ));
      return { allowed: allowed === 1, retryAfterS: allowed === 1 ? 0 : Math.max(1, Number(retry)) };
    }, () => this.fallback.take(key, rule, cost));
  }
}
