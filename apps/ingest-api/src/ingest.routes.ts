import { Router } from 'express';
import { type Authenticator, authOf, requireKey } from '@analytics/auth';
import { type EventStore, forgetUser } from '@analytics/event-store';
import { type IngestService, requestContexts } from '@analytics/ingest';
import { readJsonBody } from '@analytics/service-kit';
import {
  type BatchResponse,
  type ForgetResponse,
  type IdentifyResponse,
  type TrackResponse,
  batchInputSchema,
  browserIdentifyInputSchema,
  eventInputSchema,
  forgetInputSchema,
  identifyInputSchema,
  parseOrThrow,
} from '@analytics/schema';

export interface IngestRouterDeps {
  authenticator: Authenticator;
  ingest: IngestService;
  events: EventStore;
  ipHashSecret: string;
  clock?: () => number;
}

/**
 * POST /v1/track, /v1/batch, /v1/identify, /v1/forget. Order per the spec: auth (key, scope, Origin), then the body is read
 * and validated, rate limit, enrichment, insert: a refused request's body is never parsed.
 */
export function createIngestRouter(deps: IngestRouterDeps): Router {
  const router = Router();
  const context = requestContexts(deps.ipHashSecret, deps.clock);

  router.post('/v1/track', requireKey(deps.authenticator, 'ingest'), async (req, res) => {
    const input = parseOrThrow(eventInputSchema, await readJsonBody(req, res));
    const { event_id } = await deps.ingest.track(context(req, authOf(res)), input);
    res.status(202).json({ ok: true, event_id } satisfies TrackResponse);
  });

  router.post('/v1/batch', requireKey(deps.authenticator, 'ingest'), async (req, res) => {
    const { events } = parseOrThrow(batchInputSchema, await readJsonBody(req, res));
    const { count } = await deps.ingest.batch(context(req, authOf(res)), events);
    res.status(202).json({ ok: true, count } satisfies BatchResponse);
  });

  router.post('/v1/identify', requireKey(deps.authenticator, 'ingest'), async (req, res) => {
    const auth = authOf(res);
    const input = parseOrThrow(auth.kind === 'pk' ? browserIdentifyInputSchema : identifyInputSchema, await readJsonBody(req, res));
    await deps.ingest.identify(context(req, auth), input);
    res.status(200).json({ ok: true } satisfies IdentifyResponse);
  });

  router.post('/v1/forget', requireKey(deps.authenticator, 'forget'), async (req, res) => {
    const { user_id } = parseOrThrow(forgetInputSchema, await readJsonBody(req, res));
    await forgetUser(deps.events, authOf(res).projectId, user_id);
    res.status(202).json({ ok: true, queued: true } satisfies ForgetResponse);
  });

  return router;
}
