import { InvalidationBus, KeyStore, LocalRevocationEpoch, RedisRevocationEpoch, createPgPort, migrateKeyStore } from '@analytics/auth';
import { EventStore } from '@analytics/event-store';
import { importEvents } from '@analytics/ingest';
import { mailerOf, openAccounts, reportMailingOf, reportPreviewOf, runMain, serve, serviceLimitsOf } from '@analytics/runtime';
import type { ImportedEvent } from '@analytics/schema';
import { createLogger, createRedis } from '@analytics/service-kit';
import { buildApp } from './app';
import { adminApiConfig } from './config';
import { adminWiring } from './wiring';

async function main() {
  const env = adminApiConfig.load();
  const logger = createLogger({ level: env.LOG_LEVEL, name: 'admin-api' });
  const db = await createPgPort(env.DATABASE_URL, (e) => logger.warn({ err: e.message }, 'postgres idle client error'));
  await migrateKeyStore(db);
  // Revocations reach the other services' key caches through Redis at once (the revocation epoch, checked by every
  // instance on each request); without it, within the cache TTL. The subscriber connection receives the instances'
  // acknowledgements of new keys: a 201 answers once they know the prefix.
  const redis = env.REDIS_URL ? createRedis(env.REDIS_URL, logger) : undefined;
  const subscriber = env.REDIS_URL ? createRedis(env.REDIS_URL, logger, { subscriber: true }) : undefined;
  const bus = new InvalidationBus(undefined, redis, subscriber, { logger });
  // Not awaited: with Redis down at start the SUBSCRIBE waits in the offline queue until it is back, and admin-api
  // serves meanwhile; new keys wait for acks only once the subscription holds.
  void bus.start().catch((e: unknown) => logger.warn({ err: (e as Error).message }, 'redis subscribe failed; new keys answer without waiting for the instances'));
  const epoch = redis ? new RedisRevocationEpoch(redis) : new LocalRevocationEpoch();
  const keyStore = new KeyStore(db);
  // Sign-in failures are counted in Redis when it is set, so the bound holds across admin-api instances.
  const accounts = openAccounts({ keyDb: db, keyStore, bus, redis, epoch }, env, logger, env.ADMIN_TOKEN);
  // The event store when CLICKHOUSE_URL is set (the split deployment gives every app the same settings): only
  // POST /admin/projects/{id}/import writes through it (without it, that route answers 503 not_ready). A deleted
  // project's events still wait in project_deletions for the retention worker.
  const events = env.CLICKHOUSE_URL
    ? await EventStore.open({ url: env.CLICKHOUSE_URL, username: env.CLICKHOUSE_USER, password: env.CLICKHOUSE_PASSWORD, database: env.CLICKHOUSE_DATABASE, cluster: env.CLICKHOUSE_CLUSTER })
    : undefined;
  const importing = events ? { importEvents: (id: string, rows: ImportedEvent[]) => importEvents(events, id, rows) } : {};
  // A report's preview reads the event store too (the reports themselves go out from the scheduler).
  const reportPreview = reportPreviewOf(events ? reportMailingOf({ keyStore, events }, env, logger) : { missing: 'CLICKHOUSE_URL' });
  const app = buildApp({ logger, trustProxy: env.TRUST_PROXY, limits: serviceLimitsOf(env), metricsToken: env.METRICS_TOKEN, ...adminWiring({ keyStore, bus, accounts, epoch }, env.ADMIN_TOKEN, { publicUrl: env.PUBLIC_URL, reportPreview, ...importing, alertChannels: { mailer: mailerOf(env, logger), allowPrivate: env.ALERTS_ALLOW_PRIVATE_URLS } }) });
  await serve(app, env, logger, async () => {
    redis?.disconnect();
    subscriber?.disconnect();
    await events?.close().catch((e: unknown) => logger.error({ err: e }, 'closing event store'));
    await db.close();
  });
}

runMain(main);
