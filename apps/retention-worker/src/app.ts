import type { Express } from 'express';
import { type Logger, apiDocsRouter, createServiceApp } from '@analytics/service-kit';
import { type RetentionDeps, createRetentionRouter } from './retention.routes';

export function buildApp(deps: RetentionDeps & { logger: Logger }): Express {
  return createServiceApp({ name: 'retention-worker', logger: deps.logger, ready: { event_store: () => deps.events.ping(), key_store: () => deps.keyStore.ping() }, routers: [createRetentionRouter(deps), apiDocsRouter(['retention-worker'])] });
}
