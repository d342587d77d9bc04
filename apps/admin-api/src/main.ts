import { InvalidationBus, KeyStore, createPgPort, migrateKeyStore } from '@analytics/auth';
import { envSchema, requireSettings, serve, runMain } from '@analytics/runtime';
import { createLogger, createRedis, loadConfig } from '@analytics/service-kit';
import { buildApp } from './app';

async function main() {
  const env = loadConfig(envSchema);
  requireSettings(env, ['DATABASE_URL', 'ADMIN_TOKEN'], 'admin-api');
  const logger = createLogger({ level: env.LOG_LEVEL, name: 'admin-api' });
  const db = await createPgPort(env.DATABASE_URL!, (e) => logger.warn({ err: e.message }, 'postgres idle client error'));
  await migrateKeyStore(db);
  // Revocations reach the other services' key caches through Redis at once; without it, within the cache TTL.
  const redis = env.REDIS_URL ? createRedis(env.REDIS_URL, logger) : undefined;
  const bus = new InvalidationBus(undefined, redis);
  const app = buildApp({
    logger,
    keyStore: new KeyStore(db),
    adminToken: env.ADMIN_TOKEN!,
    onKeyRevoked: (prefix) => bus.keyRevoked(prefix),
    onProjectChanged: (id) => bus.projectChanged(id),
  });
  await serve(app, env.PORT, logger, async () => {
    redis?.disconnect();
    await db.close();
  });
}

runMain(main);
