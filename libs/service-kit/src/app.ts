import { randomUUID } from 'node:crypto';
import cors from 'cors';
import express, { type Express, type Request, type RequestHandler, type Response, Router } from 'express';
import { ApiError, routes } from '@analytics/schema';
import { defineRoute, routerOf } from './define-route';
import { errorMiddleware } from './errors.middleware';
import { type FailedAuthLimits, FailedAuthBudget } from './failed-auth';
import { type BodyLimits, DEFAULT_BODY_LIMITS, withBodyLimits } from './json-body';
import { type EventStoreGauges, ServiceMetrics } from './metrics';
import { redactPath } from './redact';
import type { Logger } from './logger';

export interface ServiceAppOptions {
  /** Name answered by GET /healthz and in the X-Service header of every response (proves which app a proxy reached). */
  name: string;
  logger: Logger;
  /** express `trust proxy` value, from TRUST_PROXY. */
  trustProxy?: boolean | number | string[];
  /** Routers mounted in order at the root. */
  routers: Router[];
  /** GET /readyz: the stores this app uses, by name; each must answer within `readyTimeoutMs`. */
  ready?: Record<string, () => Promise<unknown>>;
  readyTimeoutMs?: number;
  /** The existing key prefix a request presents: its failed authentications are budgeted per prefix, not per IP (FailedAuthBudget). */
  budgetKeyOf?: (req: Request) => string | undefined;
  /** This process's budgets (BODY_*, AUTH_FAILURES_*); unset: the defaults. */
  limits?: ServiceLimits;
  /** Time of the failed-authentication buckets (tests). */
  clock?: () => number;
  /** METRICS_TOKEN: when set, GET /metrics requires `Authorization: Bearer <token>`. */
  metricsToken?: string;
  /** The event store this app uses, for the read-queue and aggregate-lag gauges of GET /metrics. */
  eventStore?: EventStoreGauges;
}

/** One per process: standalone mounts every router on one app, so each budget covers the whole service. */
export interface ServiceLimits {
  body?: BodyLimits;
  failedAuth?: FailedAuthLimits;
}

/** What every app's buildApp takes besides its routes' dependencies. */
export type ServiceAppBase = Pick<ServiceAppOptions, 'logger' | 'trustProxy' | 'limits' | 'metricsToken'>;

const corsMiddleware = cors({
  origin: '*',
  methods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
  allowedHeaders: ['Authorization', 'Content-Type', 'Mcp-Session-Id', 'Mcp-Protocol-Version'],
  exposedHeaders: ['Retry-After'],
  maxAge: 86_400,
});

/**
 * Emitted on an app (`app.emit`) when its server stops accepting (libs/runtime serve, at SIGTERM): answers that would
 * stay open, such as GET /v1/live's event streams, end on it so the server's close does not wait for them.
 */
export const STOPPING_EVENT = 'analytics:stopping';

/**
 * The express app every service shares: CORS, error envelope, 404/405, liveness and readiness, request logs. Never sets
 * cookies. No global body parser: each route mounts `jsonBody()` after its credential check (the spec's order).
 */
export function createServiceApp(options: ServiceAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', options.trustProxy ?? false);

  // GET /metrics (Prometheus): one registry per app; every answer below is counted by its route pattern.
  const metrics = new ServiceMetrics({ token: options.metricsToken, eventStore: options.eventStore, bodyBudget: (options.limits?.body ?? DEFAULT_BODY_LIMITS).budget });
  app.use(metrics.observe);
  app.use(requestLog(options.logger));
  // Every answer (errors and 404s included) names the service that gave it: behind the path-routing proxy this
  // shows which deployable a path reached (docker/README.md; the deploy checks rely on it). A name, not a version.
  app.use((_req, res, next) => {
    res.setHeader('X-Service', options.name);
    next();
  });
  const failedAuth = new FailedAuthBudget(options.limits?.failedAuth, { budgetKeyOf: options.budgetKeyOf, clock: options.clock });
  app.use(failedAuth.handle);
  if (options.limits?.body) app.use(withBodyLimits(options.limits.body));
  app.use(['/v1', '/admin', '/auth', '/mcp'], corsMiddleware);

  // Liveness answers without touching a store; readiness pings every store the app uses.
  app.use(routerOf({}, [defineRoute(routes.healthz, () => ({ ok: true, service: options.name }))]));
  app.get(routes.readyz.path, readiness(options.ready ?? {}, options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS, options.name));
  app.get(routes.metrics.path, metrics.serve);
  for (const router of options.routers) app.use(router);
  app.use(methodNotAllowed(options.routers));

  app.use((_req, _res, next) => next(new ApiError('not_found')));
  // A 401 is charged to its budget before the error middleware answers it: past the budget, it goes out as 429.
  app.use(failedAuth.charge);
  app.use(errorMiddleware(options.logger));
  return app;
}

const DEFAULT_READY_TIMEOUT_MS = 2_000;

function readiness(checks: Record<string, () => Promise<unknown>>, timeoutMs: number, service: string): RequestHandler {
  return async (_req, res) => {
    const results = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<string>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), timeoutMs);
        });
        const outcome = await Promise.race([check().then(() => 'ok', () => 'failed'), timeout]);
        clearTimeout(timer);
        return [name, outcome] as const;
      }),
    );
    const status = Object.fromEntries(results);
    if (results.every(([, outcome]) => outcome === 'ok')) res.json({ ok: true, service, checks: status });
    else res.status(503).json(new ApiError('not_ready', { checks: status }).toBody());
  };
}

type RouteLayer = { route?: { path: unknown; methods: Record<string, boolean> } };

/**
 * 405 with `Allow` for a known path called with another method (`GET /v1/track`), derived from the routers' own
 * routes so it cannot drift. Paths whose router answers every method itself (`router.all`) are left to it.
 */
export function methodNotAllowed(routers: Router[]): Router {
  const methods = new Map<string, Set<string>>();
  const selfAnswered = new Set<string>();
  for (const router of routers) {
    for (const layer of router.stack as RouteLayer[]) {
      if (!layer.route || typeof layer.route.path !== 'string') continue;
      const path = layer.route.path;
      if (layer.route.methods['_all']) selfAnswered.add(path);
      const set = methods.get(path) ?? new Set<string>();
      for (const [m, on] of Object.entries(layer.route.methods)) if (on && m !== '_all') set.add(m.toUpperCase());
      if (set.has('GET')) set.add('HEAD');
      methods.set(path, set);
    }
  }
  const out = Router();
  for (const [path, set] of methods) {
    if (selfAnswered.has(path)) continue;
    const allow = [...set].sort().join(', ');
    out.all(path, (_req, res, next) => {
      res.setHeader('Allow', allow);
      next(new ApiError('method_not_allowed', { allowed: [...set].sort() }));
    });
  }
  return out;
}

/** Logs this request's path as a fixed route pattern (`/token`) instead of the path it arrived with. */
export function logRouteAs(res: Response, pattern: string): void {
  res.locals['logRoute'] = pattern;
}

function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    // Read before routing: a router mounted at a path (`router.use('/authorize', …)`) strips it from req.path.
    const path = req.path;
    res.locals.reqId = randomUUID();
    res.on('finish', () => {
      if (!logger.isLevelEnabled('debug')) return;
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const route = res.locals['logRoute'];
      logger.debug({ reqId: res.locals.reqId, method: req.method, path: typeof route === 'string' ? route : redactPath(path), status: res.statusCode, ms }, 'request');
    });
    next();
  };
}
