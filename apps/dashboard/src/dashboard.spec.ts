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

type Condition = ['is', string, string[]];
type Filters = Array<[string, string]>;
const conditions = (filters: Filters): Condition[] => filters.map(([d, v]) => ['is', d, [v]]);

/** POST /v1/insights, asked the way any API user would. */
async function insights(body: Record<string, unknown>): Promise<Row[]> {
  const res = await fetch(`${base}/v1/insights`, { method: 'POST', headers: { authorization: `Bearer ${rk}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { rows: Row[] }).rows;
}

/** The lists the dashboard shows: section id, dimension, metric (the same questions, asked independently here). */
const LISTS: Array<[string, string, string]> = [
  ['list-sources', 'source', 'visitors'],
  ['list-channels', 'channel', 'visitors'],
  ['list-pages', 'path', 'visitors'],
  ['list-entry-pages', 'entry_path', 'visits'],
  ['list-exit-pages', 'exit_path', 'visits'],
  ['list-countries', 'country', 'visitors'],
  ['list-devices', 'device_type', 'visitors'],
  ['list-browsers', 'browser', 'visitors'],
  ['list-os', 'os', 'visitors'],
  ['list-events', 'event_name', 'events'],
];
const HEADLINE = ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration', 'events'] as const;

/** Every headline number (and its previous period) and every list equals the insights answer for the range and filters. */
async function expectPanelsMatchApi(page: Page, range: { from: string; to: string }, filters: Filters = []): Promise<void> {
  const where = conditions(filters);
  const [totals] = await insights({ ...range, metrics: HEADLINE, filters: where, compare: 'previous_period' });
  for (const m of HEADLINE) {
    expect([m, await shown(page, m)]).toEqual([m, Number(totals![m])]);
    const previous = await page.getAttribute(`[data-testid="${m}"] + .change`, 'data-previous');
    expect([m, Number(previous)]).toEqual([m, (totals!['comparison'] as unknown as Record<string, number>)[m]]);
  }
  for (const [id, dimension, metric] of LISTS) {
    const rows = await insights({ ...range, metrics: [metric], dimensions: [dimension], filters: where, limit: 10 });
    expect([id, await listOf(page, id)]).toEqual([id, rows.map((r) => [r[dimension] === null ? '' : String(r[dimension]), Number(r[metric])])]);
  }
  // AI assistants: visits of the ai_assistant channel by assistant (chatgpt.com as a referrer and as a utm_source are
  // one assistant; a visit has one source, so visits add up exactly); AI crawlers: every event of a known AI crawler
  // (a bot, named in browser; insights count bots only with include_bots).
  const fold = (rows: Row[], metric: string, keyOf: (r: Row) => string | undefined) => {
    const sums = new Map<string, number>();
    for (const r of rows) {
      const key = keyOf(r);
      if (key !== undefined) sums.set(key, (sums.get(key) ?? 0) + Number(r[metric]));
    }
    return [...sums].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10);
  };
  const assistants = await insights({ ...range, metrics: ['visits'], dimensions: ['source'], filters: [['is', 'channel', ['ai_assistant']], ...where], limit: 1000 });
  expect(await listOf(page, 'list-ai-assistants')).toEqual(fold(assistants, 'visits', (r) => aiAssistantOfSource(String(r['source'])) ?? String(r['source'])));
  const bots = await insights({ ...range, metrics: ['events'], dimensions: ['browser'], filters: [['is', 'device_type', ['bot']], ...where], include_bots: true, limit: 1000 });
  expect(await listOf(page, 'list-ai-crawlers')).toEqual(fold(bots, 'events', (r) => (aiCrawlerOf(String(r['browser'])) === undefined ? undefined : String(r['browser']))));
  // The properties panel: the chosen key's values by visitors, with the filters.
  const key = await page.inputValue('#prop-key');
  const props = await insights({ ...range, metrics: ['visitors'], dimensions: [`prop:${key}`], filters: where, limit: 10 });
  expect(await listOf(page, 'list-props')).toEqual(props.map((r) => [r[`prop:${key}`] === null ? '' : String(r[`prop:${key}`]), Number(r['visitors'])]));
  const event = filters.find(([d]) => d === 'event_name')?.[1];
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

  it('adds a clicked row as a filter pill kept in the URL, answers every panel with the filters, restores when a pill is removed; the range buttons change the URL and the numbers', async () => {
    const { page, problems } = await openPage();
    await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}`);
    const unfiltered = await shown(page, 'visitors');
    const pills = () => page.$$eval('#filters .pill', (items) => items.map((b) => (b as HTMLElement).dataset['filter']));
    const filtersInUrl = () => new URL(page.url()).search.split('&').filter((p) => p.startsWith('f='));

    await page.click('#list-events li[data-key="signup"] button');
    await page.waitForURL(/f=event_name:is:signup/);
    await loaded(page);
    expect(await pills()).toEqual(['event_name:signup']);
    await expectPanelsMatchApi(page, RANGE, [['event_name', 'signup']]);

    // A second filter from another list: both hold (AND), both in the URL in the order added.
    const [source, sourceVisitors] = (await listOf(page, 'list-sources'))[0] as [string, number];
    await page.click(`#list-sources li[data-key="${source}"] button`);
    await page.waitForURL((u) => u.search.includes(`f=source:is:${encodeURIComponent(source)}`));
    await loaded(page);
    expect(filtersInUrl()).toEqual(['f=event_name:is:signup', `f=source:is:${encodeURIComponent(source)}`]);
    expect(await pills()).toEqual(['event_name:signup', `source:${source}`]);
    await expectPanelsMatchApi(page, RANGE, [['event_name', 'signup'], ['source', source]]);
    expect(await shown(page, 'visitors')).toBeLessThan(unfiltered);
    // The clicked row's figure is the headline's after the click (one measure per list, the same question narrowed).
    expect(await shown(page, 'visitors')).toBe(sourceVisitors);

    // Removing the first pill keeps the second; removing the last restores the unfiltered view.
    await page.click('#filters .pill[data-filter="event_name:signup"]');
    await page.waitForURL((u) => !u.search.includes('event_name'));
    await loaded(page);
    expect(await pills()).toEqual([`source:${source}`]);
    await expectPanelsMatchApi(page, RANGE, [['source', source]]);
    await page.click('#filters .pill');
    await page.waitForURL((u) => !u.search.includes('f='));
    await loaded(page);
    expect(page.url()).toBe(`${base}/?from=${RANGE.from}&to=${RANGE.to}`);
    expect(await page.isHidden('#filters')).toBe(true);
    expect(await shown(page, 'visitors')).toBe(unfiltered);
    await expectPanelsMatchApi(page, RANGE);

    // A property value filters through the same click (prop:<key> is <value>).
    await page.click('#list-props li:first-child button');
    await page.waitForURL(/f=prop:/);
    await loaded(page);
    const [prop] = (await pills()) as [string];
    const key = await page.inputValue('#prop-key');
    expect(prop.startsWith(`prop:${key}:`)).toBe(true);
    await expectPanelsMatchApi(page, RANGE, [[`prop:${key}`, prop.slice(`prop:${key}:`.length)]]);

    // Links of earlier versions (`event=`) open as an event_name pill.
    await page.goto(`${base}/?from=${RANGE.from}&to=${RANGE.to}&event=signup`);
    await loaded(page);
    expect(await pills()).toEqual(['event_name:signup']);
    await expectPanelsMatchApi(page, RANGE, [['event_name', 'signup']]);
    await page.goto(`${base}/?from=${RANGE.from}&to=${RANGE.to}`);
    await loaded(page);

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
    expect(await shown(page, 'events')).toBe(Number((await insights({ from: day(today - 6 * 86_400_000), to: day(today + 86_400_000), metrics: ['events'] }))[0]!['events']));
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

  it('is keyboard navigable: Tab reaches the range buttons, the compare toggle, an event name (Enter filters), its pill (Enter removes it) and the property picker', async () => {
    const { page, problems } = await openPage();
    await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}`);
    /** Presses Tab until `target` has focus (at most 150 times); returns every stop on the way. */
    const tabTo = async (target: string) => {
      const stops: string[] = [];
      for (let i = 0; i < 150 && stops.at(-1) !== target; i++) {
        await page.keyboard.press('Tab');
        stops.push(
          await page.evaluate(() => {
            const a = document.activeElement as HTMLElement | null;
            if (a?.dataset['filter']) return `pill:${a.dataset['filter']}`;
            return a?.closest('li')?.dataset['key'] && a.closest('#list-events') ? `event:${a.closest('li')!.dataset['key']}` : (a?.dataset['preset'] ?? a?.id ?? '');
          }),
        );
      }
      expect(stops.at(-1)).toBe(target);
      return stops;
    };
    const stops = await tabTo('event:signup');
    expect(stops).toContain('7d');
    expect(stops).toContain('compare');
    await page.keyboard.press('Enter');
    await page.waitForURL(/f=event_name:is:signup/);
    await loaded(page);

    await tabTo('pill:event_name:signup');
    await page.keyboard.press('Enter');
    await page.waitForURL((u) => !u.search.includes('f='));
    await loaded(page);

    await tabTo('compare');
    await page.keyboard.press('Space');
    await page.waitForURL(/compare=1/);
    await loaded(page);
    await tabTo('prop-key');
    expect(problems).toEqual([]);
  });

  it('draws the previous period as a dashed series when Compare is checked (kept in the URL), its values the insights comparison', async () => {
    const { page, problems } = await openPage();
    // The seeded data's second week, so the previous period (its first week) has traffic to compare with.
    const HALF = { from: day(D0 + 7 * 86_400_000), to: RANGE.to };
    await signIn(page, `/?from=${HALF.from}&to=${HALF.to}`);
    const legend = () => page.$$eval('#chart .u-legend .u-series', (rows) => rows.slice(1).map((r) => [r.querySelector('.u-label')?.textContent, r.querySelector('.u-value')?.textContent]));
    expect((await legend()).map(([label]) => label)).toEqual(['Visitors', 'Pageviews']);
    expect(await page.isChecked('#compare')).toBe(false);

    await page.check('#compare');
    await page.waitForURL(/compare=1/);
    await loaded(page);
    expect(await page.isChecked('#compare')).toBe(true);
    const [totals] = await insights({ ...HALF, metrics: ['visitors', 'pageviews'], compare: 'previous_period' });
    const previousTotal = (totals!['comparison'] as unknown as Record<string, number>)['visitors']!;
    expect(previousTotal).toBeGreaterThan(0);
    expect(await legend()).toEqual([
      ['Visitors', `${totals!['visitors']} in range`],
      ['Pageviews', `${totals!['pageviews']} in range`],
      ['Visitors, previous period', `${previousTotal} in range`],
    ]);
    // Hovering a day: the previous series' value is that day's comparison (the same day one period earlier).
    const byDay = await insights({ ...HALF, metrics: ['visitors', 'pageviews'], dimensions: ['time:day'], compare: 'previous_period', limit: 1000 });
    const box = (await page.locator('#chart .u-over').boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
    const hoveredDay = await page.$eval('#chart .u-legend .u-series:first-child .u-value', (c) => c.textContent ?? '');
    const row = byDay.find((r) => String(r['time:day']).startsWith(hoveredDay));
    const expected = row ? (row['comparison'] as unknown as Record<string, number>)['visitors']! : 0;
    expect((await legend())[2]).toEqual(['Visitors, previous period', String(expected)]);
    expect((await legend())[0]).toEqual(['Visitors', String(row ? Number(row['visitors']) : 0)]);
    await page.mouse.move(0, 0);

    // Kept in the URL: a reload keeps it; unchecking drops the series and the parameter.
    await page.reload();
    await loaded(page);
    expect(await page.isChecked('#compare')).toBe(true);
    await page.uncheck('#compare');
    await page.waitForURL((u) => !u.search.includes('compare'));
    await loaded(page);
    expect((await legend()).map(([label]) => label)).toEqual(['Visitors', 'Pageviews']);
    expect(problems).toEqual([]);
  });

  it('fills the property picker from GET /v1/properties and lists the chosen key by visitors (kept in the URL as prop=)', async () => {
    const { page, problems } = await openPage();
    await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}`);
    const keys = (await api('/v1/properties', RANGE)).rows.map((r) => String(r['key']));
    expect(keys.length).toBeGreaterThan(1);
    expect(await page.$$eval('#prop-key option', (o) => o.map((x) => (x as HTMLOptionElement).value))).toEqual(keys);
    expect(await page.inputValue('#prop-key')).toBe(keys[0]);
    await expectPanelsMatchApi(page, RANGE);
    await page.selectOption('#prop-key', keys[1]!);
    await page.waitForURL((u) => u.searchParams.get('prop') === keys[1]);
    await loaded(page);
    expect(await page.inputValue('#prop-key')).toBe(keys[1]);
    const rows = await insights({ ...RANGE, metrics: ['visitors'], dimensions: [`prop:${keys[1]}`], limit: 10 });
    expect(rows.length).toBeGreaterThan(0);
    expect(await listOf(page, 'list-props')).toEqual(rows.map((r) => [String(r[`prop:${keys[1]}`] ?? ''), Number(r['visitors'])]));
    expect(problems).toEqual([]);
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
