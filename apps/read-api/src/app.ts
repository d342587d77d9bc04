import type { Express } from 'express';
import { failedAuthKeyOf } from '@analytics/auth';
import { type ServiceAppBase, apiDocsRouter, createServiceApp } from '@analytics/service-kit';
import { type ReadRouterDeps, createReadRouter } from './read.routes';

export type ReadAppDeps = ReadRouterDeps & ServiceAppBase;

export function buildApp(deps: ReadAppDeps): Express {
  return createServiceApp({ name: 'read-api', logger: deps.logger, trustProxy: deps.trustProxy, limits: deps.limits, metricsToken: deps.metricsToken, eventStore: deps.events, budgetKeyOf: failedAuthKeyOf(deps.authenticator), ready: { event_store: () => deps.events.ping(), key_store: () => deps.authenticator.ping() }, routers: [createReadRouter(deps), apiDocsRouter(['read-api'])] });
}
