import type { Express } from 'express';
import { type ServiceAppBase, apiDocsRouter, createServiceApp } from '@analytics/service-kit';
import { type RetentionDeps, createRetentionRouter } from './retention.routes';

export function buildApp(deps: RetentionDeps & Omit<ServiceAppBase, 'trustProxy'>): Express {
  return createServiceApp({ name: 'retention-worker', logger: deps.logger, limits: deps.limits, metricsToken: deps.metricsToken, eventStore: deps.events, ready: { event_store: () => deps.events.ping(), key_store: () => deps.keyStore.ping() }, routers: [createRetentionRouter(deps), apiDocsRouter(['retention-worker'])] });
}
