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

/** Buckets in this process's memory (the spec's default: limits are per instance). */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number = Date.now) {}

  async take(key: string, rule: BucketRule, cost = 1): Promise<TakeResult> {
    return this.takeSync(key, rule, cost);
  }

  takeSync(key: string, rule: BucketRule, cost = 1): TakeResult {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: rule.burst, at: now };
    bucket.tokens = Math.min(rule.burst, bucket.tokens + ((now - bucket.at) / 1000) * rule.ratePerS);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= cost) {
      bucket.tokens -= cost;
      return { allowed: true, retryAfterS: 0 };
    }
    return { allowed: false, retryAfterS: Math.max(1, Math.ceil((cost - bucket.tokens) / rule.ratePerS)) };
  }
}
