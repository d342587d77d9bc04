import type { Express } from 'express';
import { type ServiceAppBase, apiDocsRouter, createServiceApp } from '@analytics/service-kit';
import { type AdminRouterDeps, createAdminRouter } from './admin.routes';

export function buildApp(deps: AdminRouterDeps & Omit<ServiceAppBase, 'trustProxy'>): Express {
  return createServiceApp({ name: 'admin-api', logger: deps.logger, limits: deps.limits, metricsToken: deps.metricsToken, ready: { key_store: () => deps.keyStore.ping() }, routers: [createAdminRouter(deps), apiDocsRouter(['admin-api'])] });
}
