import { appConfig, envSchema, requireEventStore, requiredSetting } from '@analytics/runtime';

/** read-api started alone: an event store and the key store's PostgreSQL. */
export const readApiConfig = appConfig('read-api', requireEventStore(envSchema.extend({ DATABASE_URL: requiredSetting() })));
