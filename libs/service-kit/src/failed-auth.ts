import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError } from '@analytics/schema';
import { type BucketRule, MemoryRateLimiter, type TakeResult } from './rate-limiter';

export interface FailedAuthLimits {
  /** Failed authentications a client IP may have (all but those of existing key prefixes); over it, 429 before anything else runs. */
  perIp: BucketRule;
  /** Failed authentications an existing key prefix may have (wrong secrets, from any address); over it, they are 429. */
  perKey: BucketRule;
  /** 429s an IP or prefix over its budget gets at once; past them (it keeps sending without waiting), each is held for its Retry-After. */
  immediateRefusals: BucketRule;
  /** Answers held at once in the whole process; past it, 429s go out at once. */
  maxHeld: number;
}

export const DEFAULT_FAILED_AUTH_LIMITS: FailedAuthLimits = {
  perIp: { ratePerS: 20, burst: 200 },
  perKey: { ratePerS: 20, burst: 200 },
  immediateRefusals: { ratePerS: 5, burst: 10 },
  maxHeld: 10_000,
};

export interface FailedAuthOptions {
  clock?: () => number;
  /**
   * The existing key prefix a request presents, if any (from the app's authenticator: service-kit knows no keys). Its
   * failures are charged to that prefix instead of the client IP, and it is never refused before its secret is checked.
   */
  budgetKeyOf?: (req: Request) => string | undefined;
}

/** Where res.locals keeps the prefix budgetKeyOf found, between the check before the route and the 401 after it. */
const PREFIX = 'failedAuthPrefix';
const ALLOWED: TakeResult = { allowed: true, retryAfterS: 0 };

/**
 * Failed authentications are budgeted per existing key prefix, else per client IP, so a flood of bad keys is cut to
 * 429s while whoever holds a valid key keeps working (docs/operations.md, "Keys and failed authentication").
 */
export class FailedAuthBudget {
  private readonly buckets: MemoryRateLimiter;
  private held = 0;
  readonly budgetKeyOf: ((req: Request) => string | undefined) | undefined;

  constructor(
    readonly limits: FailedAuthLimits = DEFAULT_FAILED_AUTH_LIMITS,
    options: FailedAuthOptions = {},
  ) {
    this.buckets = new MemoryRateLimiter(options.clock);
    this.budgetKeyOf = options.budgetKeyOf;
  }

  /** Before the routes: refuses a request of an IP over its budget, unless it presents an existing key prefix. */
  readonly handle: RequestHandler = (req, res, next) => {
    // An internal secret is the IP's to guess, whatever key rides along with it.
    const prefix = req.headers.authorization !== undefined && req.headers['x-internal-secret'] === undefined ? this.budgetKeyOf?.(req) : undefined;
    if (prefix !== undefined) {
      res.locals[PREFIX] = prefix;
      return next();
    }
    const byIp = this.peekIp(req);
    if (byIp.allowed) return next();
    this.refuse(`ip:${ipOf(req)}`, byIp.retryAfterS, res, next);
  };

  /** After the routes, before the error middleware: charges a failed authentication and turns it into 429 past the budget. */
  readonly charge: ErrorRequestHandler = (err, req, res, next) => {
    // A request without a credential costs no lookup: it is not a failed authentication.
    if (!(err instanceof ApiError) || err.status !== 401 || !presentsCredential(req) || res.headersSent) return next(err);
    const prefix = res.locals[PREFIX] as string | undefined;
    let over: TakeResult;
    let who: string;
    if (prefix !== undefined) {
      const byKey = this.buckets.takeSync(`prefix:${prefix}`, this.limits.perKey);
      // An IP over its budget gets no more 401s from a prefix it may have learnt: only valid keys pass it.
      const byIp = this.peekIp(req);
      over = { allowed: byKey.allowed && byIp.allowed, retryAfterS: Math.max(byKey.retryAfterS, byIp.retryAfterS) };
      who = byKey.allowed ? `ip:${ipOf(req)}` : `prefix:${prefix}`;
    } else {
      over = isLoopback(ipOf(req)) ? ALLOWED : this.buckets.takeSync(`ip:${ipOf(req)}`, this.limits.perIp);
      who = `ip:${ipOf(req)}`;
    }
    if (over.allowed) return next(err);
    // The 401's challenge (MCP's WWW-Authenticate) does not belong on a 429.
    res.removeHeader('WWW-Authenticate');
    this.refuse(who, over.retryAfterS, res, next);
  };

  private peekIp(req: Request): TakeResult {
    // A loopback peer is this machine: a local client, or a proxy not declared in TRUST_PROXY, whose budget would be
    // every client's behind it (one flooder would lock them all out).
    return isLoopback(ipOf(req)) ? ALLOWED : this.buckets.peekSync(`ip:${ipOf(req)}`, this.limits.perIp);
  }

  /** 429 rate_limited at once for the first few refusals of `who`, then each after its Retry-After. */
  private refuse(who: string, retryAfterS: number, res: Response, next: NextFunction): void {
    const refuse = () => next(new ApiError('rate_limited', { retry_after_s: retryAfterS }));
    if (this.buckets.takeSync(`refused:${who}`, this.limits.immediateRefusals).allowed || this.held >= this.limits.maxHeld) return refuse();
    this.held++;
    const timer = setTimeout(() => {
      this.held--;
      refuse();
    }, retryAfterS * 1000);
    res.once('close', () => {
      if (!res.writableEnded) {
        clearTimeout(timer);
        this.held--;
      }
    });
  }
}

const presentsCredential = (req: Request) => req.headers.authorization !== undefined || req.headers['x-internal-secret'] !== undefined;

const ipOf = (req: Request) => req.ip ?? '';
const isLoopback = (ip: string) => ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');
