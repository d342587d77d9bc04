import { appConfig, envSchema, requireEventStore, requiredSetting } from '@analytics/runtime';

/** ingest-api started alone: an event store, the key store's PostgreSQL and the secret of the daily IP hash. */
export const ingestApiConfig = appConfig('ingest-api', requireEventStore(envSchema.extend({ DATABASE_URL: requiredSetting(), IP_HASH_SECRET: requiredSetting() })));
