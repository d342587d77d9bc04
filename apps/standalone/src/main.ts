import { deploymentJobs } from '@analytics/alerts';
import { join, resolve } from 'node:path';
import { loadGeo } from '@analytics/enrichment';
import { mailerOf, openAccounts, openStores, rateRulesOf, reportMailingOf, reportPreviewOf, runMain, sessionIdleMsOf, serve, serviceLimitsOf, startAggregateBuilding, startScheduler } from '@analytics/runtime';
import { createLogger } from '@analytics/service-kit';
import { buildApp } from './app';
import { standaloneConfig } from './config';
import { firstMinuteBlock } from './first-minute';
import { resolveSecrets } from './secrets';
import { SERVER_NOTE_FILE, writeServerNote } from './server-note';

async function main() {
  const env = standaloneConfig.load();
  const logger = createLogger({ level: env.LOG_LEVEL, name: 'standalone', format: env.LOG_FORMAT });
  const dataDir = resolve(env.DATA_DIR ?? './.data');
  const { secrets, generated } = resolveSecrets(dataDir, env);
  if (generated.includes('ADMIN_TOKEN')) {
    // Printed once, when generated; it stays in DATA_DIR/secrets.json.
    console.log(`Generated ADMIN_TOKEN (kept in ${dataDir}/secrets.json): ${secrets.ADMIN_TOKEN}`);
  }
  loadGeo();
  const stores = await openStores(env, logger, dataDir);
  // On a ClickHouse server the service builds the aggregates too, while it holds the builder's lease.
  const building = startAggregateBuilding(stores, env, logger);
  // The scheduler (scheduled reports, alerts) in-process: always active on PGlite, by lease on PostgreSQL.
  const scheduler = startScheduler(env, logger, deploymentJobs(stores, env, logger));
  // The dashboard's static build sits beside this bundle: dist/apps/dashboard next to dist/apps/standalone.
  const dashboardDir = resolve(__dirname, '../dashboard');
  // The browser SDK's build: dist/libs/sdk-browser, served at /sdk/analytics.min.js.
  const sdkDir = resolve(__dirname, '../../libs/sdk-browser');
  // npm start turns OAuth on unless MCP_OAUTH=off: connector UIs (Claude, ChatGPT) connect only through it.
  const mcp = { allowedOrigins: env.MCP_ALLOWED_ORIGINS, oauth: env.MCP_OAUTH !== 'off', publicUrl: env.PUBLIC_URL };
  const accounts = openAccounts(stores, env, logger, secrets.ADMIN_TOKEN);
  const reportPreview = reportPreviewOf(reportMailingOf(stores, env, logger));
  const app = buildApp({ stores, secrets, logger, reportPreview, trustProxy: env.TRUST_PROXY, limits: serviceLimitsOf(env), metricsToken: env.METRICS_TOKEN, rateRules: rateRulesOf(env), sessionIdleMs: sessionIdleMsOf(env), mcp, dashboardDir, sdkDir, dataDir, accounts, backupDir: env.BACKUP_DIR, liveMaxPerProject: env.LIVE_MAX_PER_PROJECT, alertChannels: { mailer: mailerOf(env, logger), allowPrivate: env.ALERTS_ALLOW_PRIVATE_URLS } });
  let removeNote = () => {};
  const server = await serve(app, env, logger, async () => {
    // No longer listening: the tools stop finding this server at once.
    removeNote();
    await scheduler.stop();
    await building.stop();
    await stores.close();
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : env.PORT;
  // DATA_DIR/server.json: npm run admin, import and backup find this server from its DATA_DIR alone.
  try {
    removeNote = writeServerNote(dataDir, port).remove;
  } catch (e) {
    logger.warn({ err: e }, `could not write ${join(dataDir, SERVER_NOTE_FILE)}: the tools find this server through --url or PORT`);
  }
  const projectCount = (await stores.keyStore.listProjects()).length;
  const hasUsers = await accounts.signIn.anyUser();
  process.stderr.write(`${firstMinuteBlock({ port, secretsFile: env.ADMIN_TOKEN ? undefined : join(dataDir, 'secrets.json'), projectCount, hasUsers })}\n`);
}

runMain(main);
