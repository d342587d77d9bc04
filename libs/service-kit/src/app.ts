import { randomUUID } from 'node:crypto';
import cors from 'cors';
import express, { type Express, type RequestHandler, type Router } from 'express';
import { ApiError } from '@analytics/schema';
import { errorMiddleware } from './errors.middleware';
import type { Logger } from './logger';

/** Largest body: a 1000-event batch with every field at its limit (8 KB properties, three 2 KB URLs, ids) fits. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

export interface ServiceAppOptions {
  /** Name answered by GET /healthz and in the X-Service header of every response (proves which app a proxy reached). */
  name: string;
  logger: Logger;
  /** express `trust proxy` value, from TRUST_PROXY. */
  trustProxy?: boolean | number | string[];
  /** Routers mounted in order at the root. */
  routers: Router[];
  /** Path prefixes whose routers parse (and answer errors of) their own bodies, e.g. JSON-RPC's /mcp. */
  selfParsedPaths?: string[];
  /** Extra readiness check for /healthz (e.g. store ping). */
  health?: () => Promise<void>;
}

const corsMiddleware = cors({
  origin: '*',
  methods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
  allowedHeaders: ['Authorization', 'Content-Type', 'Mcp-Session-Id', 'Mcp-Protocol-Version'],
  exposedHeaders: ['Retry-After'],
  maxAge: 86_400,
});

/** The express app every service shares: JSON bodies, CORS, error envelope, 404, health, request logs. Never sets cookies. */
export function createServiceApp(options: ServiceAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', options.trustProxy ?? false);

  app.use(requestLog(options.logger));
  // Every answer (errors and 404s included) names the service that gave it: behind the path-routing proxy this
  // shows which deployable a path reached (docker/README.md; the deploy checks rely on it). A name, not a version.
  app.use((_req, res, next) => {
    res.setHeader('X-Service', options.name);
    next();
  });
  app.use(['/v1', '/admin', '/mcp'], corsMiddleware);
  const json = jsonBody();
  const selfParsed = options.selfParsedPaths ?? [];
  app.use((req, res, next) => (selfParsed.some((p) => req.path.startsWith(p)) ? next() : json(req, res, next)));

  app.get('/healthz', async (_req, res) => {
    if (options.health) await options.health();
    res.json({ ok: true, service: options.name });
  });
  for (const router of options.routers) app.use(router);

  app.use((_req, _res, next) => next(new ApiError('not_found')));
  app.use(errorMiddleware(options.logger));
  return app;
}

/** JSON bodies up to MAX_BODY_BYTES; sendBeacon can only send text/plain without a preflight, so that type is JSON too. */
export function jsonBody(): RequestHandler {
  return express.json({ limit: MAX_BODY_BYTES, type: ['application/json', 'application/*+json', 'text/plain'], strict: false });
}

function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.locals.reqId = randomUUID();
    res.on('finish', () => {
      if (!logger.isLevelEnabled('debug')) return;
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      logger.debug({ reqId: res.locals.reqId, method: req.method, path: req.path, status: res.statusCode, ms }, 'request');
    });
    next();
  };
}
