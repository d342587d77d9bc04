import type { Router } from 'express';
import { type Authenticator, keyGuard } from '@analytics/auth';
import { type EventStore, queryEvents, queryFunnel, queryInsights, queryProperties, queryRetention, querySources, queryStats } from '@analytics/event-store';
import { routes } from '@analytics/schema';
import { type Logger, defineRoute, routerOf } from '@analytics/service-kit';
import { exportRoute } from './export.route';

export interface ReadRouterDeps {
  authenticator: Authenticator;
  events: EventStore;
  /** Where an export that fails after its first byte is reported (its client only sees a cut connection). */
  logger?: Logger;
}

/**
 * GET /v1/query, /v1/export, /v1/stats, /v1/sources, /v1/properties and POST /v1/insights for `rk_` keys. Order: auth (pk/sk get 403 insufficient_scope), then
 * 400 invalid_params for the query string, then (stats) 400 invalid_group_by. Every query is scoped to the key's project.
 */
export function createReadRouter(deps: ReadRouterDeps): Router {
  return routerOf({ apiKey: keyGuard(deps.authenticator) }, [
    defineRoute(routes.query, async ({ query }, auth) => ({ rows: await queryEvents(deps.events, auth.projectId, query) })),
    exportRoute(deps.events, deps.logger),
    defineRoute(routes.stats, async ({ query }, auth) => {
      const { metric, rows } = await queryStats(deps.events, auth.projectId, query);
      return { metric, rows };
    }),
    defineRoute(routes.sources, async ({ query }, auth) => {
      const { breakdown, rows } = await querySources(deps.events, auth.projectId, query);
      return { breakdown, rows };
    }),
    defineRoute(routes.insights, async ({ body }, auth) => queryInsights(deps.events, auth.projectId, body)),
    defineRoute(routes.funnel, async ({ body }, auth) => queryFunnel(deps.events, auth.projectId, body)),
    defineRoute(routes.retention, async ({ body }, auth) => queryRetention(deps.events, auth.projectId, body)),
    defineRoute(routes.properties, async ({ query }, auth) => queryProperties(deps.events, auth.projectId, query)),
  ]);
}
