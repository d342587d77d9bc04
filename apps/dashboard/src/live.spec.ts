import { join } from 'node:path';
import type { Server } from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { openTestStores, silentLogger } from '@analytics/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the dashboard is tested against the whole service it ships with
import { buildApp } from '../../standalone/src/app';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the loopback helpers of the service tests
import { closeServer, listen, urlOf } from '../../standalone/src/test-service';
import { parseSse } from './live';
import { CHROMIUM, launchChromium, loaded, shown, signIn, watch } from './test-support/page';

// The live view (issue 47) in Chromium against `npm start`'s app: a pageview sent while the view is open appears in it
// without a reload, read from GET /v1/live with the key in the Authorization header (never in a URL); and the headline
// is asked again every 30 s while the range includes now. Needs `node apps/dashboard/build.mjs` (dist/apps/dashboard).
const DIST = join(__dirname, '../../..', 'dist/apps/dashboard');
const UNLIMITED = { track: { ratePerS: 1e6, burst: 1e6 }, batch: { ratePerS: 1e6, burst: 1e6 } };

describe('parseSse', () => {
  it('splits messages, event names and comments, and keeps an unfinished block for the next chunk', () => {
    expect(parseSse(': live\n\ndata: {"a":1}\n\n: ping\n\nevent: error\ndata: {"error":"invalid_api_key"}\n\ndata: {"b"')).toEqual({
      items: [{ comment: 'live' }, { event: 'message', data: '{"a":1}' }, { comment: 'ping' }, { event: 'error', data: '{"error":"invalid_api_key"}' }],
      rest: 'data: {"b"',
    });
    expect(parseSse('data: one\r\ndata: two\r\n\r\n')).toEqual({ items: [{ event: 'message', data: 'one\ntwo' }], rest: '' });
  });
});

CHROMIUM.describe('the live view in Chromium', () => {
  let stores: Awaited<ReturnType<typeof openTestStores>>;
  let server: Server;
  let base: string;
  let browser: Browser;
  let rk: string;
  let sk: string;
  const contexts: BrowserContext[] = [];

  const send = async (events: object[]) => {
    const res = await fetch(`${base}/v1/batch`, { method: 'POST', headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' }, body: JSON.stringify({ events }) });
    expect(res.status).toBe(202);
  };
  const openPage = async (): Promise<{ page: Page; problems: string[] }> => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    return { page, problems: watch(page, base) };
  };
  const liveText = (page: Page, selector: string) => page.$$eval(selector, (cells) => cells.map((c) => c.textContent ?? ''));

  beforeAll(async () => {
    stores = await openTestStores();
    server = await listen(buildApp({ stores, logger: silentLogger, trustProxy: true, dashboardDir: DIST, rateRules: UNLIMITED, secrets: { ADMIN_TOKEN: 'admin-token-test', IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal' } }));
    base = urlOf(server);
    const created = await stores.keyStore.createProject({ name: 'live', allowed_origins: [] });
    ({ rk, sk } = created.keys);
    await send([{ event: '$pageview', anonymous_id: 'first-visitor', url: 'https://shop.example.com/first', timestamp: new Date(Date.now() - 60_000).toISOString() }]);
    browser = await launchChromium();
  });

  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });

  afterAll(async () => {
    await browser?.close();
    if (server) await closeServer(server);
    await stores?.close();
  });

  it('shows a pageview sent while the live view is open, without a reload, the key only in the Authorization header', async () => {
    const { page, problems } = await openPage();
    const live: Array<{ url: string; authorization: string | undefined }> = [];
    page.on('request', (r) => {
      if (r.url().includes('/v1/live')) live.push({ url: r.url(), authorization: r.headers()['authorization'] });
    });
    await signIn(page, `${base}/`, rk);
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    expect(await page.isVisible('#live-view')).toBe(false);
    await page.click('#live-toggle');
    expect(await page.getAttribute('#live-toggle', 'aria-pressed')).toBe('true');
    await page.waitForFunction(() => document.querySelector('#live-events tbody td:nth-child(3)')?.textContent === '/first', undefined, { timeout: 15_000 });
    expect(await shown(page, 'live-visitors')).toBe(1);

    await send([{ event: '$pageview', anonymous_id: 'second-visitor', url: 'https://shop.example.com/fresh' }]);
    // The next message (every 5 s) carries it: no reload, no click.
    await page.waitForFunction(() => document.querySelector('#live-events tbody td:nth-child(3)')?.textContent === '/fresh', undefined, { timeout: 20_000 });
    expect(await shown(page, 'live-visitors')).toBe(2);
    expect(await liveText(page, '#live-events tbody td:nth-child(3)')).toEqual(['/fresh', '/first']);
    expect(await page.$$eval('#live-pages li', (items) => items.map((li) => (li as HTMLElement).dataset['key']).sort())).toEqual(['/first', '/fresh']);
    const minutes = await page.$$eval('#live-minutes .minute', (bars) => bars.map((b) => Number((b as HTMLElement).dataset['value'])));
    expect(minutes).toHaveLength(30);
    expect(minutes.reduce((a, b) => a + b, 0)).toBe(2);
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    // One stream, its key in the header only.
    expect(live).toEqual([{ url: `${base}/v1/live`, authorization: `Bearer ${rk}` }]);
    expect(JSON.stringify(live.map((l) => l.url))).not.toContain(rk);
    expect(problems).toEqual([]);
  });

  it('asks the headline again every 30 s while the range includes now', async () => {
    const { page, problems } = await openPage();
    await page.clock.install({ time: Date.now() });
    await page.goto(`${base}/`);
    const start = await page.evaluate(() => Date.now());
    await page.fill('#key-input', rk);
    await page.press('#key-input', 'Enter');
    await loaded(page);
    const before = await shown(page, 'pageviews');
    await send([{ event: '$pageview', anonymous_id: 'third-visitor', url: 'https://shop.example.com/later' }]);
    await page.clock.runFor(Math.max(0, 29_000 - ((await page.evaluate(() => Date.now())) - start)));
    expect(await shown(page, 'pageviews')).toBe(before);
    await page.clock.runFor(1_000);
    await page.waitForFunction((n) => Number(document.querySelector<HTMLElement>('[data-testid="pageviews"]')?.dataset['value']) === n, before + 1);
    expect(problems).toEqual([]);
  });
});
