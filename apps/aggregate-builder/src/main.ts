import { openStores, runMain, serve, serviceLimitsOf, startAggregateBuilding } from '@analytics/runtime';
import { createLogger } from '@analytics/service-kit';
import { buildApp } from './app';
import { aggregateBuilderConfig } from './config';

/**
 * The aggregate builder of a ClickHouse server (libs/event-store/README.md, "One builder, every mode"): builds the
 * aggregates from the events every ingest replica writes, while it holds the lease (a PostgreSQL advisory lock); run
 * two for a quick takeover, one builds at a time. On SIGTERM it lets the builder catch up within 5 s, then releases.
 */
runMain(async () => {
  const env = aggregateBuilderConfig.load();
  const logger = createLogger({ level: env.LOG_LEVEL, name: aggregateBuilderConfig.name, format: env.LOG_FORMAT });
  const stores = await openStores(env, logger);
  const building = startAggregateBuilding(stores, env, logger);
  const app = buildApp({ stores, logger, limits: serviceLimitsOf(env), metricsToken: env.METRICS_TOKEN });
  await serve(app, env, logger, async () => {
    await building.stop();
    await stores.close();
  });
});
