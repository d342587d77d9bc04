import { Router } from 'express';
import { type Authenticator, authOf, requireKey } from '@analytics/auth';
import { type EventStore, queryEvents, querySources, queryStats } from '@analytics/event-store';
import { type QueryResponse, type SourcesResponse, type StatsResponse, parseOrThrow, queryParamsSchema, sourcesParamsSchema, statsParamsSchema } from '@analytics/schema';

export interface ReadRouterDeps {
  authenticator: Authenticator;
  events: EventStore;
}

/**
 * GET /v1/query, /v1/stats, /v1/sources for `rk_` keys. Order: auth (pk/sk get 403 insufficient_scope), then
 * 400 invalid_params for the query string, then (stats) 400 invalid_group_by. Every query is scoped to the key's project.
 */
export function createReadRouter(deps: ReadRouterDeps): Router {
  const router = Router();
  const auth = requireKey(deps.authenticator, 'read');

  router.get('/v1/query', auth, async (req, res) => {
    const params = parseOrThrow(queryParamsSchema, req.query, 'invalid_params');
    res.json({ rows: await queryEvents(deps.events, authOf(res).projectId, params) } satisfies QueryResponse);
  });

  router.get('/v1/stats', auth, async (req, res) => {
    const params = parseOrThrow(statsParamsSchema, req.query, 'invalid_params');
    const { metric, rows } = await queryStats(deps.events, authOf(res).projectId, params);
    res.json({ metric, rows } satisfies StatsResponse);
  });

  router.get('/v1/sources', auth, async (req, res) => {
    const params = parseOrThrow(sourcesParamsSchema, req.query, 'invalid_params');
    const { breakdown, rows } = await querySources(deps.events, authOf(res).projectId, params);
    res.json({ breakdown, rows } satisfies SourcesResponse);
  });

  return router;
}
