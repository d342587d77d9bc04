import { mkdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';
import { systemBinary, openTestStores, silentLogger } from '@analytics/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the dashboard is tested against the whole service it ships with
import { buildApp } from '../../standalone/src/app';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the loopback helpers of the service tests
import { closeServer, listen, urlOf } from '../../standalone/src/test-service';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the read API's seeded data set (days, sources, pages, countries, devices)
import { D0, DAYS, generateProject, ingestBatches, seededRandom } from '../../read-api/src/test-support/seeded-dataset';
import { aiAssistantOfSource } from '@analytics/classifier/ai-assistants';
import { aiCrawlerOf } from '@analytics/enrichment';
import { QUERY_SELECT_COLUMNS } from '@analytics/schema';
import { presetRange } from './state';

/** Debian's chromium; never a downloaded browser. CHROMIUM_PATH overrides it; the suite skips loudly without it. */
const CHROMIUM = systemBinary({ name: 'chromium', env: 'CHROMIUM_PATH', defaults: ['/usr/bin/chromium'], aptPackage: 'chromium' });
const WORKSPACE = join(__dirname, '../../..');
const DIST = join(WORKSPACE, 'dist/apps/dashboard');
const SCREENSHOTS = join(WORKSPACE, 'dist/screenshots');
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const RANGE = { from: day(D0), to: day(D0 + DAYS * 86_400_000) };

// The seeding sends 80 batches at once; the buckets are not under test here.
const UNLIMITED = { track: { ratePerS: 1e6, burst: 1e6 }, batch: { ratePerS: 1e6, burst: 1e6 } };

type Row = Record<string, string | number | null>;

let stores: Awaited<ReturnType<typeof openTestStores>>;
let server: Server;
let base: string;
let browser: Browser;
let rk: string;
let sk: string;
const contexts: BrowserContext[] = [];

/** The read API's answer, asked the way any API user would. */
async function api(path: string, params: Record<string, string | number | undefined>): Promise<{ rows: Row[] }> {
  const qs = new URLSearchParams(Object.entries(params).filter((e): e is [string, string | number] => e[1] !== undefined).map(([k, v]) => [k, String(v)]));
  const res = await fetch(`${base}${path}?${qs}`, { headers: { authorization: `Bearer ${rk}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as { rows: Row[] };
}
const single = async (params: Record<string, string | undefined>) => Number((await api('/v1/stats', params)).rows[0]?.value ?? 0);

interface Watched {
  page: Page;
  context: BrowserContext;
  problems: string[];
}

/** A page in a fresh context that records console errors, failed requests, error answers and other-origin requests. */
async function openPage(options: { width?: number; colorScheme?: 'light' | 'dark' } = {}): Promise<Watched> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: 900 }, colorScheme: options.colorScheme ?? 'light' });
  contexts.push(context);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('request', (r) => {
    if (!r.url().startsWith(base) && !r.url().startsWith('data:')) problems.push(`other origin: ${r.url()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`answered ${r.status()}: ${r.url()}`);
    if (r.headers()['set-cookie']) problems.push(`cookie set by ${r.url()}`);
  });
  return { page, context, problems };
}

async function loaded(page: Page): Promise<void> {
  await page.waitForSelector('body[data-state="loaded"]', { timeout: 30_000 });
}

/** Opens `path` and signs in through the form, as a person does. */
async function signIn(page: Page, path: string): Promise<void> {
  await page.goto(`${base}${path}`);
  await page.fill('#key-input', rk);
  await page.press('#key-input', 'Enter');
  await loaded(page);
}

const shown = (page: Page, testId: string) => page.getAttribute(`[data-testid="${testId}"]`, 'data-value').then(Number);

/** A top list as shown: [key, value] per bar, in order. */
const listOf = (page: Page, id: string) =>
  page.$$eval(`#${id} li`, (items) => items.map((li) => [(li as HTMLElement).dataset['key'] ?? '', Number((li.querySelector('.count') as HTMLElement).dataset['value'])]));

/** Every headline number and top list equals the read API's answer for the range and filter in the page's URL. */
async function expectPanelsMatchApi(page: Page, range: { from: string; to: string }, event?: string): Promise<void> {
  expect(await shown(page, 'visitors')).toBe(await single({ metric: 'uniques', ...range, event }));
  expect(await shown(page, 'pageviews')).toBe(await single({ ...range, event: '$pageview' }));
  expect(await shown(page, 'events')).toBe(await single({ ...range, event }));
  const statsList = async (column: string, params: Record<string, string | undefined>) =>
    (await api('/v1/stats', { ...params, ...range, group_by: column, limit: 10 })).rows.map((r) => [r[column] === null ? '' : String(r[column]), Number(r['value'])]);
  expect(await listOf(page, 'list-pages')).toEqual(await statsList('path', { event: event ?? '$pageview' }));
  expect(await listOf(page, 'list-countries')).toEqual(await statsList('country', { metric: 'uniques', event }));
  expect(await listOf(page, 'list-devices')).toEqual(await statsList('device_type', { metric: 'uniques', event }));
  expect(await listOf(page, 'list-browsers')).toEqual(await statsList('browser', { metric: 'uniques', event }));
  expect(await listOf(page, 'list-os')).toEqual(await statsList('os', { metric: 'uniques', event }));
  expect(await listOf(page, 'list-events')).toEqual(await statsList('event_name', { event }));
  expect(await listOf(page, 'list-channels')).toEqual(await statsList('channel', { metric: 'uniques', event }));
  // AI assistants: $pageview counts of the ai_assistant channel by assistant (chatgpt.com as a referrer and as a
  // utm_source are one assistant); AI crawlers: every event of a known AI crawler (a bot, named in browser).
  const fold = (rows: Row[], keep: (r: Row) => boolean, keyOf: (r: Row) => string) => {
    const sums = new Map<string, number>();
    for (const r of rows.filter(keep)) sums.set(keyOf(r), (sums.get(keyOf(r)) ?? 0) + Number(r['value']));
    return [...sums].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10);
  };
  const byChannel = (await api('/v1/stats', { ...range, event: '$pageview', group_by: 'channel,source', limit: 1000 })).rows;
  expect(await listOf(page, 'list-ai-assistants')).toEqual(fold(byChannel, (r) => r['channel'] === 'ai_assistant', (r) => aiAssistantOfSource(String(r['source'])) ?? String(r['source'])));
  const byBrowser = (await api('/v1/stats', { ...range, event, group_by: 'device_type,browser', limit: 1000 })).rows;
  expect(await listOf(page, 'list-ai-crawlers')).toEqual(fold(byBrowser, (r) => r['device_type'] === 'bot' && aiCrawlerOf(String(r['browser'])) !== undefined, (r) => String(r['browser'])));
  const sources = (await api('/v1/sources', { ...range, limit: 10 })).rows
    .sort((a, b) => Number(b['uniques']) - Number(a['uniques']) || Number(b['events']) - Number(a['events']))
    .map((r) => [`${r['source']}/${r['medium']}`, Number(r['uniques'])]);
  expect(await listOf(page, 'list-sources')).toEqual(sources);
  const recent = (await api('/v1/query', { ...range, event, limit: 20 })).rows;
  const table = await page.$$eval('#recent tbody tr', (rows) => rows.map((r) => r.querySelector('td:nth-child(2)')?.textContent));
  expect(table).toEqual(recent.length ? recent.map((r) => r['event_name']) : ['No events in this range.']);
}

CHROMIUM.describe('dashboard in Chromium against the real service', () => {
  beforeAll(async () => {
    stores = await openTestStores();
    const app = buildApp({ stores, logger: silentLogger, trustProxy: true, dashboardDir: DIST, rateRules: UNLIMITED, secrets: { ADMIN_TOKEN: 'admin-token-test', IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal' } });
    server = await listen(app);
    base = urlOf(server);
    const created = await stores.keyStore.createProject({ name: 'dashboard', allowed_origins: [] });
    rk = created.keys.rk;
    sk = created.keys.sk;
    await ingestBatches(app, () => sk, generateProject('dash', { visitors: 80 }, seededRandom(16)));
    // Today's traffic, for the live figure and the ranges that end today.
    const now = Date.now();
    const today = Array.from({ length: 6 }, (_, i) => ({ event: i % 3 === 2 ? 'signup' : '$pageview', anonymous_id: `live-${i % 4}`, timestamp: new Date(now - i * 60_000).toISOString(), url: 'https://shop.example.com/live', properties: { plan: 'pro', seats: i } }));
    const res = await fetch(`${base}/v1/batch`, { method: 'POST', headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json', 'x-forwarded-for': '81.2.69.160' }, body: JSON.stringify({ events: today }) });
    expect(res.status).toBe(202);
    // AI crawlers fetching pages in the range (bots: device_type bot, browser the crawler's name).
    for (const [ua, n] of [['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)', 3], ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)', 2]] as const) {
      const crawl = Array.from({ length: n }, (_, i) => ({ event: '$pageview', anonymous_id: `crawler-${n}`, timestamp: new Date(D0 + 86_400_000 + i * 1000).toISOString(), url: 'https://shop.example.com/docs' }));
      const sent = await fetch(`${base}/v1/batch`, { method: 'POST', headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json', 'user-agent': ua }, body: JSON.stringify({ events: crawl }) });
      expect(sent.status).toBe(202);
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM.path,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    mkdirSync(SCREENSHOTS, { recursive: true });
  });

  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });

  afterAll(async () => {
    await browser?.close();
    if (server) await closeServer(server);
    await stores?.close();
  });

  it('serves the page and its assets without a key, under a strict CSP, with no cookie', async () => {
    for (const path of ['/', '/assets/dashboard.js', '/assets/dashboard.css']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'; style-src 'self'");
      expect(res.headers.get('content-security-policy')).toContain("connect-src 'self'");
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    expect((await fetch(`${base}/assets/nope.js`)).status).toBe(404);
  });

  it('shows every number and top list as the read API answers them, signed in through the form with the key in sessionStorage only', async () => {
    const { page, context, problems } = await openPage();
    await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}`);
    expect(page.url()).toBe(`${base}/?from=${RANGE.from}&to=${RANGE.to}`);
    expect(await page.evaluate(() => sessionStorage.getItem('analytics.readKey'))).toBe(rk);
    await expectPanelsMatchApi(page, RANGE);
    expect(await listOf(page, 'list-ai-crawlers')).toEqual([['GPTBot', 3], ['ClaudeBot', 2]]);
    expect((await listOf(page, 'list-ai-assistants')).map(([k]) => k).sort()).toEqual(['chatgpt', 'perplexity']);
    expect(await page.textContent('#list-ai-crawlers li[data-key="GPTBot"] .extra')).toBe('OpenAI');
    expect(await shown(page, 'live')).toBe(4);
    expect(await page.locator('#chart canvas').count()).toBe(1);
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-1280-light.png'), fullPage: true });
    expect(await context.cookies()).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('uses no key from a #key= link: drops it from the address and every history entry at once, and asks for it in the form', async () => {
    const { page, context, problems } = await openPage();
    const sent: string[] = [];
    page.on('request', (r) => sent.push(`${r.url()} ${JSON.stringify(r.headers())}`));
    const clean = `${base}/?from=${RANGE.from}&to=${RANGE.to}`;
    await page.goto(`${clean}#key=${rk}`);
    await page.waitForSelector('#sign-in:not([hidden])');
    expect(await page.textContent('#key-error')).toContain('Keys in links are not accepted');
    expect(await page.evaluate(() => [location.href, history.length, sessionStorage.length])).toEqual([clean, expect.any(Number), 0]);
    const history = async () => (await (await context.newCDPSession(page)).send('Page.getNavigationHistory')).entries.map((e) => e.url);
    const secret = rk.split('_')[3]!;
    expect((await history()).filter((url) => url.includes(secret))).toEqual([]);
    expect((await history()).at(-1)).toBe(clean);
    expect(sent.filter((line) => line.includes(secret))).toEqual([]);

    await page.fill('#key-input', rk);
    await page.press('#key-input', 'Enter');
    await loaded(page);
    expect((await history()).filter((url) => url.includes(secret))).toEqual([]);
    expect(page.url()).toBe(clean);
    expect(problems).toEqual([]);
  });

  it('filters every stats call to a clicked event name, and the range buttons change the URL and the numbers', async () => {
    const { page, problems } = await openPage();
    await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}`);
    await page.click('#list-events li[data-key="signup"] button');
    await page.waitForURL(/event=signup/);
    await loaded(page);
    expect(new URL(page.url()).searchParams.get('event')).toBe('signup');
    await expectPanelsMatchApi(page, RANGE, 'signup');

    await page.click('#clear-filter');
    await page.waitForURL((u) => !u.searchParams.has('event'));
    await loaded(page);
    await expectPanelsMatchApi(page, RANGE);

    await page.click('button[data-preset="7d"]');
    const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    const week = { from: day(today - 6 * 86_400_000), to: day(today + 86_400_000) };
    await page.waitForURL((u) => u.searchParams.get('from') === week.from && u.searchParams.get('to') === week.to);
    await loaded(page);
    expect(await page.getAttribute('button[data-preset="7d"]', 'aria-pressed')).toBe('true');
    await expectPanelsMatchApi(page, week);
    expect(await shown(page, 'events')).toBe(6);

    await page.goBack();
    await page.waitForURL((u) => u.searchParams.get('from') === RANGE.from);
    await loaded(page);
    await expectPanelsMatchApi(page, RANGE);

    // A custom range: first and last day inclusive in the form, `to` the day after in the URL.
    await page.fill('#custom-from', '2026-03-05');
    await page.fill('#custom-to', '2026-03-06');
    await page.click('#custom-range button[type="submit"]');
    await page.waitForURL((u) => u.searchParams.get('from') === '2026-03-05' && u.searchParams.get('to') === '2026-03-07');
    await loaded(page);
    await expectPanelsMatchApi(page, { from: '2026-03-05', to: '2026-03-07' });
    expect(problems).toEqual([]);
  });

  it('opens on the last 7 days without a range, and asks for the key without one', async () => {
    const { page } = await openPage();
    await page.goto(`${base}/`);
    await page.waitForSelector('#sign-in:not([hidden])');
    await page.fill('#key-input', rk);
    await page.press('#key-input', 'Enter');
    await loaded(page);
    const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    expect(await page.getAttribute('button[data-preset="7d"]', 'aria-pressed')).toBe('true');
    expect(await shown(page, 'events')).toBe(await single({ from: day(today - 6 * 86_400_000), to: day(today + 86_400_000) }));
    await page.click('#sign-out');
    await page.waitForSelector('#sign-in:not([hidden])');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });

  it('shows the API refusal in words for a key of another kind or an unknown key', async () => {
    const { page } = await openPage();
    await page.goto(`${base}/`);
    await page.fill('#key-input', sk);
    await page.click('#key-form button[type="submit"]');
    await page.waitForSelector('#sign-in:not([hidden])');
    await page.waitForFunction(() => document.getElementById('key-error')?.textContent !== '');
    expect(await page.textContent('#key-error')).toContain('needs a read key (rk_…)');
    expect(await page.textContent('#key-error')).toContain('403 insufficient_scope');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    const unknown = `${rk.slice(0, -4)}0000`;
    await page.fill('#key-input', unknown);
    await page.press('#key-input', 'Enter');
    await page.waitForFunction(() => document.getElementById('key-error')?.textContent?.includes('401'));
    expect(await page.textContent('#key-error')).toContain('invalid_api_key');
  });

  it('has no serious or critical accessibility violation (axe-core), light and dark, 1280 and 375 px', async () => {
    const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const width of [1280, 375]) {
        const { page, problems } = await openPage({ width, colorScheme });
        await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}`);
        // Evaluated through the DevTools protocol, so the page's CSP (no inline script) stays as served.
        await page.evaluate(axeSource);
        const violations = await page.evaluate(async () => {
          const result = await (window as unknown as { axe: { run: () => Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } }).axe.run();
          return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}, ${v.nodes.length} nodes)`);
        });
        expect({ colorScheme, width, violations }).toEqual({ colorScheme, width, violations: [] });
        const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
        expect(scrollWidth).toBeLessThanOrEqual(width);
        await page.screenshot({ path: join(SCREENSHOTS, `dashboard-${width}-${colorScheme}.png`), fullPage: true });
        expect(problems).toEqual([]);
      }
    }
  });

  it('is keyboard navigable: Tab reaches the range buttons and an event name, Enter applies it', async () => {
    const { page } = await openPage();
    await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}`);
    const focusedIds: string[] = [];
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press('Tab');
      const where = await page.evaluate(() => {
        const a = document.activeElement as HTMLElement | null;
        return a?.closest('li')?.dataset['key'] && a.closest('#list-events') ? `event:${a.closest('li')!.dataset['key']}` : (a?.dataset['preset'] ?? a?.id ?? '');
      });
      focusedIds.push(where);
      if (where === 'event:signup') break;
    }
    expect(focusedIds).toContain('7d');
    expect(focusedIds.at(-1)).toBe('event:signup');
    await page.keyboard.press('Enter');
    await page.waitForURL(/event=signup/);
  });

  it("charts little data as it is: the legend holds the range's totals until hovered, then the hovered day's; today's hours to come are not drawn", async () => {
    const { page, problems } = await openPage();
    const legend = () => page.$$eval('#chart .u-legend .u-series .u-value', (cells) => cells.slice(1).map((c) => c.textContent));
    const hover = async (fraction: number) => {
      const box = (await page.locator('#chart .u-over').boundingBox())!;
      await page.mouse.move(box.x + box.width * fraction, box.y + box.height / 2);
    };
    // The last 7 days hold only today's traffic: one bar on the last day, no ramp from the day before.
    await signIn(page, '/');
    const week = presetRange('7d', Date.now());
    const range = { from: day(week.from), to: day(week.to) };
    const totals = [await shown(page, 'visitors'), await shown(page, 'pageviews')];
    expect(totals[0]).toBeGreaterThan(0);
    expect(await legend()).toEqual(totals.map((n) => `${n} in range`));
    const daily = async (params: Record<string, string>) => Number((await api('/v1/stats', { ...params, ...range, interval: 'day' })).rows.at(-1)?.value ?? 0);
    await hover(0.97);
    expect(await legend()).toEqual([String(await daily({ metric: 'uniques' })), String(await daily({ event: '$pageview' }))]);
    await page.mouse.move(0, 0);
    expect(await legend()).toEqual(totals.map((n) => `${n} in range`));

    await page.click('[data-preset="today"]');
    await loaded(page);
    if (new Date().getUTCHours() < 23) {
      await hover(0.99);
      expect(await legend()).toEqual(['–', '–']);
    }
    expect(problems).toEqual([]);
  });

  it('says under the recent events that a forget leaves the aggregates behind the numbers above counting', async () => {
    const { page, problems } = await openPage();
    await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}`);
    const note = page.locator('section[aria-labelledby="recent-title"] #deleted-note');
    expect(await note.isVisible()).toBe(true);
    expect(await note.textContent()).toMatch(/deleted by a forget[\s\S]*daily aggregates, which keep counting them/);
    expect(problems).toEqual([]);
  });

  it('downloads the range shown as CSV with the Export button (GET /v1/export with the key), the file the API serves', async () => {
    const { page, context, problems } = await openPage();
    await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}`);
    const exports: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/v1/export')) exports.push(r.url());
    });
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    expect(exports).toEqual([`${base}/v1/export?from=${RANGE.from}&to=${RANGE.to}&format=csv`]);
    expect(download.suggestedFilename()).toBe(`dashboard-${RANGE.from}T000000Z-${RANGE.to}T000000Z.csv`);
    const saved = readFileSync((await download.path())!, 'utf8');
    const res = await fetch(exports[0]!, { headers: { authorization: `Bearer ${rk}` } });
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(saved).toBe(await res.text());
    // A header and one line per event of the range (no newline inside a field: properties are JSON text).
    expect(saved.split('\n')[0]).toBe(QUERY_SELECT_COLUMNS.map((c) => `"${c}"`).join(','));
    expect(saved.trimEnd().split('\n').length - 1).toBe(await single({ ...RANGE }));
    expect(await page.textContent('#export-csv')).toBe('Export CSV');
    expect(await context.cookies()).toEqual([]);
    expect(problems).toEqual([]);
  });

  // Last: it adds an event to today's traffic, which the range tests above count.
  it('refreshes the visitors of the last 30 minutes every 30 s', async () => {
    const { page, problems } = await openPage();
    await page.clock.install({ time: Date.now() });
    await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}`);
    const before = await shown(page, 'live');
    const res = await fetch(`${base}/v1/batch`, { method: 'POST', headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' }, body: JSON.stringify({ events: [{ event: '$pageview', anonymous_id: 'live-new' }] }) });
    expect(res.status).toBe(202);
    await page.clock.runFor(29_000);
    expect(await shown(page, 'live')).toBe(before);
    await page.clock.runFor(1_000);
    await page.waitForFunction((n) => Number(document.querySelector<HTMLElement>('[data-testid="live"]')?.dataset['value']) === n, before + 1);
    expect(problems).toEqual([]);
  });
});
