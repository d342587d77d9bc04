import type { Express } from 'express';
import { failedAuthKeyOf } from '@analytics/auth';
import { type ServiceAppBase, apiDocsRouter, createServiceApp } from '@analytics/service-kit';
import { type McpRouterDeps, createMcpRouter } from './mcp.routes';

export function buildApp(deps: McpRouterDeps & ServiceAppBase): Express {
  return createServiceApp({ name: 'mcp-gateway', logger: deps.logger, trustProxy: deps.trustProxy, limits: deps.limits, metricsToken: deps.metricsToken, eventStore: deps.events, budgetKeyOf: failedAuthKeyOf(deps.authenticator), ready: { event_store: () => deps.events.ping(), key_store: () => deps.authenticator.ping() }, routers: [createMcpRouter(deps), apiDocsRouter(['mcp-gateway'])] });
}
