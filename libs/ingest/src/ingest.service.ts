import { ApiError, type BrowserIdentifyInput, type EventInput, type EventRow, identifyInputSchema, parseOrThrow } from '@analytics/schema';
import { type RequestContext, createEnricher, derivedAnonymousId } from '@analytics/enrichment';
import { type EventStore, farMonthCount } from '@analytics/event-store';
import type { BucketRule, RateLimiter } from '@analytics/service-kit';
import { clockSkewOf, withClockSkewCorrected } from './clock-skew';
import { MemoryVisitState, VISIT_CAP_MS, type VisitState } from './visit-state';
import { assignVisits } from './visits';

export interface RateRules {
  track: BucketRule;
  batch: BucketRule;
}

export const DEFAULT_RATE_RULES: RateRules = {
  track: { ratePerS: 50, burst: 200 },
  batch: { ratePerS: 5, burst: 20 },
};

export interface IngestDeps {
  store: EventStore;
  limiter: RateLimiter;
  rateRules?: RateRules;
  /**
   * Where visits by inactivity are kept: RedisVisitState (REDIS_URL, shared by every replica) or MemoryVisitState;
   * unset, a MemoryVisitState of this service.
   */
  visits?: VisitState;
  /** SESSION_IDLE_MINUTES in ms: a visit ends after this long without an event (default 30 minutes). */
  sessionIdleMs?: number;
}

export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;

/**
 * The ingest functions shared by ingest-api and mcp-gateway. Inputs are already authenticated and validated;
 * each call applies the rate limit, enriches (once per request) and resolves after the rows are written.
 */
export class IngestService {
  private readonly rules: RateRules;
  private readonly visitRules: { idleMs: number; capMs: number };
  private readonly visits: VisitState;

  constructor(private readonly deps: IngestDeps) {
    this.rules = deps.rateRules ?? DEFAULT_RATE_RULES;
    this.visitRules = { idleMs: deps.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS, capMs: VISIT_CAP_MS };
    this.visits = deps.visits ?? new MemoryVisitState(this.visitRules);
  }

  /** Enriches the request's events, then gives those without session_id their visit by inactivity (one state call). */
  private async enriched(ctx: RequestContext, inputs: EventInput[]): Promise<EventRow[]> {
    const rows = inputs.map(createEnricher(ctx));
    await assignVisits(this.visits, ctx, inputs, rows, this.visitRules, { derivedId: derivedAnonymousId(ctx) });
    return rows;
  }

  /** Token bucket per (project, route); throws 429 rate_limited with retry_after_s. Identify and forget are unlimited. */
  private async rateLimit(projectId: string, route: keyof RateRules, cost = 1): Promise<void> {
    const r = await this.deps.limiter.take(`${projectId}:${route}`, this.rules[route], Math.min(cost, this.rules[route].burst));
    if (!r.allowed) throw new ApiError('rate_limited', { retry_after_s: r.retryAfterS });
  }

  async track(ctx: RequestContext, input: EventInput): Promise<{ event_id: string }> {
    await this.rateLimit(ctx.projectId, 'track');
    const [row] = await this.enriched(ctx, [input]);
    await this.deps.store.write([row!]);
    return { event_id: row!.event_id };
  }

  /**
   * A batch costs one token, or one per month partition it writes outside the live months when that is more (at most
   * the bucket's burst): each such month is a part of its own in the store, as if it were a batch of its own.
   * With `sentAtMs` (the body's `sent_at`), the timestamps of a device whose clock is off by more than
   * LIMITS.clockSkewToleranceMs are moved to the server's clock (clock-skew.ts); without it they stay as sent (the spec).
   */
  async batch(ctx: RequestContext, sent: EventInput[], sentAtMs?: number): Promise<{ count: number }> {
    const inputs = withClockSkewCorrected(sent, clockSkewOf(sentAtMs, ctx.nowMs));
    await this.rateLimit(ctx.projectId, 'batch', Math.max(1, farMonthCount(inputs.map((e) => e.timestamp), ctx.nowMs)));
    const rows = await this.enriched(ctx, inputs);
    await this.deps.store.write(rows);
    return { count: rows.length };
  }

  /**
   * Stores a `$identify` event binding anonymous_id to user_id, with traits as properties. Earlier events stay as they
   * are. Without anonymous_id, a `derived` (pk_) request binds the caller's daily visitor id.
   */
  async identify(ctx: RequestContext, input: BrowserIdentifyInput): Promise<void> {
    // Other requests must send anonymous_id: the strict schema answers 400 invalid_payload with its details.
    const anonymousId = input.anonymous_id ?? derivedAnonymousId(ctx) ?? parseOrThrow(identifyInputSchema, input).anonymous_id;
    const rows = await this.enriched(ctx, [{
      event: '$identify',
      anonymous_id: anonymousId,
      user_id: input.user_id,
      properties: input.traits,
    } as EventInput]);
    await this.deps.store.write(rows);
  }
}
