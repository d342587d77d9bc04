import { existsSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the shared loopback helpers of the service tests
import { listen, urlOf } from '../../../../apps/standalone/src/test-service';

/** Debian's chromium; never a downloaded browser. CHROMIUM_PATH overrides it. */
export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
export const DIST = join(__dirname, '../../../../dist/libs/sdk-browser');

/** Launches headless Chromium; fails (never skips) with a clear message when it is not installed. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`sdk-browser tests need Chromium at ${CHROMIUM}: install it with \`apt-get update && apt-get install -y chromium\` (.ci/run does this).`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
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
