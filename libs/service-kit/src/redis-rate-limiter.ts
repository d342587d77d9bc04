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
 * Token buckets shared by every instance through Redis, so the per-project limits hold with N instances.
 * When Redis cannot answer, takes fall back to this instance's memory buckets (logged once per outage).
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly fallback = new MemoryRateLimiter();
  private degraded = false;

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    private readonly prefix = 'analytics:bucket:',
  ) {
    redis.defineCommand('analyticsTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
  }

  async take(key: string, rule: BucketRule, cost = 1): Promise<TakeResult> {
    try {
      const [allowed, retry] = (await (this.redis as unknown as { analyticsTake: (...a: unknown[]) => Promise<[number, number]> }).analyticsTake(
        this.prefix + key, rule.ratePerS, rule.burst, cost,
      ));
      if (this.degraded) {
        this.degraded = false;
        this.logger.info('redis rate limiter recovered');
      }
      return { allowed: allowed === 1, retryAfterS: allowed === 1 ? 0 : Math.max(1, Number(retry)) };
    } catch (e) {
      if (!this.degraded) {
        this.degraded = true;
        this.logger.warn({ err: (e as Error).message }, 'redis unavailable: using in-memory rate limits');
      }
      return this.fallback.take(key, rule, cost);
    }
  }
}
