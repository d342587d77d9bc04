import type { Express } from 'express';
import { type Logger, apiDocsRouter, createServiceApp } from '@analytics/service-kit';
import { type AdminRouterDeps, createAdminRouter } from './admin.routes';

export function buildApp(deps: AdminRouterDeps & { logger: Logger }): Express {
  return createServiceApp({ name: 'admin-api', logger: deps.logger, ready: { key_store: () => deps.keyStore.ping() }, routers: [createAdminRouter(deps), apiDocsRouter(['admin-api'])] });
}
