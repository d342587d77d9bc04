import { EVENT_STORE_SETTING, envSchema, openStores, requireSettings, serve } from '@analytics/runtime';
import { createLogger, loadConfig } from '@analytics/service-kit';
import { buildApp } from './app';

async function main() {
  const env = loadConfig(envSchema);
  requireSettings(env, [EVENT_STORE_SETTING, 'DATABASE_URL'], 'read-api');
  const logger = createLogger({ level: env.LOG_LEVEL, name: 'read-api' });
  const stores = await openStores(env, logger);
  const app = buildApp({ logger, trustProxy: env.TRUST_PROXY, authenticator: stores.authenticator, events: stores.events });
  await serve(app, env.PORT, logger, () => stores.close());
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
