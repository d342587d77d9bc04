import type { Router } from 'express';
import { type Annotations, type Authenticator, keyGuard } from '@analytics/auth';
import { type EventStore, READ_CAPABILITIES, type ReadScope, readCapabilities, readScopeOf, snapshotCapabilities } from '@analytics/event-store';
import { NO_SAVED, type ReadCapability, type SavedLookup, routes } from '@analytics/schema';
import { type Logger, type RouteDefinition, defineRoute, routerOf } from '@analytics/service-kit';
import { annotationWriteRoutes } from './annotations.routes';
import { exportRoute } from './export.route';
import { DEFAULT_LIVE_MAX_PER_PROJECT, LiveHub, type LiveOptions } from './live-hub';
import { liveRoute } from './live.route';
import { heldToShare } from './share-scope';

export interface ReadRouterDeps {
  authenticator: Authenticator;
  events: EventStore;
  /** The projects' saved goals, funnels and segments (the key store's, readWiring): the ids a read names resolve through it. Unset: none. */
  saved?: SavedLookup;
  /** The projects' annotations (the key store's, readWiring): POST and DELETE /v1/annotations write them. Unset: those routes are not served. */
  annotations?: Annotations;
  /** Where an export that fails after its first byte is reported (its client only sees a cut connection). */
  logger?: Logger;
  /** GET /v1/live: LIVE_MAX_PER_PROJECT (default 5) and, in tests, a shorter tick. */
  live?: LiveOptions;
  /** The live streams' hub (made from `live` when not given): a spec may hold it to see its streams. */
  liveHub?: LiveHub;
}

/** A read capability at its declared route: the parsed body (or query string) to its one function, scoped to the key's project. */
function capabilityRoute<K extends ReadCapability>(name: K, events: EventStore, saved: SavedLookup): RouteDefinition {
  const route: (typeof routes)[ReadCapability] = routes[name];
  // Typed by the map (a read route without its function does not compile); its input is what the route parsed.
  const run: (reader: EventStore, projectId: string, input: never, saved: SavedLookup, scope: ReadScope) => Promise<unknown> = readCapabilities[name];
  return defineRoute(route, async ({ body, query }, auth) => {
    const input = 'body' in route ? body : query;
    // A share link's credential: its segment's filters held to the read (share-scope.ts).
    return (await run(events, auth.projectId, (auth.share ? heldToShare(name, input, auth.share) : input) as never, saved, readScopeOf(auth.project))) as never;
  });
}

/**
 * Every read-api route of libs/schema's `routes` for `rk_` keys: each read capability (GET /v1/query, /v1/stats,
 * /v1/sources, /v1/properties, /v1/goals, /v1/funnels, /v1/segments, POST /v1/insights, /v1/funnel, /v1/retention, ...)
 * the streamed GET /v1/export, the live view GET /v1/live (an event stream) and the sk_ writes of /v1/annotations. Order:
 * auth (pk/sk get 403 insufficient_scope), then 400 invalid_params for the query string (or the body's error), then
 * (stats) 400 invalid_group_by. Every query is scoped to the key's project.
 */
export function createReadRouter(deps: ReadRouterDeps): Router {
  return routerOf({ apiKey: keyGuard(deps.authenticator) }, [
    ...READ_CAPABILITIES.map((name) => capabilityRoute(name, deps.events, deps.saved ?? NO_SAVED)),
    exportRoute(deps.events, deps.saved ?? NO_SAVED, deps.logger),
    liveRoute(deps.liveHub ?? liveHubOf(deps), deps.authenticator),
    ...(deps.annotations ? annotationWriteRoutes(deps.annotations) : []),
  ]);
}

/** The hub of GET /v1/live over the event store: one `live` snapshot per project per tick. */
export function liveHubOf(deps: Pick<ReadRouterDeps, 'events' | 'live' | 'logger'>): LiveHub {
  return new LiveHub((projectId) => snapshotCapabilities.live(deps.events, projectId, {}), deps.live ?? { maxPerProject: DEFAULT_LIVE_MAX_PER_PROJECT }, deps.logger);
}
