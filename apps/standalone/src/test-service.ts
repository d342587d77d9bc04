import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { type RequestListener, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from './app';

// The whole service for client tests (the SDKs'): the standalone app (what `npm start` runs) on real embedded
// stores, on a free loopback port, recording every request it answered. Test-only: main.ts never imports it.

export type TestStores = Awaited<ReturnType<typeof openTestStores>>;

/** One request the service answered (preflights included). */
export interface SeenRequest {
  method: string;
  path: string;
  origin: string | undefined;
  /** The bearer key presented, '' when none. */
  key: string;
  contentType: string | undefined;
  status: number;
  /** The parsed JSON body (what the app's body parser made of it). */
  body: unknown;
  at: number;
}

export interface RealService {
  stores: TestStores;
  endpoint: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/** Opens real embedded stores and serves the standalone app on 127.0.0.1 (a free port), logging every request. */
export async function startRealService(): Promise<RealService> {
  const stores = await openTestStores();
  const app = buildApp({ stores, logger: silentLogger, secrets: { ADMIN_TOKEN: 'admin-token-test', IP_HASH_SECRET: 'ip-secret-test', INTERNAL_SECRET: 'internal-secret-test' } });
  const requests: SeenRequest[] = [];
  const server = await listen((req, res) => {
    res.on('finish', () =>
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        origin: req.headers.origin,
        key: /^Bearer\s+(\S+)/i.exec(req.headers.authorization ?? '')?.[1] ?? '',
        contentType: req.headers['content-type'],
        status: res.statusCode,
        body: (req as { body?: unknown }).body,
        at: Date.now(),
      }),
    );
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

/**
 * A browser SDK build (what dist/libs/sdk-browser holds: the script and its package.json) in a fresh temp directory,
 * for suites that only need the /sdk routes to answer; sdk-script.spec.ts serves the real build.
 */
export function sdkBuildFixture(version = '0.0.0-fixture'): { dir: string; version: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-build-'));
  writeFileSync(join(dir, 'analytics.min.js'), 'window.analytics = {};\n');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: '@analytics/sdk-browser', version }));
  return { dir, version };
}
