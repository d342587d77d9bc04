import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import request from 'supertest';
import type { Express } from 'express';
import { openTestStores, silentLogger, systemBinary } from '@analytics/testing';
import { buildApp } from './app';
import { closeServer, listen, urlOf } from './test-service';

type Stores = Awaited<ReturnType<typeof openTestStores>>;
const ROOT = join(__dirname, '../../..');
const SDK_DIR = join(ROOT, 'dist/libs/sdk-browser');
const SECRETS = { ADMIN_TOKEN: 'admin-token-sdk-tests', IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal' };
const CHROMIUM = systemBinary({ name: 'chromium', env: 'CHROMIUM_PATH', defaults: ['/usr/bin/chromium'], aptPackage: 'chromium' });

let stores: Stores;
let app: Express;
let version: string;
let script: Buffer;
beforeAll(async () => {
  execFileSync(process.execPath, [join(ROOT, 'libs/sdk-browser/build.mjs')], { cwd: ROOT, stdio: 'ignore' });
  version = (JSON.parse(readFileSync(join(SDK_DIR, 'package.json'), 'utf8')) as { version: string }).version;
  script = readFileSync(join(SDK_DIR, 'analytics.min.js'));
  stores = await openTestStores();
  app = buildApp({ stores, secrets: SECRETS, logger: silentLogger, sdkDir: SDK_DIR });
});
afterAll(() => stores.close());

describe('GET /sdk/analytics.min.js', () => {
  it('serves the IIFE build without a key, usable from any origin (ACAO *, CORP cross-origin), cached briefly', async () => {
    const res = await request(app).get('/sdk/analytics.min.js');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/javascript/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(Buffer.from(res.text)).toEqual(script);
  });

  it('serves the same bytes at the versioned path with a year-long immutable cache, and 404 for another version', async () => {
    const res = await request(app).get(`/sdk/${version}/analytics.min.js`);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(Buffer.from(res.text)).toEqual(script);
    expect((await request(app).get('/sdk/0.0.0-nope/analytics.min.js')).body).toEqual({ error: 'not_found' });
  });
});

CHROMIUM.describe('the script tag on a page of another origin, in Chromium', () => {
  let service: Server;
  let page: Server;
  beforeAll(async () => {
    service = await listen(app);
    const integrity = `sha384-${createHash('sha384').update(script).digest('base64')}`;
    const src = `${urlOf(service)}/sdk/${version}/analytics.min.js`;
    page = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>shop</title><script src="${src}" integrity="${integrity}" crossorigin="anonymous"></script>`);
    });
  });
  afterAll(async () => {
    await closeServer(page);
    await closeServer(service);
  });

  it('loads with its integrity hash (SRI) checked and exposes window.analytics', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM.path, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
    try {
      const tab = await browser.newPage();
      const errors: string[] = [];
      tab.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      await tab.goto(`${urlOf(page).replace('127.0.0.1', 'localhost')}/`, { waitUntil: 'networkidle' });
      expect(await tab.evaluate(() => typeof (globalThis as unknown as { analytics?: { init?: unknown } }).analytics?.init)).toBe('function');
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 180_000);
});
