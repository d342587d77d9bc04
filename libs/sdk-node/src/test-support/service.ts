import { once } from 'node:events';
import { type RequestListener, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openTestStores, silentLogger } from '@analytics/testing';
// The SDK is tested against the real service: the standalone app (what `npm start` runs) on real embedded stores.
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: an SDK's tests need the whole service
import { buildApp } from '../../../../apps/standalone/src/app';

export type TestStores = Awaited<ReturnType<typeof openTestStores>>;

export interface RealService {
  stores: TestStores;
  endpoint: string;
  /** Every request the service received (method and path), in arrival order. */
  requests: { method: string; path: string }[];
  close(): Promise<void>;
}

/** Opens real embedded stores and serves the standalone app on 127.0.0.1 (a free port). */
export async function startRealService(): Promise<RealService> {
  const stores = await openTestStores();
  const app = buildApp({ stores, logger: silentLogger, secrets: { ADMIN_TOKEN: 'admin-token-test', IP_HASH_SECRET: 'ip-secret-test', INTERNAL_SECRET: 'internal-secret-test' } });
  const requests: RealService['requests'] = [];
  const server = await listen((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '' });
    app(req, res);
  });
  return {
    stores,
    endpoint: urlOf(server),
    requests,
    async close() {
      await closeServer(server);
      await stores.close();
    },
  };
}

export async function listen(handler: RequestListener): Promise<Server> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

export const urlOf = (server: Server): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
