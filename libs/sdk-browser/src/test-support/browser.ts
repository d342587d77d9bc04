import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only, outside the SDK's build: the shared skip-when-missing helper
import { systemBinary } from '@analytics/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the shared loopback helpers of the service tests
import { listen, urlOf } from '../../../../apps/standalone/src/test-service';

/** Debian's chromium; never a downloaded browser. CHROMIUM_PATH overrides it; the suites needing it skip without it. */
export const CHROMIUM = systemBinary({ name: 'chromium', env: 'CHROMIUM_PATH', defaults: ['/usr/bin/chromium'], aptPackage: 'chromium' });
export const DIST = join(__dirname, '../../../../dist/libs/sdk-browser');

/** Launches headless Chromium (inside a `CHROMIUM.describe` suite). */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM.path,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * Serves test pages on 127.0.0.1: the built SDK (/analytics.min.js, /index.mjs) and, for any other path, a page that
 * loads it (with ?esm as an ES module, else by <script> tag) and calls init(window.__analyticsConfig) when a test set it.
 */
export async function startPageServer(): Promise<{ server: Server; origin: string }> {
  const files: Record<string, [string, string]> = {
    '/analytics.min.js': ['analytics.min.js', 'text/javascript'],
    '/index.mjs': ['index.mjs', 'text/javascript'],
  };
  const server = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://page.test');
    const file = files[url.pathname];
    if (file) {
      res.writeHead(200, { 'content-type': file[1], 'cache-control': 'no-store' }).end(readFileSync(join(DIST, file[0])));
      return;
    }
    if (url.pathname === '/favicon.ico') return void res.writeHead(404).end();
    const loader = url.searchParams.has('esm')
      ? `<script type="module">import * as analytics from '/index.mjs'; window.analytics = analytics; if (window.__analyticsConfig) analytics.init(window.__analyticsConfig);</script>`
      : `<script src="/analytics.min.js"></script><script>if (window.__analyticsConfig) analytics.init(window.__analyticsConfig);</script>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(`<!doctype html><title>test page</title><h1>${url.pathname}</h1>${loader}`);
  });
  return { server, origin: urlOf(server) };
}
