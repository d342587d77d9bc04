import { EVENT_STORE_SETTING, envSchema, openStores, requireSettings, serve, runMain } from '@analytics/runtime';
import { createLogger, loadConfig } from '@analytics/service-kit';
import { buildApp } from './app';
import { retentionJob } from './retention.routes';

/**
 * `main.js` serves POST /internal/retention/run; `main.js --once` runs one pass and exits 0 (the k8s CronJob).
 * Served, it needs the event store (CLICKHOUSE_URL, or DATA_DIR for the embedded chDB), DATABASE_URL and
 * INTERNAL_SECRET. `--once` without CLICKHOUSE_URL/DATABASE_URL runs on the embedded stores under DATA_DIR (with
 * `npm start` stopped: the embedded engines hold their directories exclusively).
 */
async function main() {
  const env = loadConfig(envSchema);
  const once = process.argv.includes('--once');
  if (!once) requireSettings(env, [EVENT_STORE_SETTING, 'DATABASE_URL', 'INTERNAL_SECRET'], 'retention-worker');
  const logger = createLogger({ level: env.LOG_LEVEL, name: 'retention-worker' });
  const stores = await openStores(env, logger);
  if (once) {
    try {
      const result = await retentionJob({ keyStore: stores.keyStore, events: stores.events, internalSecret: '' });
      logger.info(result, 'retention done');
    } finally {
      await stores.close();
    }
    return;
  }
  const app = buildApp({ logger, keyStore: stores.keyStore, events: stores.events, internalSecret: env.INTERNAL_SECRET! });
  await serve(app, env.PORT, logger, () => stores.close());
}

runMain(main);
