import { loadGeo } from '@analytics/enrichment';
import { IngestService } from '@analytics/ingest';
import { EVENT_STORE_SETTING, envSchema, openStores, rateRulesOf, requireSettings, serve } from '@analytics/runtime';
import { createLogger, loadConfig } from '@analytics/service-kit';
import { buildApp } from './app';

async function main() {
  const env = loadConfig(envSchema);
  requireSettings(env, [EVENT_STORE_SETTING, 'DATABASE_URL', 'IP_HASH_SECRET'], 'ingest-api');
  const logger = createLogger({ level: env.LOG_LEVEL, name: 'ingest-api' });
  loadGeo();
  const stores = await openStores(env, logger);
  const ingest = new IngestService({ store: stores.events, limiter: stores.limiter, rateRules: rateRulesOf(env) });
  const app = buildApp({ logger, trustProxy: env.TRUST_PROXY, authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: env.IP_HASH_SECRET! });
  await serve(app, env.PORT, logger, () => stores.close());
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
