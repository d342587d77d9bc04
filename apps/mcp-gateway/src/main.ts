import { loadGeo } from '@analytics/enrichment';
import { ingestWiring } from '@analytics/ingest-api';
import { openAccounts, rateRulesOf, runService, sessionIdleMsOf } from '@analytics/runtime';
import { buildApp } from './app';
import { mcpGatewayConfig } from './config';
import { mcpWiring } from './wiring';

runService(mcpGatewayConfig, ({ env, logger, stores, limits }) => {
  // track_event shares the ingest path and its rate limit (buckets shared through Redis when REDIS_URL is set)
  const ingest = ingestWiring(stores, { ipHashSecret: env.IP_HASH_SECRET, rateRules: rateRulesOf(env), sessionIdleMs: sessionIdleMsOf(env), logger });
  // With ADMIN_TOKEN (the sign-in throttle's key, shared with admin-api) people sign in on the consent page; else a pasted key only.
  // The settings are admin-api's: with OIDC_* (and PUBLIC_URL) the page offers single sign-on, whose callback admin-api
  // serves. No mail is sent from here (SMTP_URL is left to admin-api).
  const accounts = env.MCP_OAUTH === 'on' && env.ADMIN_TOKEN ? openAccounts(stores, { ...env, SMTP_URL: undefined }, logger, env.ADMIN_TOKEN) : undefined;
  const mcp = mcpWiring(stores, ingest, { logger, allowedOrigins: env.MCP_ALLOWED_ORIGINS, oauth: env.MCP_OAUTH === 'on', publicUrl: env.PUBLIC_URL, accounts });
  return buildApp({ ...mcp, trustProxy: env.TRUST_PROXY, limits, metricsToken: env.METRICS_TOKEN });
}, { prepare: loadGeo });
