import type { Stores } from '@analytics/runtime';
import type { ReadRouterDeps } from './read.routes';

/** The read routes over opened stores. */
export function readWiring(stores: Stores): ReadRouterDeps {
  return { authenticator: stores.authenticator, events: stores.events, saved: stores.keyStore.lookup, annotations: stores.keyStore.annotations };
}
