import { appConfig, envSchema, requiredSetting } from '@analytics/runtime';

/** admin-api started alone: the key store's PostgreSQL and the admin token (no event store). */
export const adminApiConfig = appConfig('admin-api', envSchema.extend({ DATABASE_URL: requiredSetting(), ADMIN_TOKEN: requiredSetting() }));
