import { appConfig, envSchema, requireEventStore, requiredSetting } from '@analytics/runtime';

/** retention-worker serving POST /internal/retention/run: an event store, the key store's PostgreSQL and INTERNAL_SECRET. */
export const retentionWorkerConfig = appConfig('retention-worker', requireEventStore(envSchema.extend({ DATABASE_URL: requiredSetting(), INTERNAL_SECRET: requiredSetting() })));

/** `--once` (the CronJob): nothing required; without CLICKHOUSE_URL/DATABASE_URL it runs on the embedded stores under DATA_DIR. */
export const retentionOnceConfig = appConfig('retention-worker', envSchema);
