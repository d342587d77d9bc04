import type { Request, Router } from 'express';
import { type AuthContext, type Authenticator, keyGuard } from '@analytics/auth';
import type { RequestContext } from '@analytics/enrichment';
import { type EventStore, forgetUser } from '@analytics/event-store';
import type { IngestService } from '@analytics/ingest';
import { defineRoute, routerOf } from '@analytics/service-kit';
import { browserIdentifyInputSchema, identifyInputSchema, routes } from '@analytics/schema';

export interface IngestRouterDeps {
  authenticator: Authenticator;
  ingest: IngestService;
  events: EventStore;
  ipHashSecret: string;
  clock?: () => number;
}

/**
 * POST /v1/track, /v1/batch, /v1/identify, /v1/forget. Order per the spec: auth (key, scope, Origin), then the body is read
 * and validated (defineRoute), rate limit, enrichment, insert (IngestService): a refused request's body is never parsed.
 */
export function createIngestRouter(deps: IngestRouterDeps): Router {
  const now = deps.clock ?? Date.now;
  const context = (req: Request, { projectId, kind }: AuthContext): RequestContext => ({
    projectId,
    ip: req.ip,
    userAgent: req.get('user-agent'),
    host: req.get('host'),
    nowMs: now(),
    ipHashSecret: deps.ipHashSecret,
    // pk_ callers are browsers that may store nothing on the device: their events without ids get the daily visitor id.
    anonymousIds: kind === 'pk' ? 'derived' : 'random',
  });

  return routerOf({ apiKey: keyGuard(deps.authenticator) }, [
    defineRoute(routes.track, async ({ body }, auth, { req }) => {
      const { event_id } = await deps.ingest.track(context(req, auth), body);
      return { ok: true, event_id };
    }),
    defineRoute(routes.batch, async ({ body }, auth, { req }) => {
      const { count } = await deps.ingest.batch(context(req, auth), body.events);
      return { ok: true, count };
    }),
    defineRoute(
      routes.identify,
      async ({ body }, auth, { req }) => {
        await deps.ingest.identify(context(req, auth), body);
        return { ok: true };
      },
      // A pk_ key may omit anonymous_id: the caller's daily visitor id is bound instead.
      { body: (auth) => (auth.kind === 'pk' ? browserIdentifyInputSchema : identifyInputSchema) },
    ),
    defineRoute(routes.forget, async ({ body }, auth) => {
      await forgetUser(deps.events, auth.projectId, body.user_id);
      return { ok: true, queued: true };
    }),
  ]);
}
