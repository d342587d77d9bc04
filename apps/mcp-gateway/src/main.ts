import { loadGeo } from '@analytics/enrichment';
import { OAuthStore } from '@analytics/auth';
import { IngestService } from '@analytics/ingest';
import { EVENT_STORE_SETTING, rateRulesOf, runService } from '@analytics/runtime';
import { buildApp } from './app';

runService('mcp-gateway', [EVENT_STORE_SETTING, 'DATABASE_URL', 'IP_HASH_SECRET'], ({ env, logger, stores }) =>
  buildApp({
    logger,
    trustProxy: env.TRUST_PROXY,
    authenticator: stores.authenticator,
    // track_event shares the ingest path and its rate limit (buckets shared through Redis when REDIS_URL is set)
    ingest: new IngestService({ store: stores.events, limiter: stores.limiter, rateRules: rateRulesOf(env) }),
    events: stores.events,
    ipHashSecret: env.IP_HASH_SECRET!,
    allowedOrigins: env.MCP_ALLOWED_ORIGINS,
    oauth: env.MCP_OAUTH === 'on' ? { store: new OAuthStore(stores.keyDb) } : undefined,
    publicUrl: env.PUBLIC_URL,
  }),
  { prepare: loadGeo },
);
