import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { SavedDefinitions } from '@analytics/auth';
import { openTestStores, silentLogger } from '@analytics/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the dashboard is tested against the whole service it ships with
import { buildApp } from '../../standalone/src/app';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the loopback helpers of the service tests
import { closeServer, listen, urlOf } from '../../standalone/src/test-service';
import { dayString, presetRange } from './state';
import { CHROMIUM, type FunnelAnswer, HEADLINE, funnelOf, funnelRows, launchChromium, listOf, loaded, shown, viewLoaded, watch } from './test-support/page';

const DIST = join(__dirname, '../../../dist/apps/dashboard');
const SECRETS = { ADMIN_TOKEN: 'admin-token-share-page', IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal' };
const PASSWORD = 'the share password';
const UNLIMITED = { track: { ratePerS: 1e6, burst: 1e6 }, batch: { ratePerS: 1e6, burst: 1e6 } };

let stores: Awaited<ReturnType<typeof openTestStores>>;
let server: Server;
let base: string;
let browser: Browser;
let projectId: string;
let rk: string;
const servers: Server[] = [];
const contexts: BrowserContext[] = [];

async function adminCall(method: string, path: string, body?: object): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
  return { status: res.status, body: res.status === 204 ? {} : ((await res.json()) as Record<string, unknown>) };
}
async function makeShare(body: object): Promise<{ id: string; url: string }> {
  const res = await adminCall('POST', `/admin/projects/${projectId}/shares`, body);
  expect(res.status).toBe(201);
  return { id: (res.body.share as { id: string }).id, url: res.body.url as string };
}
/** The project's totals for the dashboard's default range (the last 7 days), from the API with the project's rk_ key. */
async function totals(filters: unknown[] = []): Promise<Record<string, number>> {
  const range = presetRange('7d', Date.now());
  const res = await fetch(`${base}/v1/insights`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rk}`, 'content-type': 'application/json' },
    body: JSON.stringify({ from: dayString(range.from), to: dayString(range.to), metrics: HEADLINE, compare: 'previous_period', filters }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { rows: Array<Record<string, number>> }).rows[0]!;
}
async function pagesByVisitors(): Promise<Array<[string, number]>> {
  const range = presetRange('7d', Date.now());
  const res = await fetch(`${base}/v1/insights`, { method: 'POST', headers: { authorization: `Bearer ${rk}`, 'content-type': 'application/json' }, body: JSON.stringify({ from: dayString(range.from), to: dayString(range.to), metrics: ['visitors'], dimensions: ['path'], limit: 10 }) });
  return ((await res.json()) as { rows: Array<Record<string, string | number>> }).rows.map((r) => [String(r['path']), Number(r['visitors'])]);
}

/** A fresh context (no session, no storage) and a page that records what should never happen on it. */
async function freshPage(): Promise<{ page: Page; problems: string[]; requests: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  const requests: string[] = [];
  page.on('request', (r) => requests.push(`${r.method()} ${new URL(r.url()).pathname}`));
  return { page, problems: watch(page, base), requests };
}

/**
 * The problems but the saved goals and funnels lists' 404 (GET /v1/goals, /v1/funnels: the page asks for them where
 * the service serves them) and the console line Chromium writes for each refused request (its answer is listed).
 */
const real = (problems: string[]) => problems.filter((p) => !/^answered 404: .*\/v1\/(goals|funnels)$/.test(p) && !/^console: Failed to load resource: the server responded with a status of (401|404)/.test(p));

async function expectHeadlineMatchesApi(page: Page | Frame): Promise<void> {
  const want = await totals();
  for (const m of HEADLINE) expect([m, await shown(page as Page, m)]).toEqual([m, Number(want[m])]);
}

/** A page of its own origin (a port of 127.0.0.1) that frames what `src()` says when it is asked. */
async function hostPage(src: () => string): Promise<string> {
  const host = await listen((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(`<!doctype html><title>host</title><h1>A site that embeds the dashboard</h1><iframe id="embedded" src="${src()}" width="1200" height="800"></iframe>`);
  });
  servers.push(host);
  return urlOf(host);
}

CHROMIUM.describe('share links in Chromium against the real service', () => {
  beforeAll(async () => {
    stores = await openTestStores();
    const app = buildApp({ stores, logger: silentLogger, trustProxy: true, dashboardDir: DIST, rateRules: UNLIMITED, secrets: SECRETS });
    server = await listen(app);
    base = urlOf(server);
    const created = await adminCall('POST', '/admin/projects', { name: 'Shared shop' });
    projectId = (created.body.project as { id: string }).id;
    const keys = created.body.keys as { rk: string; sk: string };
    rk = keys.rk;
    const now = Date.now();
    const events = Array.from({ length: 30 }, (_, i) => ({
      event: i % 5 === 4 ? 'signup' : '$pageview',
      anonymous_id: `v-${i % 9}`,
      timestamp: new Date(now - (i % 4) * 86_400_000 - 3_600_000).toISOString(),
      url: `https://shop.example.com/${['', 'pricing', 'docs'][i % 3]}`,
      properties: { plan: (i % 9) % 2 ? 'pro' : 'free' },
    }));
    const sent = await fetch(`${base}/v1/batch`, { method: 'POST', headers: { authorization: `Bearer ${keys.sk}`, 'content-type': 'application/json' }, body: JSON.stringify({ events }) });
    expect(sent.status).toBe(202);
    browser = await launchChromium();
  });

  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all(servers.splice(0).map(closeServer));
    if (server) await closeServer(server);
    await stores?.close();
  });

  it('a link opened in a fresh context without a session shows the project and numbers equal to the API\'s, read-only', async () => {
    const { url } = await makeShare({ name: 'for the client' });
    const { page, problems, requests } = await freshPage();
    await page.goto(url);
    await loaded(page);
    await expectHeadlineMatchesApi(page);
    expect(await listOf(page, 'list-pages')).toEqual(await pagesByVisitors());
    expect(await page.textContent('#project-title')).toBe('Shared shop');
    // Nothing of a signed-in person's or a key holder's: no sign-in, export, navigation or raw events.
    for (const selector of ['#sign-out', '#export-csv', '#people-nav', '#sign-in', '#login-page', '#recent', '#goal-form']) expect([selector, await page.isVisible(selector)]).toEqual([selector, false]);
    expect(await page.isVisible('header.top')).toBe(true);
    expect(requests.filter((r) => /\/v1\/(query|export)|\/auth\/|\/admin\//.test(r))).toEqual([]);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(real(problems)).toEqual([]);
  });

  it('shows the goals and the funnel saved for the project, as the API answers them, without a way to change them', async () => {
    const saved = new SavedDefinitions(stores.keyDb);
    await saved.create(projectId, 'goal', { name: 'Signed up', definition: { event: 'signup', filters: [] } });
    await saved.create(projectId, 'funnel', { name: 'Pricing to signup', definition: { steps: [{ event: '$pageview', path: '/pricing', prefix: false, filters: [] }, { event: 'signup', filters: [] }], window_s: 604_800, count_by: 'visitor', filters: [] } });
    const { url } = await makeShare({ name: 'with goals' });
    const { page, problems } = await freshPage();
    await page.goto(url);
    await loaded(page);
    await page.waitForSelector('#list-goals[data-state="loaded"]');
    const range = presetRange('7d', Date.now());
    const window = { from: dayString(range.from), to: dayString(range.to) };
    const ask = async (path: string, body: object) => (await (await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${rk}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...window, ...body }) })).json()) as Record<string, unknown>;
    const goal = ((await ask('/v1/insights', { metrics: ['conversions', 'conversion_rate'], goal: { event: 'signup' } })).rows as Array<Record<string, number>>)[0]!;
    expect(await page.$$eval('#list-goals li', (items) => items.map((li) => [(li as HTMLElement).dataset['key'], Number((li.querySelector('.count') as HTMLElement).dataset['value'])]))).toEqual([['signup', goal['conversions']]]);
    expect(await page.isVisible('#goal-form')).toBe(false);
    expect(await page.isVisible('#list-goals .remove')).toBe(false);
    await page.click('#view-funnel');
    await viewLoaded(page);
    const funnel = (await ask('/v1/funnel', { steps: [{ event: '$pageview', path: '/pricing' }, { event: 'signup' }], window_s: 604_800, count_by: 'visitor' })) as unknown as FunnelAnswer;
    expect(await funnelOf(page)).toEqual(funnelRows(funnel));
    expect(await page.isVisible('#step-form')).toBe(false);
    expect(real(problems)).toEqual([]);
  });

  it("a link with a segment shows it applied, without a way to remove it, and every number held to it", async () => {
    const filters = [['is', 'prop:plan', ['pro']]];
    const segment = (await new SavedDefinitions(stores.keyDb).create(projectId, 'segment', { name: 'Pro plan', definition: { filters } }))!;
    const { url } = await makeShare({ name: 'pro', segment: segment.id });
    const { page, problems } = await freshPage();
    await page.goto(url);
    await loaded(page);
    expect(await page.textContent('#share-segment')).toContain('Pro plan');
    expect(await page.$$('#share-segment button')).toEqual([]);
    const want = await totals(filters);
    for (const m of HEADLINE) expect([m, await shown(page, m)]).toEqual([m, Number(want[m])]);
    expect(want['visitors']).toBeLessThan((await totals())['visitors']!);
    expect(await page.isVisible('#list-props')).toBe(false);
    expect(real(problems)).toEqual([]);
  });

  it('a password link refuses a wrong password, then opens with the right one', async () => {
    const { url } = await makeShare({ name: 'locked', password: PASSWORD });
    const { page, problems } = await freshPage();
    await page.goto(url);
    await page.waitForSelector('#share-password-form', { state: 'visible' });
    expect(await page.isVisible('#dashboard')).toBe(false);
    await page.fill('#share-password', 'not the password');
    await page.press('#share-password', 'Enter');
    await page.waitForFunction(() => /wrong/.test(document.getElementById('share-error')?.textContent ?? ''));
    expect(await page.isVisible('#dashboard')).toBe(false);
    await page.fill('#share-password', PASSWORD);
    await page.press('#share-password', 'Enter');
    await loaded(page);
    await expectHeadlineMatchesApi(page);
    // The refusals are the unlock's: the password the link needs, then the wrong one.
    expect(real(problems)).toEqual([`answered 401: ${base}/v1/share/unlock`, `answered 401: ${base}/v1/share/unlock`]);
  });

  it('a revoked link stops working: the open page says so at its next read, and so does a new visit', async () => {
    const { id, url } = await makeShare({ name: 'revoked' });
    const { page } = await freshPage();
    await page.goto(url);
    await loaded(page);
    expect((await adminCall('DELETE', `/admin/projects/${projectId}/shares/${id}`)).status).toBe(204);
    await page.click('#range-buttons button[data-preset="30d"]');
    await page.waitForSelector('body[data-share="invalid"]');
    expect(await page.textContent('#share-intro')).toMatch(/not valid/);
    expect(await page.isVisible('#dashboard')).toBe(false);
    const again = await freshPage();
    await again.page.goto(url);
    await again.page.waitForSelector('body[data-share="invalid"]');
    expect(await again.page.isVisible('#dashboard')).toBe(false);
  });

  it('an embed (?embed=1) is shown in an <iframe> by a page of a listed origin, without its header, and refused by any other', async () => {
    // Two origins of the loopback: a port whose origin the link lists, and another that it does not.
    let src = 'about:blank';
    const listed = await hostPage(() => src);
    const other = await hostPage(() => src);
    const { url } = await makeShare({ name: 'embed', embed_origins: [listed] });
    src = `${url}?embed=1`;

    const shown = await freshPage();
    await shown.page.goto(listed);
    const frame = await (await shown.page.waitForSelector('#embedded')).contentFrame();
    await frame!.waitForSelector('body[data-state="loaded"]', { timeout: 30_000 });
    await expectHeadlineMatchesApi(frame!);
    expect(await frame!.isVisible('header.top')).toBe(false);

    const refused = await freshPage();
    const blocked = new Promise<string>((resolve) => refused.page.on('console', (m) => /frame-ancestors/.test(m.text()) && resolve(m.text())));
    await refused.page.goto(other);
    expect(await blocked).toMatch(/violates .*frame-ancestors .*blocked/s);
    const inner = await (await refused.page.waitForSelector('#embedded')).contentFrame();
    // The framed document is Chromium's error page, never the dashboard.
    expect(await inner!.evaluate(() => document.querySelector('#dashboard') === null)).toBe(true);
    // Opened on its own (not framed), the same address still works.
    const direct = await freshPage();
    await direct.page.goto(src);
    await loaded(direct.page);
  });
});
