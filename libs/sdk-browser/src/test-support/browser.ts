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

/**
 * ?links=<other origin>: links for the standard events: #out (another host), #file (a .PDF on this host), #attr (a
 * `download` attribute), #foreign-file (a .zip on the other host), #inside (this host) and #mail (mailto:).
 */
function LINKS(url: URL): string {
  const other = url.searchParams.get('links');
  if (other === null) return '';
  return [
    `<a id="out" href="${other}/landing?from=page#top">out</a>`,
    `<a id="file" href="/files/Report.PDF?v=2">report</a>`,
    `<a id="attr" href="/export/data" download>export</a>`,
    `<a id="foreign-file" href="${other}/dist/tool.zip"><span id="inner">tool</span></a>`,
    `<a id="inside" href="/about">about</a>`,
    `<a id="mail" href="mailto:someone@example.com">mail</a>`,
  ].join(' ');
}

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
    const attr = (v: string) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
    // ?tag=<endpoint>|<key>|<data attribute>,...: the script tag alone starts the client from its data attributes.
    const tag = url.searchParams.get('tag');
    if (tag !== null) {
      const [endpoint = '', key = '', flags = ''] = tag.split('|');
      const data = flags.split(',').filter(Boolean).map((f) => { const [n, v] = f.split('='); return v === undefined ? ` data-${attr(n!)}` : ` data-${attr(n!)}="${attr(v)}"`; }).join('');
      const scriptTag = `<script src="/analytics.min.js" data-endpoint="${attr(endpoint)}" data-key="${attr(key)}"${data}></script>`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(`<!doctype html><title>test page</title><h1>${url.pathname}</h1>${LINKS(url)}${scriptTag}`);
      return;
    }
    const loader = url.searchParams.has('esm')
      ? `<script type="module">import * as analytics from '/index.mjs'; window.analytics = analytics; if (window.__analyticsConfig) analytics.init(window.__analyticsConfig);</script>`
      : `<script src="/analytics.min.js"></script><script>if (window.__analyticsConfig) analytics.init(window.__analyticsConfig);</script>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(`<!doctype html><title>test page</title><h1>${url.pathname}</h1>${LINKS(url)}${loader}`);
  });
  return { server, origin: urlOf(server) };
}
