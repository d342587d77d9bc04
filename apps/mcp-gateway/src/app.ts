import type { Express } from 'express';
import { type Logger, createServiceApp } from '@analytics/service-kit';
import { type McpRouterDeps, createMcpRouter } from './mcp.routes';

export function buildApp(deps: McpRouterDeps & { logger: Logger; trustProxy?: boolean | number | string[] }): Express {
  return createServiceApp({ name: 'mcp-gateway', logger: deps.logger, trustProxy: deps.trustProxy, selfParsedPaths: ['/mcp'], routers: [createMcpRouter(deps)] });
}
