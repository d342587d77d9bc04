import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Server } from 'node:http';
import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';
import request from 'supertest';
import { API_ROUTES } from '@analytics/schema';
import { openTestStores, silentLogger, systemBinary } from '@analytics/testing';
import { buildApp } from './app';
import { closeServer, listen, urlOf } from './test-service';

type Stores = Awaited<ReturnType<typeof openTestStores>>;
const SECRETS = { ADMIN_TOKEN: 'admin-token-docs-tests', IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal' };
const CHROMIUM = systemBinary({ name: 'chromium', env: 'CHROMIUM_PATH', defaults: ['/usr/bin/chromium'], aptPackage: 'chromium' });

let stores: Stores;
beforeAll(async () => {
  stores = await openTestStores();
});
afterAll(() => stores.close());

describe('GET /docs', () => {
  it('answers an HTML page that loads the renderer and the document from this instance only', async () => {
    const app = buildApp({ stores, secrets: SECRETS, logger: silentLogger });
    const page = await request(app).get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const urls = [...page.text.matchAll(/(?:src|href|spec-url)="([^"]+)"/g)].map((m) => m[1]!);
    expect(urls).toEqual(['data:,', 'openapi.json', 'docs/redoc.standalone.js']);
    const script = await request(app).get('/docs/redoc.standalone.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
  });
  it("gives the document the service's release as info.version (package.json), as /docs shows it", async () => {
    const app = buildApp({ stores, secrets: SECRETS, logger: silentLogger });
    const doc = (await request(app).get('/openapi.json')).body as { info: { version: string } };
    expect(doc.info.version).toBe((JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as { version: string }).version);
    expect(doc.info.version).toBe('0.1.0');
  });
});

CHROMIUM.describe('GET /docs in Chromium', () => {
  let browser: Browser;
  let server: Server;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM.path, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
    server = await listen(buildApp({ stores, secrets: SECRETS, logger: silentLogger }));
  });
  afterAll(async () => {
    await browser?.close();
    if (server) await closeServer(server);
  });

  it('renders every route of the document, with no console error and no request to another host', async () => {
    const base = urlOf(server);
    const page = await browser.newPage();
    const errors: string[] = [];
    const elsewhere: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(`${m.text()} ${m.location().url}`));
    page.on('requestfailed', (r) => errors.push(`failed: ${r.url()}`));
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('request', (r) => {
      const url = r.url();
      if (!url.startsWith(base) && !url.startsWith('blob:') && !url.startsWith('data:')) elsewhere.push(url);
    });
    await page.goto(`${base}/docs`, { waitUntil: 'networkidle' });
    await page.waitForSelector('.api-content', { timeout: 30_000 });
    const text = await page.locator('body').innerText();
    for (const route of API_ROUTES) expect(text).toContain(route.summary);
    expect(errors).toEqual([]);
    expect(elsewhere).toEqual([]);
    await page.close();
  }, 180_000);
});
