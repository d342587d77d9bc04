import { Redis } from 'ioredis';
import type { Logger } from './logger';

/**
 * A Redis client that fails fast instead of queueing while Redis is down (callers fall back), and reconnects
 * on its own when it comes back.
 */
export function createRedis(url: string, logger: Logger, options: { subscriber?: boolean } = {}): Redis {
  const redis = new Redis(url, {
    lazyConnect: false,
    connectTimeout: 2_000,
    commandTimeout: options.subscriber ? undefined : 500,
    maxRetriesPerRequest: options.subscriber ? null : 0,
    enableOfflineQueue: Boolean(options.subscriber),
    // A subscriber sends nothing but SUBSCRIBE: ioredis's handshake (INFO, CLIENT SETINFO) can race a SUBSCRIBE sent while
    // connecting and leave the connection failing in a loop, so revocations never arrive (redis/ioredis#2037).
    ...(options.subscriber ? { enableReadyCheck: false, disableClientInfo: true } : {}),
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  });
  let reported = false;
  redis.on('error', (e: Error) => {
    if (!reported) logger.warn({ err: e.message }, 'redis connection error');
    reported = true;
  });
  redis.on('ready', () => {
    reported = false;
  });
  return redis;
}

/** Waits until the client is connected (or the timeout passes); fail-fast commands sent earlier would be refused. */
export async function redisReady(redis: Redis, timeoutMs = 2_000): Promise<boolean> {
  if (redis.status === 'ready') return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    redis.once('ready', onReady);
  });
}
