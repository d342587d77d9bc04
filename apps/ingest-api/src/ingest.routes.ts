import type { Router } from 'express';
import { type Authenticator, keyGuard } from '@analytics/auth';
import { type EventStore, forgetUser } from '@analytics/event-store';
import { type IngestService, requestContexts, writeCapabilities } from '@analytics/ingest';
import { countIngested, defineRoute, routerOf } from '@analytics/service-kit';
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
  const context = requestContexts(deps.ipHashSecret, deps.clock);

  return routerOf({ apiKey: keyGuard(deps.authenticator) }, [
    // The capability MCP's track_event runs too (libs/ingest's writeCapabilities).
    defineRoute(routes.track, async ({ body }, auth, { req, res }) => {
      const result = await writeCapabilities.track(deps.ingest, context(req, auth), body);
      countIngested(res, 1);
      return result;
    }),
    defineRoute(routes.batch, async ({ body }, auth, { req, res }) => {
      const { count } = await deps.ingest.batch(context(req, auth), body.events, body.sent_at);
      countIngested(res, count);
      return { ok: true, count };
    }),
    defineRoute(
      routes.identify,
      async ({ body }, auth, { req, res }) => {
        await deps.ingest.identify(context(req, auth), body);
        countIngested(res, 1); // one $identify event
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
