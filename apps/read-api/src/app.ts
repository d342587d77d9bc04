import type { Express } from 'express';
import { failedAuthKeyOf } from '@analytics/auth';
import { type Logger, apiDocsRouter, createServiceApp } from '@analytics/service-kit';
import { type ReadRouterDeps, createReadRouter } from './read.routes';

export interface ReadAppDeps extends ReadRouterDeps {
  logger: Logger;
  trustProxy?: boolean | number | string[];
}

export function buildApp(deps: ReadAppDeps): Express {
  return createServiceApp({ name: 'read-api', logger: deps.logger, trustProxy: deps.trustProxy, budgetKeyOf: failedAuthKeyOf(deps.authenticator), ready: { event_store: () => deps.events.ping(), key_store: () => deps.authenticator.ping() }, routers: [createReadRouter(deps), apiDocsRouter(['read-api'])] });
}
