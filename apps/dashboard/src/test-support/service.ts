import { join } from 'node:path';
import type { Server } from 'node:http';
import type { Browser } from 'playwright-core';
import { openTestStores, silentLogger } from '@analytics/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the dashboard is tested against the whole service it ships with
import { buildApp } from '../../../standalone/src/app';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the loopback helpers of the service tests
import { closeServer, listen, urlOf } from '../../../standalone/src/test-service';
import { launchChromium } from './page';

/** The dashboard's build (`nx build dashboard`, a dependency of its test target). */
export const DIST = join(__dirname, '../../../../dist/apps/dashboard');

export interface ServedDashboard {
  stores: Awaited<ReturnType<typeof openTestStores>>;
  base: string;
  browser: Browser;
}

/**
 * The whole service (`npm start`'s app on real embedded stores) serving the dashboard, and a Chromium, for one
 * `CHROMIUM.describe` suite: started in beforeAll, closed in afterAll. Read the fields inside the tests.
 */
export function useServedDashboard(adminToken: string): ServedDashboard {
  const served = {} as ServedDashboard;
  let server: Server | undefined;
  beforeAll(async () => {
    served.stores = await openTestStores();
    server = await listen(buildApp({ stores: served.stores, logger: silentLogger, trustProxy: true, dashboardDir: DIST, secrets: { ADMIN_TOKEN: adminToken, IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal' } }));
    served.base = urlOf(server);
    served.browser = await launchChromium();
  });
  afterAll(async () => {
    await served.browser?.close();
    if (server) await closeServer(server);
    await served.stores?.close();
  });
  return served;
}
