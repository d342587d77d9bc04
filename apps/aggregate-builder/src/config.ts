import { appConfig, envSchema, requiredSetting } from '@analytics/runtime';

/**
 * aggregate-builder: the ClickHouse server it builds on (CLICKHOUSE_URL: the embedded store builds inside the one
 * process that opens it, so there is nothing to run alone) and the PostgreSQL holding the builder's lease.
 */
export const aggregateBuilderConfig = appConfig('aggregate-builder', envSchema.extend({ CLICKHOUSE_URL: requiredSetting(), DATABASE_URL: requiredSetting() }));
