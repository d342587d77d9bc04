import type { Stores } from '@analytics/runtime';
import type { RetentionDeps } from './retention.routes';

/** The retention job and route over opened stores. */
export function retentionWiring(stores: Stores, settings: { internalSecret: string; clock?: () => number }): RetentionDeps {
  return { keyStore: stores.keyStore, keyDb: stores.keyDb, events: stores.events, internalSecret: settings.internalSecret, clock: settings.clock };
}
