import { LRUCache } from 'lru-cache';

export interface BucketRule {
  /** Tokens added per second. */
  ratePerS: number;
  /** Bucket capacity. */
  burst: number;
}

export interface TakeResult {
  allowed: boolean;
  /** Whole seconds until enough tokens are back (0 when allowed). */
  retryAfterS: number;
}

/** Token buckets keyed by (project, route). */
export interface RateLimiter {
  take(key: string, rule: BucketRule, cost?: number): Promise<TakeResult>;
}

interface Bucket {
  tokens: number;
  at: number;
}

const verdict = (bucket: Bucket, rule: BucketRule, cost: number): TakeResult =>
  bucket.tokens >= cost ? { allowed: true, retryAfterS: 0 } : { allowed: false, retryAfterS: Math.max(1, Math.ceil((cost - bucket.tokens) / rule.ratePerS)) };

/**
 * Buckets in this process's memory (the spec's default: limits are per instance). At most `maxBuckets` are kept, least
 * recently used dropped first (a dropped bucket is a full one), so keys an attacker chooses (client IPs) cannot grow it.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets: LRUCache<string, Bucket>;

  constructor(
    private readonly now: () => number = Date.now,
    maxBuckets = 100_000,
  ) {
    this.buckets = new LRUCache<string, Bucket>({ max: maxBuckets });
  }

  async take(key: string, rule: BucketRule, cost = 1): Promise<TakeResult> {
    return this.takeSync(key, rule, cost);
  }

  takeSync(key: string, rule: BucketRule, cost = 1): TakeResult {
    const bucket = this.refill(key, rule);
    const result = verdict(bucket, rule, cost);
    if (result.allowed) bucket.tokens -= cost;
    return result;
  }

  /** Whether a take of `cost` would be allowed now, without taking. */
  peekSync(key: string, rule: BucketRule, cost = 1): TakeResult {
    return verdict(this.refill(key, rule), rule, cost);
  }

  private refill(key: string, rule: BucketRule): Bucket {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: rule.burst, at: now };
    bucket.tokens = Math.min(rule.burst, bucket.tokens + ((now - bucket.at) / 1000) * rule.ratePerS);
    bucket.at = now;
    this.buckets.set(key, bucket);
    return bucket;
  }
}
