import { IngestService, type RateRules } from '@analytics/ingest';
import type { Stores } from '@analytics/runtime';
import type { IngestRouterDeps } from './ingest.routes';

export interface IngestSettings {
  ipHashSecret: string;
  rateRules?: RateRules;
  clock?: () => number;
}

/** The ingest routes over opened stores: the one place an IngestService is built (MCP's track_event shares it). */
export function ingestWiring(stores: Stores, settings: IngestSettings): IngestRouterDeps {
  return {
    authenticator: stores.authenticator,
    events: stores.events,
    ingest: new IngestService({ store: stores.events, limiter: stores.limiter, rateRules: settings.rateRules }),
    ipHashSecret: settings.ipHashSecret,
    clock: settings.clock,
  };
}
