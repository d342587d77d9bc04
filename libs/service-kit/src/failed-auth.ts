import type { RequestHandler } from 'express';
import { ApiError } from '@analytics/schema';
import { type BucketRule, MemoryRateLimiter } from './rate-limiter';

export interface FailedAuthLimits {
  /** Failed authentications (401 answers) a client IP may have; over it, 429 before anything else runs. */
  perIp: BucketRule;
  /** 429s an IP over its budget gets at once; past them (it keeps sending without waiting), each is held for its Retry-After. */
  immediateRefusals: BucketRule;
  /** Answers held at once in the whole process; past it, 429s go out at once. */
  maxHeld: number;
}

export const DEFAULT_FAILED_AUTH_LIMITS: FailedAuthLimits = { perIp: { ratePerS: 20, burst: 200 }, immediateRefusals: { ratePerS: 5, burst: 10 }, maxHeld: 10_000 };

/**
 * Failed authentications budgeted per client IP (as `trust proxy` decides it), on every route: each 401 answered to a
 * presented credential (API key, admin token, internal secret) takes a token; an IP without tokens gets 429 rate_limited with Retry-After before its key, body or route is looked at.
 * A client that keeps sending without waiting gets its further 429s only after their Retry-After: a closed-loop flood
 * then runs at one request per connection and second instead of as fast as the service can refuse it.
 */
export class FailedAuthBudget {
  private readonly buckets: MemoryRateLimiter;
  private held = 0;

  constructor(
    readonly limits: FailedAuthLimits = DEFAULT_FAILED_AUTH_LIMITS,
    clock?: () => number,
  ) {
    this.buckets = new MemoryRateLimiter(clock);
  }

  readonly handle: RequestHandler = (req, res, next) => {
    const ip = req.ip ?? '';
    // A loopback peer is this machine: a local client, or a proxy not declared in TRUST_PROXY, whose budget would be
    // every client's behind it (one flooder would lock them all out).
    if (isLoopback(ip)) return next();
    const budget = this.buckets.peekSync(ip, this.limits.perIp);
    if (budget.allowed) {
      // A failed authentication: a credential was presented and refused (a request without one costs no lookup).
      if (req.headers.authorization !== undefined || req.headers['x-internal-secret'] !== undefined) {
        res.once('finish', () => {
          if (res.statusCode === 401) this.buckets.takeSync(ip, this.limits.perIp);
        });
      }
      return next();
    }
    const refuse = () => next(new ApiError('rate_limited', { retry_after_s: budget.retryAfterS }));
    if (this.buckets.takeSync(`refused:${ip}`, this.limits.immediateRefusals).allowed || this.held >= this.limits.maxHeld) return refuse();
    this.held++;
    const timer = setTimeout(() => {
      this.held--;
      refuse();
    }, budget.retryAfterS * 1000);
    res.once('close', () => {
      if (!res.writableEnded) {
        clearTimeout(timer);
        this.held--;
      }
    });
  };
}

const isLoopback = (ip: string) => ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');

/** The failed-authentication budget of an app (one per process: standalone mounts every router on one app). */
export function setFailedAuthLimits(app: { locals: Record<string, unknown> }, limits: FailedAuthLimits): void {
  app.locals['failedAuth'] = new FailedAuthBudget(limits);
}
