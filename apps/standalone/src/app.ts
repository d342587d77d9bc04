import type { Express } from 'express';
import { createAdminRouter } from '@analytics/admin-api';
import { createIngestRouter } from '@analytics/ingest-api';
import { createMcpRouter } from '@analytics/mcp-gateway';
import { createReadRouter } from '@analytics/read-api';
import { createRetentionRouter } from '@analytics/retention-worker';
import { OAuthStore, failedAuthKeyOf } from '@analytics/auth';
import { IngestService, type RateRules } from '@analytics/ingest';
import type { Stores } from '@analytics/runtime';
import { type Logger, apiDocsRouter, createServiceApp, sdkRouter } from '@analytics/service-kit';
import { createDashboardRouter } from './dashboard.route';
import type { Secrets } from './secrets';

export interface StandaloneDeps {
  stores: Stores;
  secrets: Secrets;
  logger: Logger;
  trustProxy?: boolean | number | string[];
  rateRules?: RateRules;
  clock?: () => number;
  /** The dashboard's static build (dist/apps/dashboard), served at GET / without a key. */
  dashboardDir?: string;
  /** The browser SDK's build (dist/libs/sdk-browser), served at GET /sdk/analytics.min.js without a key. */
  sdkDir?: string;
  /** MCP_ALLOWED_ORIGINS, MCP_OAUTH (OAuth for connector UIs on /mcp) and PUBLIC_URL. */
  mcp?: { allowedOrigins?: readonly string[]; oauth?: boolean; publicUrl?: string };
}

/** Every app's routes on one express instance, over one set of stores (`npm start`). */
export function buildApp(deps: StandaloneDeps): Express {
  const { stores, secrets } = deps;
  const ingest = new IngestService({ store: stores.events, limiter: stores.limiter, rateRules: deps.rateRules });
  return createServiceApp({
    name: 'standalone',
    logger: deps.logger,
    trustProxy: deps.trustProxy,
    budgetKeyOf: failedAuthKeyOf(stores.authenticator),
    ready: { event_store: () => stores.events.ping(), key_store: () => stores.keyStore.ping() },
    routers: [
      ...(deps.dashboardDir ? [createDashboardRouter(deps.dashboardDir)] : []),
      createIngestRouter({ authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: secrets.IP_HASH_SECRET, clock: deps.clock }),
      createReadRouter({ authenticator: stores.authenticator, events: stores.events }),
      createMcpRouter({
        authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: secrets.IP_HASH_SECRET, logger: deps.logger, clock: deps.clock,
        allowedOrigins: deps.mcp?.allowedOrigins,
        oauth: deps.mcp?.oauth ? { store: new OAuthStore(stores.keyDb) } : undefined,
        publicUrl: deps.mcp?.publicUrl,
      }),
      createAdminRouter({
        keyStore: stores.keyStore,
        adminToken: secrets.ADMIN_TOKEN,
        onKeyRevoked: (prefix) => stores.bus.keyRevoked(prefix),
        onProjectChanged: (id) => stores.bus.projectChanged(id),
      }),
      createRetentionRouter({ keyStore: stores.keyStore, events: stores.events, internalSecret: secrets.INTERNAL_SECRET, clock: deps.clock }),
      apiDocsRouter('all'),
      ...(deps.sdkDir ? [sdkRouter(deps.sdkDir)] : []),
    ],
  });
}
