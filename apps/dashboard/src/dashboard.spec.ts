import { mkdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { openTestStores, silentLogger } from '@analytics/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the dashboard is tested against the whole service it ships with
import { buildApp } from '../../standalone/src/app';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the loopback helpers of the service tests
import { closeServer, listen, urlOf } from '../../standalone/src/test-service';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the read API's seeded data set (days, sources, pages, countries, devices)
import { D0, DAYS, generateProject, ingestBatches, seededRandom } from '../../read-api/src/test-support/seeded-dataset';
import { aiAssistantOfSource } from '@analytics/classifier/ai-assistants';
import { sourceKeyOf } from '@analytics/classifier/source-names';
import { aiCrawlerOf } from '@analytics/enrichment';
import { QUERY_SELECT_COLUMNS } from '@analytics/schema';
import { presetRange } from './state';
import { CHROMIUM, type FunnelAnswer, HEADLINE, funnelOf, funnelRows, gridOf, launchChromium, listOf, loaded, shown, signIn as signInAt, viewLoaded, watch } from './test-support/page';
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
  return { page, context, problems: watch(page, base) };
}

/** Opens `path` of the service and signs in through the form, as a person does. */
const signIn = (page: Page, path: string, key = rk) => signInAt(page, `${base}${path}`, key);

type Condition = ['is', string, string[]];
type Filters = Array<[string, string]>;
const conditions = (filters: Filters): Condition[] => filters.map(([d, v]) => ['is', d, [v]]);

/** A POST of the read API (insights, funnel, retention), asked the way any API user would. */
async function post<T>(path: string, body: Record<string, unknown>, key = rk): Promise<T> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}
const insights = async (body: Record<string, unknown>): Promise<Row[]> => (await post<{ rows: Row[] }>('/v1/insights', body)).rows;

const goalsLoaded = (page: Page) => page.waitForSelector('#list-goals[data-state="loaded"]', { timeout: 30_000 });

/** The Goals panel as shown: [URL form of the goal, conversions, conversion rate] per row. */
const goalsOf = (page: Page) =>
  page.$$eval('#list-goals li', (items) => items.map((li) => [(li as HTMLElement).dataset['key'], Number((li.querySelector('.count') as HTMLElement).dataset['value']), Number((li.querySelector('.rate') as HTMLElement).dataset['value'])]));

/** Every goal's conversions and rate equal the insights answer (goal, the range and the filters). */
async function expectGoalsMatchApi(page: Page, range: { from: string; to: string }, goals: Array<[string, Record<string, string>]>, filters: Filters = []): Promise<void> {
  const expected = [];
  for (const [key, goal] of goals) {
    const [row] = await insights({ ...range, metrics: ['conversions', 'conversion_rate'], goal, filters: conditions(filters) });
    expected.push([key, Number(row?.['conversions'] ?? 0), Number(row?.['conversion_rate'] ?? 0)]);
  }
  expect(await goalsOf(page)).toEqual(expected);
}


