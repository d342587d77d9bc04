import type { Redis } from 'ioredis';
import { createLogger, createRedis } from '@analytics/service-kit';

/**
 * Redis connections for one describe block of a suite that needs a real Redis (`server`: its systemServer), each
 * disconnected after the block: `connect()` a command client, `connect(true)` a subscriber.
 */
export function redisClients(server: { url?: string }): (subscriber?: boolean) => Redis {
  const clients: Redis[] = [];
  afterAll(() => clients.forEach((c) => c.disconnect()));
  return (subscriber = false) => {
    const c = createRedis(server.url!, createLogger({ level: 'silent' }), { subscriber });
    clients.push(c);
    return c;
  };
}
