import type { Express } from 'express';
import { failedAuthKeyOf } from '@analytics/auth';
import { type ServiceAppBase, apiDocsRouter, createServiceApp, sdkRouter } from '@analytics/service-kit';
import { type IngestRouterDeps, createIngestRouter } from './ingest.routes';

export interface IngestAppDeps extends IngestRouterDeps, ServiceAppBase {
  /** The browser SDK's build (dist/libs/sdk-browser), served at GET /sdk/analytics.min.js. */
  sdkDir?: string;
}

export function buildApp(deps: IngestAppDeps): Express {
  return createServiceApp({ name: 'ingest-api', logger: deps.logger, trustProxy: deps.trustProxy, limits: deps.limits, metricsToken: deps.metricsToken, eventStore: deps.events, budgetKeyOf: failedAuthKeyOf(deps.authenticator), ready: { event_store: () => deps.events.ping(), key_store: () => deps.authenticator.ping() }, routers: [createIngestRouter(deps), apiDocsRouter(['ingest-api']), ...(deps.sdkDir ? [sdkRouter(deps.sdkDir)] : [])] });
}
