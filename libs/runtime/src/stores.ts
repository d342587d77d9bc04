import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { Authenticator, InvalidationBus, KeyStore, KeyUsage, LocalRevocationEpoch, RedisRevocationEpoch, type RevocationEpoch, type SqlPort, createPgPort, createPglitePort, migrateKeyStore } from '@analytics/auth';
import { EventStore } from '@analytics/event-store';
import { type Logger, MemoryRateLimiter, type RateLimiter, RedisRateLimiter, createRedis, redisReady } from '@analytics/service-kit';
import type { Env } from './config';

export interface Stores {
  keyDb: SqlPort;
  keyStore: KeyStore;
  authenticator: Authenticator;
  events: EventStore;
  limiter: RateLimiter;
  /** Key revocations / project changes: applied here and, with Redis, on every instance at once. */
  bus: InvalidationBus;
  /** REDIS_URL's client (shared counters: the sign-in throttle), when set. */
  redis?: Redis;
  /** Replaced by the admin routes after a revocation or project change; every cached key is checked against it. */
  epoch: RevocationEpoch;
  close(): Promise<void>;
}

/**
 * Opens the stores: production servers when CLICKHOUSE_URL / DATABASE_URL are set, else the embedded engines
 * under DATA_DIR (chDB in DATA_DIR/clickhouse, PGlite in DATA_DIR/postgres), each independently: an app started
 * alone with DATABASE_URL and DATA_DIR (no CLICKHOUSE_URL) gets chDB for events and PostgreSQL for keys.
 * Migrations run on open. Logs which stores it opened (never a URL: it may carry a password).
 */
export async function openStores(env: Env, logger: Logger, dataDir = env.DATA_DIR ?? './.data'): Promise<Stores> {
  if (env.CLICKHOUSE_CLUSTER && !env.CLICKHOUSE_URL) {
    throw new Error('CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL: the embedded chDB event store is a single node');
  }
  logger.info(
    env.CLICKHOUSE_URL
      ? { eventStore: 'clickhouse', cluster: env.CLICKHOUSE_CLUSTER ?? null, keyStore: env.DATABASE_URL ? 'postgresql' : 'pglite' }
      : { eventStore: 'chdb', path: join(dataDir, 'clickhouse'), keyStore: env.DATABASE_URL ? 'postgresql' : 'pglite' },
    'opening stores',
  );
  const keyDb = env.DATABASE_URL
    ? await createPgPort(env.DATABASE_URL, (e) => logger.warn({ err: e.message }, 'postgres idle client error'))
    : await createPglitePort(join(dataDir, 'postgres'));
  let events: EventStore | undefined;
  try {
    await migrateKeyStore(keyDb);
    events = await EventStore.open({
      url: env.CLICKHOUSE_URL,
      username: env.CLICKHOUSE_USER,
      password: env.CLICKHOUSE_PASSWORD,
      database: env.CLICKHOUSE_DATABASE,
      cluster: env.CLICKHOUSE_CLUSTER,
      chdbPath: join(dataDir, 'clickhouse'),
      aggregateIntervalMs: env.AGGREGATE_INTERVAL_MS,
      sourcesRefreshMs: env.SOURCES_REFRESH_MS,
      aggregateWaitMs: env.AGGREGATE_WAIT_MS,
      onAggregateError: (e) => logger.error({ err: e }, 'building aggregates failed; retried on the next tick'),
      read: {
        maxExecutionS: env.READ_MAX_EXECUTION_S,
        maxMemoryBytes: env.READ_MAX_MEMORY_BYTES,
        maxThreads: env.READ_MAX_THREADS,
        concurrency: env.READ_CONCURRENCY,
        perProject: env.READ_CONCURRENCY_PER_PROJECT,
        queuePerProject: env.READ_QUEUE_PER_PROJECT,
        queueWaitMs: env.READ_QUEUE_WAIT_MS,
        exportMaxExecutionS: env.EXPORT_MAX_EXECUTION_S,
        exportIdleTimeoutS: env.EXPORT_IDLE_TIMEOUT_S,
        exportConcurrency: env.EXPORT_CONCURRENCY,
      },
    }, { farPartitionsPerS: env.FAR_PARTITIONS_PER_S });
  } catch (e) {
    await keyDb.close().catch(() => undefined);
    throw e;
  }
  const keyStore = new KeyStore(keyDb);
  const eventStore = events;
  const usage = new KeyUsage(keyStore, Date.now, (e) => logger.warn({ err: (e as Error).message }, 'recording when keys were last used failed; retried'));
  usage.start();
  // Redis (optional): shared token buckets, the revocation epoch and cache invalidation; without it, memory buckets
  // and this process's own epoch (other instances then drop a revoked key within the cache TTL).
  const redis = env.REDIS_URL ? createRedis(env.REDIS_URL, logger) : undefined;
  const subscriber = env.REDIS_URL ? createRedis(env.REDIS_URL, logger, { subscriber: true }) : undefined;
  const epoch = redis ? new RedisRevocationEpoch(redis) : new LocalRevocationEpoch();
  const authenticator = new Authenticator(keyStore, { ttlMs: env.KEY_CACHE_TTL_MS, epoch, onKeyUsed: (prefix) => usage.seen(prefix) });
  const redisUp = redis ? await redisReady(redis) : false;
  if (redis && !redisUp) logger.warn('redis not reachable at start: in-memory rate limits until it is');
  const bus = new InvalidationBus(authenticator, redis, subscriber, { logger });
  const subscribed = bus.start().catch((e: unknown) => logger.warn({ err: (e as Error).message }, 'redis subscribe failed; revocations propagate within the cache TTL'));
  // With Redis down, SUBSCRIBE waits in the client's offline queue until Redis is back: the service starts without it
  // (revocations reach it within the cache TTL until then) instead of hanging at start.
  if (redisUp) await subscribed;
  keyStore.onMinted((prefix) => void bus.keyMinted(prefix));
  await authenticator.loadKnownPrefixes(env.KEY_PREFIX_RELOAD_MS);
  return {
    keyDb,
    keyStore,
    authenticator,
    events: eventStore,
    limiter: redis ? new RedisRateLimiter(redis, logger) : new MemoryRateLimiter(),
    bus,
    redis,
    epoch,
    async close() {
      authenticator.stop();
      await usage.stop();
      redis?.disconnect();
      subscriber?.disconnect();
      await eventStore.close().catch((e: unknown) => logger.error({ err: e }, 'closing event store'));
      await keyDb.close().catch((e: unknown) => logger.error({ err: e }, 'closing key store'));
    },
  };
}
