import { appConfig, envSchema, requireEventStore, requiredSetting } from '@analytics/runtime';

/** mcp-gateway started alone: what ingest-api needs (track_event is the same ingest path). */
export const mcpGatewayConfig = appConfig('mcp-gateway', requireEventStore(envSchema.extend({ DATABASE_URL: requiredSetting(), IP_HASH_SECRET: requiredSetting() })));