/** The lists the dashboard shows: section id, dimension, metric (the same questions, asked independently here). */
const LISTS: Array<[string, string, string]> = [
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

/**
 * The Sources list as the API answers it, by site: every stored source grouped by sourceKeyOf (the classifier's
 * names), the ten largest sums, a merged row's visitors asked with all its spellings; [key, visitors, spellings].
 */
async function sourcesBySite(range: { from: string; to: string }, where: Condition[]): Promise<Array<[string, number, string[]]>> {
  const rows = await insights({ ...range, metrics: ['visitors'], dimensions: ['source'], filters: where, limit: 1000 });
  const sites = new Map<string, { sum: number; values: string[] }>();
  for (const r of rows) {
    const site = sites.get(sourceKeyOf(String(r['source']))) ?? { sum: 0, values: [] };
    site.sum += Number(r['visitors']);
    site.values.push(String(r['source']));
    sites.set(sourceKeyOf(String(r['source'])), site);
  }
  const top = [...sites].sort((a, b) => b[1].sum - a[1].sum || (a[0] < b[0] ? -1 : 1)).slice(0, 10);
  const exact: Array<[string, number, string[]]> = [];
  for (const [key, { sum, values }] of top) {
    exact.push([key, values.length === 1 ? sum : Number((await insights({ ...range, metrics: ['visitors'], filters: [...where, ['is', 'source', values]] }))[0]?.['visitors'] ?? 0), values]);
  }
  return exact.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}

/** Every headline number (and its previous period) and every list equals the insights answer for the range and filters. */
async function expectPanelsMatchApi(page: Page, range: { from: string; to: string }, filters: Filters = []): Promise<void> {
  const where = conditions(filters);
  const [totals] = await insights({ ...range, metrics: HEADLINE, filters: where, compare: 'previous_period' });
  for (const m of HEADLINE) {
    expect([m, await shown(page, m)]).toEqual([m, Number(totals![m])]);
    const previous = await page.getAttribute(`[data-testid="${m}"] + .change`, 'data-previous');
    expect([m, Number(previous)]).toEqual([m, (totals!['comparison'] as unknown as Record<string, number>)[m]]);
  }
  expect(['list-sources', await listOf(page, 'list-sources')]).toEqual(['list-sources', (await sourcesBySite(range, where)).map(([key, visitors]) => [key, visitors])]);
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
    // One site under several stored spellings (issue 47 item 5): Hacker News as a referrer (rule 13's slug
    // news-ycombinator-com) and as utm_source=news.ycombinator.com and hn, ChatGPT as utm_source=chatgpt.com beside the
    // seeded chatgpt.com referrers (chatgpt-com); hn-0 comes by two spellings (one visitor, two visits).
    const site = (id: string, day: number, query: string, referrer?: string) => ({ event: '$pageview', anonymous_id: id, timestamp: new Date(D0 + day * 86_400_000 + 3_600_000).toISOString(), url: `https://shop.example.com/${query}`, ...(referrer ? { referrer } : {}) });
    const spellings = [
      ...Array.from({ length: 6 }, (_, i) => site(`hn-${i}`, 2, '', 'https://news.ycombinator.com/item?id=1')),
      site('hn-0', 4, '?utm_source=news.ycombinator.com'),
      ...Array.from({ length: 3 }, (_, i) => site(`hn-utm-${i}`, 3, '?utm_source=news.ycombinator.com')),
      site('hn-short', 5, '?utm_source=hn'),
      ...Array.from({ length: 2 }, (_, i) => site(`gpt-utm-${i}`, 3, '?utm_source=chatgpt.com')),
    ];
    const sentSpellings = await fetch(`${base}/v1/batch`, { method: 'POST', headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json', 'x-forwarded-for': '81.2.69.161' }, body: JSON.stringify({ events: spellings }) });
    expect(sentSpellings.status).toBe(202);
    // AI crawlers fetching pages in the range (bots: device_type bot, browser the crawler's name).
    for (const [ua, n] of [['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)', 3], ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)', 2]] as const) {
      const crawl = Array.from({ length: n }, (_, i) => ({ event: '$pageview', anonymous_id: `crawler-${n}`, timestamp: new Date(D0 + 86_400_000 + i * 1000).toISOString(), url: 'https://shop.example.com/docs' }));
      const sent = await fetch(`${base}/v1/batch`, { method: 'POST', headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json', 'user-agent': ua }, body: JSON.stringify({ events: crawl }) });
      expect(sent.status).toBe(202);
    }
    browser = await launchChromium();
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
    const calls: string[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(`${base}/v1/`)) calls.push(`${r.method()} ${new URL(r.url()).pathname}`);
    });
    await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}`);
    expect(page.url()).toBe(`${base}/?from=${RANGE.from}&to=${RANGE.to}`);
    // One default load: 16 insights calls (headline, live, chart, ten lists, two AI panels, the property's values)
    // and one per merged source row shown, the property keys, the recent events and the saved goals, funnels and
    // segments, and the project's time zone (GET /v1/project, once per key); no goal, funnel or retention call.
    const merged = (await sourcesBySite(RANGE, [])).filter(([, , values]) => values.length > 1).length;
    expect(merged).toBeGreaterThan(0);
    expect(calls.sort()).toEqual(['GET /v1/funnels', 'GET /v1/goals', 'GET /v1/project', 'GET /v1/properties', 'GET /v1/query', 'GET /v1/segments', ...Array<string>(16 + merged).fill('POST /v1/insights')]);
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

  it('names sources as people know them, one row per site however it was stored; a click on a merged row filters by all its spellings', async () => {
    const { page, problems } = await openPage();
    await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}`);
    const labels = await page.$$eval('#list-sources li', (items) => Object.fromEntries(items.map((li) => [(li as HTMLElement).dataset['key'], li.querySelector('.label button')?.textContent])));
    expect(labels).toMatchObject({ 'news-ycombinator-com': 'Hacker News', chatgpt: 'ChatGPT', google: 'Google', facebook: 'Facebook', twitter: 'X (Twitter)', direct: 'Direct' });
    // Unknown sites and campaign words stay as stored.
    expect(labels).toMatchObject({ 'blog-example-org': 'blog-example-org', newsletter: 'newsletter' });
    const sites = await sourcesBySite(RANGE, []);
    const hn = sites.find(([key]) => key === 'news-ycombinator-com')!;
    expect(hn[2].sort()).toEqual(['hn', 'news-ycombinator-com', 'news.ycombinator.com']);
    // 6 referred + 3 + 1 tagged visitors; hn-0 came by two spellings and counts once (the sum of the rows would be 11).
    expect(hn[1]).toBe(10);
    expect((await listOf(page, 'list-sources')).find(([key]) => key === 'news-ycombinator-com')).toEqual(['news-ycombinator-com', 10]);
    expect(sites.find(([key]) => key === 'chatgpt')![2].sort()).toEqual(['chatgpt-com', 'chatgpt.com']);
    expect(await page.textContent('#list-ai-assistants li[data-key="chatgpt"] .label')).toBe('ChatGPT');

    await page.click('#list-sources li[data-key="news-ycombinator-com"] button');
    await page.waitForURL((u) => u.search.includes('f=source:is:'));
    await loaded(page);
    const filter = new URL(page.url()).search.split('&').find((p) => p.startsWith('f='))!;
    expect(filter.slice('f=source:is:'.length).split(':').map(decodeURIComponent).sort()).toEqual(['hn', 'news-ycombinator-com', 'news.ycombinator.com']);
    expect(await page.textContent('#filters .pill')).toContain('Source is Hacker News');
    expect(await shown(page, 'visitors')).toBe(10);
    const [totals] = await insights({ ...RANGE, metrics: ['visits'], filters: [['is', 'source', ['news-ycombinator-com', 'news.ycombinator.com', 'hn']]] });
    expect(await shown(page, 'visits')).toBe(Number(totals!['visits']));
    // The link opened again (the address alone) filters the same way.
    await page.reload();
    await loaded(page);
    expect(await shown(page, 'visitors')).toBe(10);
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
    // (The largest site that has a single spelling here: its key is its stored value.)
    const single = new Set((await sourcesBySite(RANGE, [['is', 'event_name', ['signup']]])).filter(([key, , values]) => values.length === 1 && values[0] === key).map(([key]) => key));
    const [source, sourceVisitors] = (await listOf(page, 'list-sources')).find(([key]) => single.has(String(key))) as [string, number];
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

  it("shows each goal's conversions and conversion rate as insights answer them, kept in the URL (g=); a goal click filters, the form adds one, × removes one", async () => {
    const { page, problems } = await openPage();
    const calls: string[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(`${base}/v1/`)) calls.push(new URL(r.url()).pathname);
    });
    const goals: Array<[string, Record<string, string>]> = [
      ['signup', { event: 'signup' }],
      ['$pageview@/pricing', { event: '$pageview', path: '/pricing' }],
      ['@/blog/*', { path: '/blog/*' }],
    ];
    await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}&g=signup&g=$pageview@/pricing&g=@/blog/*`);
    await goalsLoaded(page);
    await expectGoalsMatchApi(page, RANGE, goals);
    expect((await goalsOf(page)).every(([, conversions]) => Number(conversions) > 0)).toBe(true);
    // A default load asks no funnel and no retention: those run only when their view is opened.
    expect(calls.filter((c) => c === '/v1/funnel' || c === '/v1/retention')).toEqual([]);
    expect(await page.getAttribute('#conversions', 'data-state')).toBe('closed');

    // Adding a goal asks only the goals again (one insights call per goal), and keeps it in the URL.
    calls.length = 0;
    await page.fill('#goal-event', 'purchase');
    await page.click('#goal-form button[type="submit"]');
    await page.waitForURL((u) => u.search.endsWith('&g=purchase'));
    await goalsLoaded(page);
    await expectGoalsMatchApi(page, RANGE, [...goals, ['purchase', { event: 'purchase' }]]);
    expect(calls).toEqual(Array(4).fill('/v1/insights'));
    // A form without an event or a page says what to give.
    await page.click('#goal-form button[type="submit"]');
    expect(await page.textContent('#goal-error')).toContain('Give an event name, a page');

    // A goal is a filter: its event name and page as pills, every panel narrowed (a page prefix is not clickable).
    expect(await page.locator('#list-goals li[data-key="@/blog/*"] button.link').count()).toBe(0);
    await page.click('#list-goals li[data-key="$pageview@/pricing"] button.link');
    await page.waitForURL((u) => u.search.includes('f=event_name:is:%24pageview&f=path:is:%2Fpricing'));
    await loaded(page);
    await goalsLoaded(page);
    const filters: Filters = [['event_name', '$pageview'], ['path', '/pricing']];
    await expectPanelsMatchApi(page, RANGE, filters);
    await expectGoalsMatchApi(page, RANGE, [...goals, ['purchase', { event: 'purchase' }]], filters);

    // × removes a goal; a reload keeps what the URL says.
    await page.click('#list-goals li[data-key="signup"] button.remove');
    await page.waitForURL((u) => !u.search.includes('g=signup'));
    await goalsLoaded(page);
    await page.reload();
    await loaded(page);
    await goalsLoaded(page);
    await expectGoalsMatchApi(page, RANGE, [...goals.slice(1), ['purchase', { event: 'purchase' }]], filters);
    expect(problems).toEqual([]);
  });

  it('opens the funnel view on demand: bars, drop-off and median equal POST /v1/funnel; breakdown, window, count and steps kept in the URL and read back', async () => {
    const { page, problems } = await openPage();
    const posts: Array<[string, Record<string, unknown>]> = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().startsWith(`${base}/v1/`)) posts.push([new URL(r.url()).pathname, JSON.parse(r.postData() ?? '{}') as Record<string, unknown>]);
    });
    const steps = [{ event: '$pageview', path: '/pricing' }, { event: 'signup' }, { event: 'purchase' }];
    await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}&fs=$pageview@/pricing,signup,purchase`);
    expect(await page.isHidden('#funnel-view')).toBe(true);
    posts.length = 0;

    // Opening the view asks the funnel once and nothing else.
    await page.click('#view-funnel');
    await page.waitForURL((u) => u.search.endsWith('&view=funnel'));
    await viewLoaded(page);
    expect(posts).toEqual([['/v1/funnel', { ...RANGE, steps, window_s: 86_400, count_by: 'visitor', filters: [] }]]);
    const answer = await post<FunnelAnswer>('/v1/funnel', { ...RANGE, steps });
    expect(answer.steps[0]!.count).toBeGreaterThan(0);
    expect(await funnelOf(page)).toEqual(funnelRows(answer));
    expect(await page.textContent('#funnel-body .funnel li[data-index="2"] .drop')).toContain(`${answer.steps[1]!.drop_off} dropped off`);

    // A breakdown: one row per value (the first 10), each step's count and rate as the API answers.
    await page.selectOption('#funnel-breakdown', 'channel');
    await page.waitForURL((u) => u.search.includes('fb=channel'));
    await viewLoaded(page);
    const broken = await post<FunnelAnswer>('/v1/funnel', { ...RANGE, steps, breakdown: 'channel' });
    expect(broken.breakdown!.length).toBeGreaterThan(1);
    const table = await page.$$eval('#funnel-breakdown-table tbody tr', (rows) => rows.map((tr) => [(tr as HTMLElement).dataset['value'], ...[...tr.querySelectorAll('td .count')].map((c) => Number((c as HTMLElement).dataset['value']))]));
    expect(table).toEqual(broken.breakdown!.slice(0, 10).map((b) => [b.value ?? '', ...b.steps.map((s) => s.count)]));

    // Window and count: the same funnel within an hour, by user.
    await page.selectOption('#funnel-window', '3600');
    await page.waitForURL((u) => u.search.includes('fw=3600'));
    await viewLoaded(page);
    await page.selectOption('#funnel-count', 'user');
    await page.waitForURL((u) => u.search.includes('fc=user'));
    await viewLoaded(page);
    const hourly = await post<FunnelAnswer>('/v1/funnel', { ...RANGE, steps, window_s: 3600, count_by: 'user', breakdown: 'channel' });
    expect(await funnelOf(page)).toEqual(funnelRows(hourly));

    // Steps: × removes one, the form adds one at the end.
    await page.click('#funnel-body .funnel li[data-index="3"] button.remove');
    await page.waitForURL((u) => u.search.includes('fs=$pageview@/pricing,signup&'));
    await viewLoaded(page);
    await page.fill('#step-event', 'purchase');
    await page.fill('#step-path', '');
    await page.click('#step-add');
    await page.waitForURL((u) => u.search.includes('fs=$pageview@/pricing,signup,purchase&'));
    await viewLoaded(page);
    const url = page.url();
    expect(new URL(url).search).toBe(`?from=${RANGE.from}&to=${RANGE.to}&fs=$pageview@/pricing,signup,purchase&fw=3600&fc=user&fb=channel&view=funnel`);

    // The link opens the same view with the same numbers (a shared funnel), in a new tab.
    const other = await openPage();
    await signIn(other.page, new URL(url).search.replace(/^/, '/'));
    await viewLoaded(other.page);
    expect(await other.page.inputValue('#funnel-breakdown')).toBe('channel');
    expect(await other.page.inputValue('#funnel-window')).toBe('3600');
    expect(await other.page.inputValue('#funnel-count')).toBe('user');
    expect(await funnelOf(other.page)).toEqual(funnelRows(hourly));
    expect(await funnelOf(page)).toEqual(funnelRows(hourly));
    // Fewer than two steps: no call, the view says what to add.
    await page.click('#funnel-body .funnel li[data-index="3"] button.remove');
    await viewLoaded(page);
    posts.length = 0;
    await page.click('#funnel-body .funnel li[data-index="2"] button.remove');
    await viewLoaded(page);
    expect(await page.textContent('#funnel-body')).toContain('Add a second step');
    expect(posts).toEqual([]);
    expect(problems).toEqual([]);
    expect(other.problems).toEqual([]);
  });

  it('opens the retention grid on demand: every cohort size and returned count equals POST /v1/retention; period and count kept in the URL', async () => {
    const { page, problems } = await openPage();
    await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}`);
    await page.click('#view-retention');
    await page.waitForURL((u) => u.search.endsWith('&view=retention'));
    await viewLoaded(page);
    const weekly = await post<{ cohorts: Array<{ cohort: string; size: number; returned: number[] }> }>('/v1/retention', { ...RANGE, period: 'week', count_by: 'user' });
    expect(weekly.cohorts.length).toBeGreaterThan(0);
    expect(await gridOf(page)).toEqual(weekly.cohorts.map((c) => [c.cohort, c.size, ...c.returned]));

    await page.selectOption('#retention-period', 'day');
    await page.waitForURL((u) => u.search.includes('rp=day'));
    await viewLoaded(page);
    await page.selectOption('#retention-count', 'visitor');
    await page.waitForURL((u) => u.search.includes('rc=visitor'));
    await viewLoaded(page);
    const daily = await post<{ cohorts: Array<{ cohort: string; size: number; returned: number[] }> }>('/v1/retention', { ...RANGE, period: 'day', count_by: 'visitor' });
    expect(await gridOf(page)).toEqual(daily.cohorts.map((c) => [c.cohort, c.size, ...c.returned]));
    await page.reload();
    await loaded(page);
    await viewLoaded(page);
    expect(await gridOf(page)).toEqual(daily.cohorts.map((c) => [c.cohort, c.size, ...c.returned]));
    // Clicking the open view's tab closes it.
    await page.click('#view-retention');
    await page.waitForURL((u) => !u.search.includes('view='));
    expect(await page.isHidden('#retention-view')).toBe(true);
    expect(problems).toEqual([]);
  });

  it("says in words, beside the funnel and the grid, when the API notes that the visitor ids are daily ids", async () => {
    const daily = await stores.keyStore.createProject({ name: 'daily ids', allowed_origins: [] });
    const id = (c: string) => `d_${c.repeat(32)}`;
    const at = (d: number, s: number) => new Date(D0 + d * 86_400_000 + s * 1000).toISOString();
    const events = [
      { event: '$pageview', anonymous_id: id('a'), timestamp: at(1, 0), url: 'https://shop.example.com/pricing' },
      { event: 'signup', anonymous_id: id('a'), timestamp: at(1, 60) },
      { event: '$pageview', anonymous_id: id('b'), timestamp: at(2, 0), url: 'https://shop.example.com/pricing' },
    ];
    const res = await fetch(`${base}/v1/batch`, { method: 'POST', headers: { authorization: `Bearer ${daily.keys.sk}`, 'content-type': 'application/json' }, body: JSON.stringify({ events }) });
    expect(res.status).toBe(202);
    const range = { from: day(D0), to: day(D0 + 4 * 86_400_000) };
    const steps = [{ event: '$pageview', path: '/pricing' }, { event: 'signup' }];
    const answer = await post<FunnelAnswer>('/v1/funnel', { ...range, steps }, daily.keys.rk);
    expect(answer.notes?.length).toBe(1);

    const { page, problems } = await openPage();
    await signIn(page, `/?from=${range.from}&to=${range.to}&fs=$pageview@/pricing,signup&view=funnel`, daily.keys.rk);
    await viewLoaded(page);
    expect(await funnelOf(page)).toEqual(funnelRows(answer));
    expect(await page.isVisible('#funnel-notes')).toBe(true);
    expect(await page.textContent('#funnel-notes')).toMatch(/daily ids[\s\S]*cannot follow people across days/);
    await page.click('#view-retention');
    await page.selectOption('#retention-count', 'visitor');
    await page.waitForURL((u) => u.search.includes('rc=visitor'));
    await viewLoaded(page);
    const retention = await post<{ cohorts: Array<{ cohort: string; size: number; returned: number[] }>; notes?: string[] }>('/v1/retention', { ...range, period: 'week', count_by: 'visitor' }, daily.keys.rk);
    expect(retention.notes?.length).toBe(1);
    expect(await gridOf(page)).toEqual(retention.cohorts.map((c) => [c.cohort, c.size, ...c.returned]));
    expect(await page.textContent('#retention-notes')).toMatch(/daily ids[\s\S]*this grid cannot follow people across days/);
    // By user (none here) there is no note.
    await page.selectOption('#retention-count', 'user');
    await viewLoaded(page);
    expect(await page.isHidden('#retention-notes')).toBe(true);
    expect(problems).toEqual([]);
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
        // With goals and an open view (the funnel with a breakdown in light, the retention grid in dark).
        const view = colorScheme === 'light' ? 'fs=$pageview@/pricing,signup&fb=channel&view=funnel' : 'view=retention';
        await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}&g=signup&g=@/blog/*&${view}`);
        await goalsLoaded(page);
        await viewLoaded(page);
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

  it('is keyboard navigable: Tab reaches the range buttons, the compare toggle, an event name (Enter filters), its pill (Enter removes it), the property picker, the goal form and the Funnel view', async () => {
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

    // A goal typed and added with Enter; the Funnel view opened with Enter, its first option reached with Tab.
    await tabTo('goal-event');
    await page.keyboard.type('signup');
    await page.keyboard.press('Enter');
    await page.waitForURL(/g=signup/);
    await goalsLoaded(page);
    await tabTo('view-funnel');
    await page.keyboard.press('Enter');
    await page.waitForURL(/view=funnel/);
    await viewLoaded(page);
    await tabTo('funnel-window');
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
    expect(await note.textContent()).toMatch(/deleted by a forget[\s\S]*daily visits aggregate, which keeps\s+counting them/);
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

  it('Export CSV keeps the event filter and says which filters on the page it does not apply', async () => {
    const { page, problems } = await openPage();
    await signIn(page, `/?from=${RANGE.from}&to=${RANGE.to}&f=event_name:is:signup&f=country:is:GB`);
    const note = page.locator('#export-scope');
    await note.waitFor({ state: 'visible' });
    expect(await note.textContent()).toMatch(/applies the range and Event is signup, not Country is GB/i);
    expect(await page.getAttribute('#export-csv', 'title')).toContain('not Country is GB');
    const exports: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/v1/export')) exports.push(r.url());
    });
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    expect(exports).toEqual([`${base}/v1/export?from=${RANGE.from}&to=${RANGE.to}&event=signup&format=csv`]);
    const saved = readFileSync((await download.path())!, 'utf8');
    expect(saved.trimEnd().split('\n').length - 1).toBe(await single({ ...RANGE, event: 'signup' }));
    // Without filters beyond the event, nothing is left out: no note.
    await page.goto(`${base}/?from=${RANGE.from}&to=${RANGE.to}&f=event_name:is:signup`);
    await page.waitForFunction(() => document.getElementById('export-scope')?.hidden === true);
    expect(problems).toEqual([]);
  });

  // Last: it adds an event to today's traffic, which the range tests above count.
  it('refreshes the visitors of the last 30 minutes every 30 s', async () => {
    const { page, problems } = await openPage();
    await page.clock.install({ time: Date.now() });
    await page.goto(`${base}/?from=${RANGE.from}&to=${RANGE.to}`);
    // The page's clock runs on real time until runFor: the 30 s starts at sign-in, no earlier than this moment, and
    // what sign-in, the first load and the POST below took of it is not run again (under CI load that is seconds).
    const start = await page.evaluate(() => Date.now());
    await page.fill('#key-input', rk);
    await page.press('#key-input', 'Enter');
    await loaded(page);
    const before = await shown(page, 'live');
    const res = await fetch(`${base}/v1/batch`, { method: 'POST', headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' }, body: JSON.stringify({ events: [{ event: '$pageview', anonymous_id: 'live-new' }] }) });
    expect(res.status).toBe(202);
    await page.clock.runFor(Math.max(0, 29_000 - ((await page.evaluate(() => Date.now())) - start)));
    expect(await shown(page, 'live')).toBe(before);
    await page.clock.runFor(1_000);
    await page.waitForFunction((n) => Number(document.querySelector<HTMLElement>('[data-testid="live"]')?.dataset['value']) === n, before + 1);
    expect(problems).toEqual([]);
  });
});
