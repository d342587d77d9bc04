import type { Express } from 'express';
import { type ServiceAppBase, apiDocsRouter, createServiceApp } from '@analytics/service-kit';
import { type AdminRouterDeps, createAdminRouter } from './admin.routes';
import { createAlertsRouter } from './alerts.routes';
import { createAnnotationsRouter } from './annotations.routes';
import { createAuthRouter } from './auth.routes';
import { createOrgsRouter } from './orgs.routes';
import { createReportsRouter } from './reports.routes';
import { createSavedRouter } from './saved.routes';
import { createSharesRouter } from './shares.routes';

/** The routers of /auth/* and /admin/*, in the order they must be mounted (before the admin router's catch-all). */
export const adminRouters = (deps: AdminRouterDeps) => [createAuthRouter(deps), createOrgsRouter(deps), createSavedRouter(deps), createSharesRouter(deps), createAnnotationsRouter(deps), createAlertsRouter(deps), createReportsRouter(deps), createAdminRouter(deps)];

export function buildApp(deps: AdminRouterDeps & ServiceAppBase): Express {
  return createServiceApp({
    name: 'admin-api',
    logger: deps.logger,
    trustProxy: deps.trustProxy,
    limits: deps.limits,
    metricsToken: deps.metricsToken,
    ready: { key_store: () => deps.keyStore.ping() },
    routers: [...adminRouters(deps), apiDocsRouter(['admin-api'])],
  });
}
