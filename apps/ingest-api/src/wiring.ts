import { DEFAULT_SESSION_IDLE_MS, IngestService, MemoryVisitState, type RateRules, RedisVisitState, VISIT_CAP_MS } from '@analytics/ingest';
import type { Stores } from '@analytics/runtime';
import { type Logger, createLogger } from '@analytics/service-kit';
import type { IngestRouterDeps } from './ingest.routes';

export interface IngestSettings {
  ipHashSecret: string;
  rateRules?: RateRules;
  clock?: () => number;
  /** SESSION_IDLE_MINUTES in ms (sessionIdleMsOf); unset, 30 minutes. */
  sessionIdleMs?: number;
  /** Logs the visit state's Redis outages. */
  logger?: Logger;
}

/** The ingest routes over opened stores: the one place an IngestService is built (MCP's track_event shares it). */
export function ingestWiring(stores: Stores, settings: IngestSettings): IngestRouterDeps {
  // Visits by inactivity: shared by every replica through Redis when REDIS_URL is set, else this process's memory.
  const rules = { idleMs: settings.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS, capMs: VISIT_CAP_MS };
  const visits = stores.redis ? new RedisVisitState(stores.redis, rules, settings.logger ?? createLogger({ level: 'silent' })) : new MemoryVisitState(rules);
  return {
    authenticator: stores.authenticator,
    events: stores.events,
    ingest: new IngestService({ store: stores.events, limiter: stores.limiter, rateRules: settings.rateRules, visits, sessionIdleMs: rules.idleMs }),
    ipHashSecret: settings.ipHashSecret,
    clock: settings.clock,
  };
}
