import type { Express } from 'express';
import type { Stores } from '@analytics/runtime';
import { type ServiceAppBase, apiDocsRouter, createServiceApp } from '@analytics/service-kit';

/**
 * The builder's HTTP face: /healthz, /readyz (the stores answer: a standby that does not hold the lease is ready too,
 * it takes over when the holder goes) and /metrics (analytics_aggregate_builder_active, analytics_aggregate_lag_seconds).
 */
export function buildApp(deps: { stores: Stores } & Omit<ServiceAppBase, 'trustProxy'>): Express {
  const { events, keyStore } = deps.stores;
  return createServiceApp({
    name: 'aggregate-builder',
    logger: deps.logger,
    limits: deps.limits,
    metricsToken: deps.metricsToken,
    eventStore: events,
    ready: { event_store: () => events.ping(), key_store: () => keyStore.ping() },
    routers: [apiDocsRouter([])],
  });
}
