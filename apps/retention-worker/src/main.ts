import { deploymentJobs } from '@analytics/alerts';
import { openStores, runMain, runService, startScheduler } from '@analytics/runtime';
import { createLogger } from '@analytics/service-kit';
import { buildApp } from './app';
import { retentionOnceConfig, retentionWorkerConfig } from './config';
import { retentionJob } from './retention.routes';
import { retentionWiring } from './wiring';

/**
 * `main.js` serves POST /internal/retention/run and is the deployment's scheduler (scheduled reports, alerts: one
 * active replica by lease in the key store's PostgreSQL); `main.js --once` runs one retention pass and exits 0 (the
 * k8s CronJob).
 * `--once` without CLICKHOUSE_URL/DATABASE_URL runs on the embedded stores under DATA_DIR (with `npm start` stopped:
 * the embedded engines hold their directories exclusively).
 */
async function once() {
  const env = retentionOnceConfig.load();
  const logger = createLogger({ level: env.LOG_LEVEL, name: 'retention-worker' });
  const stores = await openStores(env, logger);
  try {
    const result = await retentionJob(retentionWiring(stores, { internalSecret: '' }));
    logger.info(result, 'retention done');
  } finally {
    await stores.close();
  }
}

if (process.argv.includes('--once')) runMain(once);
else
  runService(retentionWorkerConfig, ({ env, logger, stores, limits }) => buildApp({ logger, limits, metricsToken: env.METRICS_TOKEN, ...retentionWiring(stores, { internalSecret: env.INTERNAL_SECRET }) }), {
    background: ({ env, logger, stores }) => startScheduler(env, logger, deploymentJobs(stores, env, logger)),
  });
