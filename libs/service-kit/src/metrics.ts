import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ApiError } from '@analytics/schema';
import type { ByteBudget } from './byte-budget';

/**
 * Prometheus metrics of one app instance (GET /metrics, docs/operations.md, "Metrics"): one Registry per app, never prom-client's
 * global one, so several apps in one process (tests, `npm start` beside a test app) keep their own counts.
 *
 * Labels are fixed vocabularies only: a method, a route pattern from the route declarations (never a raw path), a
 * status, a refusal reason. No project id, key, IP or user id ever becomes a label (cardinality and privacy).
 */

/** What the event store tells the metrics (structural: service-kit knows no store). */
export interface EventStoreGauges {
  /** Reads waiting for their turn at the read gate. */
  readonly readQueueDepth: number;
  /** Seconds the aggregate builder is behind the oldest acknowledged INSERT it has not built (0 when caught up). */
  aggregateLagSeconds(): number;
  /** This process builds the aggregates (a server: it holds the builder's lease). */
  readonly buildingAggregates?: boolean;
}

export interface MetricsOptions {
  /** METRICS_TOKEN: when set, GET /metrics requires `Authorization: Bearer <token>`. */
  token?: string;
  eventStore?: EventStoreGauges;
  /** The process's body budget (its bytes in use). */
  bodyBudget?: ByteBudget;
}

/** The `reason` of analytics_refusals_total. */
export type RefusalReason = 'rate_limited' | 'failed_auth' | 'server_busy';

/** Route label of a request no route matched (a 404): never the raw path. */
export const UNMATCHED_ROUTE = 'unmatched';

const METRICS_LOCAL = 'metrics';
const ERROR_LOCAL = 'errorCode';

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly duration: Histogram<'method' | 'route'>;
  private readonly ingested: Counter;
  private readonly refusals: Counter<'reason'>;
  private defaultsOn = false;

  constructor(private readonly options: MetricsOptions = {}) {
    const registers = [this.registry];
    this.requests = new Counter({ name: 'analytics_http_requests_total', help: 'HTTP requests answered, by method, route pattern and status.', labelNames: ['method', 'route', 'status'], registers });
    this.duration = new Histogram({
      name: 'analytics_http_request_duration_seconds',
      help: 'Time from a request arriving to its answer being sent, by method and route pattern.',
      labelNames: ['method', 'route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.ingested = new Counter({ name: 'analytics_events_ingested_total', help: 'Events acknowledged (track, batch, identify, MCP track_event).', registers });
    this.refusals = new Counter({ name: 'analytics_refusals_total', help: 'Requests refused: rate_limited (429), failed_auth (401), server_busy (503).', labelNames: ['reason'], registers });
    for (const reason of ['rate_limited', 'failed_auth', 'server_busy'] as const) this.refusals.inc({ reason }, 0);
    const store = options.eventStore;
    new Gauge({
      name: 'analytics_aggregate_lag_seconds',
      help: 'How far the aggregate builder is behind the oldest acknowledged insert it has not built (0 when caught up; on a ClickHouse server only the process that builds reports it, the others 0).',
      registers,
      collect() {
        this.set(store ? store.aggregateLagSeconds() : 0);
      },
    });
    new Gauge({
      name: 'analytics_aggregate_builder_active',
      help: 'This process builds the aggregates (1): the embedded store always; on a ClickHouse server the one process holding the builder lease.',
      registers,
      collect() {
        this.set(store?.buildingAggregates ? 1 : 0);
      },
    });
    new Gauge({
      name: 'analytics_read_queue_depth',
      help: 'Reads waiting for their turn at the read gate.',
      registers,
      collect() {
        this.set(store ? store.readQueueDepth : 0);
      },
    });
    const budget = options.bodyBudget;
    new Gauge({
      name: 'analytics_body_budget_bytes_in_use',
      help: 'Bytes of request bodies in flight, of the process body budget (BODY_BUDGET_BYTES).',
      registers,
      collect() {
        this.set(budget ? budget.inUse : 0);
      },
    });
  }

  /** Before the routes: times the request and counts it by the route pattern it matched once it is answered. */
  readonly observe: RequestHandler = (req, res, next) => {
    res.locals[METRICS_LOCAL] = this;
    const end = this.duration.startTimer();
    res.once('finish', () => {
      const route = routeLabel(req, res);
      const method = METHODS.has(req.method) ? req.method : 'OTHER';
      end({ method, route });
      this.requests.inc({ method, route, status: String(res.statusCode) });
      const reason = refusalOf(res.statusCode, res.locals[ERROR_LOCAL]);
      if (reason) this.refusals.inc({ reason });
    });
    next();
  };

  /** GET /metrics: the Prometheus text format, behind METRICS_TOKEN when it is set. */
  readonly serve: RequestHandler = async (req, res) => {
    if (this.options.token !== undefined && !bearerIs(req, this.options.token)) throw new ApiError('unauthorized');
    if (!this.defaultsOn) {
      // Process and Node metrics (CPU, memory, event loop, GC), started with the first scrape: an app built and
      // never scraped (tests build hundreds) leaves no GC observer or event-loop monitor behind.
      collectDefaultMetrics({ register: this.registry });
      this.defaultsOn = true;
    }
    res.setHeader('Content-Type', this.registry.contentType);
    res.end(await this.registry.metrics());
  };

  countIngested(events: number): void {
    if (events > 0) this.ingested.inc(events);
  }
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * The route pattern a request matched: the declared path (`/admin/projects/:id`) of the route that answered, the fixed
 * pattern a handler logs it as (logRouteAs: OAuth's paths), the mount of a static router (`/assets/*`), else `unmatched`.
 */
function routeLabel(req: Request, res: Response): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path === 'string') return `${req.baseUrl}${path}`;
  const logged = res.locals['logRoute'];
  if (typeof logged === 'string') return logged;
  // A static router mounted at a fixed path (`router.use('/assets', express.static(…))`) that served a file: its mount.
  // Our mounts are literal paths, so baseUrl is the pattern; a miss there calls next(), which resets baseUrl.
  if (req.baseUrl && res.statusCode < 400) return `${req.baseUrl}/*`;
  return UNMATCHED_ROUTE;
}

function refusalOf(status: number, code: unknown): RefusalReason | undefined {
  if (status === 429) return 'rate_limited';
  if (status === 401) return 'failed_auth';
  if (status === 503 && code === 'server_busy') return 'server_busy';
  return undefined;
}

/** Counts `events` acknowledged by the request answering on `res` (no-op outside an app with metrics). */
export function countIngested(res: Response | undefined, events: number): void {
  (res?.locals[METRICS_LOCAL] as ServiceMetrics | undefined)?.countIngested(events);
}

/** The error code an answer carried (the error middleware and other envelopes record it): a 503's refusal reason. */
export function recordErrorCode(res: Response, code: string): void {
  res.locals[ERROR_LOCAL] = code;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

function bearerIs(req: Request, token: string): boolean {
  const m = /^Bearer[ \t]+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
  return m !== null && timingSafeEqual(digest(m[1]!), digest(token));
}
