import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { openTestStores, silentLogger } from '@analytics/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the dashboard is tested against the whole service it ships with
import { buildApp } from '../../standalone/src/app';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the loopback helpers of the service tests
import { closeServer, listen, urlOf } from '../../standalone/src/test-service';
import { presetRange } from './state';
import { CHROMIUM, axeViolations, launchChromium, loaded, shown, signIn as signInWithKey, viewLoaded, watch } from './test-support/page';

// Saved goals, funnels and segments and the Share dialog on the signed-in dashboard (issue 46, docs/dashboard.md
// "Saved goals, funnels and segments" and "The Share dialog"), in Chromium against the real service as `npm start`
// serves it: an editor saves, renames and deletes; the lists survive a reload and show in another browser; a viewer
// sees them without controls (and the API refuses the viewer); a pasted rk_ key lists them read-only; the Share
// dialog creates a link with a password and a segment, copies it, lists it and revokes it. No mock anywhere.

const WORKSPACE = join(__dirname, '../../..');
const DIST = join(WORKSPACE, 'dist/apps/dashboard');
const SCREENSHOTS = join(WORKSPACE, 'dist/screenshots');
const ADMIN_TOKEN = 'admin-token-saved';
const OWNER = { email: 'owner@example.com', password: 'owner passphrase 1' };
const EDITOR = { email: 'editor@example.com', password: 'editor passphrase 1' };
const VIEWER = { email: 'viewer@example.com', password: 'viewer passphrase 1' };
const UNLIMITED = { track: { ratePerS: 1e6, burst: 1e6 }, batch: { ratePerS: 1e6, burst: 1e6 } };
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

let stores: Awaited<ReturnType<typeof openTestStores>>;
let server: Server;
let base: string;
let browser: Browser;
let projectId: string;
let rk: string;
let ownerToken: string;
const tokens: Record<'editor' | 'viewer', string> = { editor: '', viewer: '' };
const contexts: BrowserContext[] = [];
/** What the dashboard asks by default: the last 7 days, as UTC days. */
const range = () => {
  const r = presetRange('7d', Date.now());
  return { from: day(r.from), to: day(r.to) };
};

interface Saved {
  id: string;
  name: string;
}

/** A call of the service with `token` (none: no Authorization header). */
async function asUser<T>(token: string, method: string, path: string, body?: object): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${path}`, { method, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: (res.status === 204 ? undefined : await res.json()) as T };
}
/** POST /v1/insights with the project's rk_ key, as any API user asks. */
async function insights(body: Record<string, unknown>): Promise<Array<Record<string, number>>> {
  const res = await asUser<{ rows: Array<Record<string, number>> }>(rk, 'POST', '/v1/insights', body);
  expect(res.status).toBe(200);
  return res.body.rows;
}
const list = async <T = Saved>(plural: string, token = ownerToken) => {
  const res = await asUser<Record<string, T[]>>(token, 'GET', `/admin/projects/${projectId}/${plural}`);
  expect(res.status).toBe(200);
  return res.body[plural]!;
};

async function openContext(): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
  contexts.push(context);
  const page = await context.newPage();
  return { context, page, problems: watch(page, base) };
}

async function signInAs(page: Page, who: { email: string; password: string }): Promise<void> {
  await page.goto(`${base}/`);
  await page.fill('#login-email', who.email);
  await page.fill('#login-password', who.password);
  await page.press('#login-password', 'Enter');
  await loaded(page);
}

/** Clicks a confirm button twice (its first click arms it). */
async function confirmClick(page: Page, selector: string): Promise<void> {
  await page.click(selector);
  await page.click(selector);
}

async function expectAccessible(page: Page, name: string): Promise<void> {
  for (const colorScheme of ['dark', 'light'] as const) {
    await page.emulateMedia({ colorScheme });
    expect({ name, colorScheme, violations: await axeViolations(page) }).toEqual({ name, colorScheme, violations: [] });
  }
  await page.screenshot({ path: join(SCREENSHOTS, `saved-${name.replace(/\W+/g, '-')}.png`), fullPage: true });
}

/** The saved list of a kind as shown: [name, has rename and delete] per row, in order. */
const savedRows = (page: Page, id: 'saved-goals' | 'saved-funnels') =>
  page.$$eval(`#${id} li`, (items) => items.map((li) => [(li as HTMLElement).dataset['name'], li.querySelector('.saved-rename') !== null && li.querySelector('.saved-delete') !== null]));
const segmentOptions = (page: Page) => page.$$eval('#segment-picker option', (os) => os.map((o) => [(o as HTMLOptionElement).value, o.textContent]));
/** The Goals panel's rows as shown: [key, label, conversions, rate]. */
const goalRows = (page: Page) =>
  page.$$eval('#goals-body li', (items) => items.map((li) => [(li as HTMLElement).dataset['key'], li.querySelector('.label')?.firstChild?.textContent, Number((li.querySelector('.count') as HTMLElement).dataset['value']), Number((li.querySelector('.rate') as HTMLElement).dataset['value'])]));
const goalsLoaded = (page: Page) => page.waitForSelector('#list-goals[data-state="loaded"]');

CHROMIUM.describe('saved goals, funnels, segments and the Share dialog (Chromium, the real service)', () => {
  let editor: { context: BrowserContext; page: Page; problems: string[] };
  let viewer: { context: BrowserContext; page: Page; problems: string[] };
  let goal: Saved;
  let segment: Saved;
  /** The saved goal's conversions and rate with the segment, as insights answer them. */
  let goalWithSegment: [number, number];

  beforeAll(async () => {
    stores = await openTestStores();
    const app = buildApp({ stores, logger: silentLogger, trustProxy: true, dashboardDir: DIST, rateRules: UNLIMITED, secrets: { ADMIN_TOKEN, IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal' } });
    server = await listen(app);
    base = urlOf(server);
    const created = await stores.keyStore.createProject({ name: 'shop', allowed_origins: [] });
    projectId = created.project.id;
    rk = created.keys.rk;
    // 6 visitors: 4 from google (2 of them sign up), 2 from a newsletter (1 signs up).
    const now = Date.now();
    const events = [0, 1, 2, 3, 4, 5].flatMap((i) => {
      const source = i < 4 ? 'google' : 'newsletter';
      const at = (m: number) => new Date(now - (60 - i * 5 - m) * 60_000).toISOString();
      const visit = [{ event: '$pageview', anonymous_id: `v-${i}`, timestamp: at(0), url: `https://shop.example.com/?utm_source=${source}` }, { event: '$pageview', anonymous_id: `v-${i}`, timestamp: at(1), url: 'https://shop.example.com/pricing' }];
      return i === 0 || i === 2 || i === 4 ? [...visit, { event: 'signup', anonymous_id: `v-${i}`, timestamp: at(2), url: 'https://shop.example.com/pricing' }] : visit;
    });
    const sent = await fetch(`${base}/v1/batch`, { method: 'POST', headers: { authorization: `Bearer ${created.keys.sk}`, 'content-type': 'application/json' }, body: JSON.stringify({ events }) });
    expect(sent.status).toBe(202);
    // The owner (first run), an editor and a viewer of the organization that holds the project.
    const setup = await asUser<{ token: string }>(ADMIN_TOKEN, 'POST', '/auth/setup', OWNER);
    expect(setup.status).toBe(201);
    ownerToken = setup.body.token;
    const me = await asUser<{ organizations: Array<{ id: string }> }>(ownerToken, 'GET', '/auth/me');
    const org = me.body.organizations[0]!.id;
    for (const [who, person] of [['editor', EDITOR], ['viewer', VIEWER]] as const) {
      const invited = await asUser<{ token: string }>(ownerToken, 'POST', `/admin/orgs/${org}/invitations`, { email: person.email, role: who });
      expect(invited.status).toBe(201);
      const accepted = await asUser<{ token: string }>('', 'POST', '/auth/invitations/accept', { token: invited.body.token, password: person.password });
      expect(accepted.status).toBe(200);
      tokens[who] = accepted.body.token;
    }
    browser = await launchChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    if (server) await closeServer(server);
    await stores?.close();
  });

  it('an editor saves a goal from the Goals form: listed for the project, shown with its conversions equal to insights', async () => {
    editor = await openContext();
    const { page, problems } = editor;
    await signInAs(page, EDITOR);
    await goalsLoaded(page);
    expect(await page.textContent('#saved-goals')).toContain('None yet');
    for (const id of ['#goal-name', '#goal-save', '#segment-save-form', '#share-open']) expect([id, await page.isVisible(id)]).toEqual([id, true]);

    await page.fill('#goal-event', 'signup');
    await page.fill('#goal-name', 'Signed up');
    await page.click('#goal-save');
    await page.waitForSelector('#saved-goals li[data-name="Signed up"] .saved-apply[aria-pressed="true"]');
    goal = (await list('goals'))[0]!;
    expect(goal).toMatchObject({ name: 'Signed up', event: 'signup' });
    expect(page.url()).toContain(`g=saved:${goal.id}`);
    await goalsLoaded(page);
    const [row] = await insights({ ...range(), metrics: ['conversions', 'conversion_rate'], goal: { event: 'signup' }, filters: [] });
    expect(row).toMatchObject({ conversions: 3, conversion_rate: 0.5 });
    // By id the API answers the same: the saved goal is the inline one.
    const [byId] = await insights({ ...range(), metrics: ['conversions', 'conversion_rate'], goal: { id: goal.id }, filters: [] });
    expect(byId).toEqual(row);
    expect(await goalRows(page)).toEqual([[`saved:${goal.id}`, 'Signed up', 3, 0.5]]);
    // Saving the same name again is refused in words.
    await page.fill('#goal-event', 'signup');
    await page.fill('#goal-name', 'Signed up');
    await page.click('#goal-save');
    await page.waitForFunction(() => document.getElementById('saved-goals-status')?.textContent?.includes('409 name_taken'));
    expect(await page.textContent('#saved-goals-status')).toContain('name is taken');
    const expected409 = problems.filter((p) => /\b409\b/.test(p));
    problems.length = 0;
    expect(expected409.length).toBe(2);
  });

  it('an editor saves a funnel from the Funnel view, and the saved one runs with its own steps', async () => {
    const { page, problems } = editor;
    await page.click('#view-funnel');
    for (const [event, path] of [['$pageview', ''], ['signup', '']]) {
      await page.fill('#step-event', event!);
      await page.fill('#step-path', path!);
      await page.click('#step-add');
    }
    await viewLoaded(page);
    await page.fill('#funnel-name', 'Visit to signup');
    await page.click('#funnel-save');
    await page.waitForFunction(() => document.getElementById('saved-funnels-status')?.textContent);
    expect(await page.textContent('#saved-funnels-status')).toBe('Saved the funnel Visit to signup.');
    await page.waitForSelector('#saved-funnels li[data-name="Visit to signup"] .saved-apply[aria-pressed="true"]');
    const [funnel] = await list<Saved & { steps: unknown[]; window_s: number; count_by: string }>('funnels');
    expect(funnel).toMatchObject({ name: 'Visit to signup', steps: [{ event: '$pageview' }, { event: 'signup' }], window_s: 86_400, count_by: 'visitor' });
    expect(page.url()).toContain(`fid=${funnel!.id}`);
    await viewLoaded(page);
    const counts = await page.$$eval('#funnel-body .funnel li .count', (cs) => cs.map((c) => Number((c as HTMLElement).dataset['value'])));
    expect(counts).toEqual([6, 3]);
    // Another step makes it an unsaved funnel (its button no longer pressed, no fid=).
    await page.fill('#step-event', 'purchase');
    await page.click('#step-add');
    await page.waitForSelector('#saved-funnels li[data-name="Visit to signup"] .saved-apply[aria-pressed="false"]');
    expect(page.url()).not.toContain('fid=');
    // Choosing it opens it again as saved.
    await page.click('#saved-funnels li[data-name="Visit to signup"] .saved-apply');
    await page.waitForSelector('#saved-funnels li[data-name="Visit to signup"] .saved-apply[aria-pressed="true"]');
    await viewLoaded(page);
    expect(await page.$$eval('#funnel-body .funnel li', (items) => items.length)).toBe(2);
    expect(problems).toEqual([]);
  });

  it('an editor saves the filters as a segment: applied by id, the numbers equal insights with segment and with the inline filter', async () => {
    const { page, problems } = editor;
    await page.click('#list-sources li[data-key="google"] button');
    await loaded(page);
    await page.fill('#segment-name', 'From Google');
    await page.click('#segment-save');
    await page.waitForFunction(() => /[?&]seg=/.test(location.search));
    await loaded(page);
    segment = (await list('segments'))[0]!;
    expect(segment).toMatchObject({ name: 'From Google', filters: [['is', 'source', ['google']]] });
    // The pills' filter is now the segment's: one segment pill, no f=.
    expect(page.url()).not.toContain('f=source');
    expect(await page.getAttribute('#filters .segment-pill', 'data-segment')).toBe(segment.id);
    expect(await page.$eval('#segment-picker', (s) => (s as HTMLSelectElement).value)).toBe(segment.id);
    const [bySegment] = await insights({ ...range(), metrics: ['visitors', 'pageviews', 'events'], segment: segment.id });
    const [inline] = await insights({ ...range(), metrics: ['visitors', 'pageviews', 'events'], filters: [['is', 'source', ['google']]] });
    expect(bySegment).toEqual(inline);
    expect(bySegment).toMatchObject({ visitors: 4 });
    for (const m of ['visitors', 'pageviews', 'events']) expect([m, await shown(page, m)]).toEqual([m, bySegment![m]]);
    // The goals panel follows the segment too: as insights answer the saved goal with the segment.
    await goalsLoaded(page);
    const [converted] = await insights({ ...range(), metrics: ['conversions', 'conversion_rate'], goal: { id: goal.id }, segment: segment.id });
    expect(converted).toEqual((await insights({ ...range(), metrics: ['conversions', 'conversion_rate'], goal: { event: 'signup' }, filters: [['is', 'source', ['google']]] }))[0]);
    goalWithSegment = [Number(converted!['conversions']), Number(converted!['conversion_rate'])];
    expect(goalWithSegment[0]).toBeGreaterThan(0);
    expect(await goalRows(page)).toEqual([[`saved:${goal.id}`, 'Signed up', ...goalWithSegment]]);
    await expectAccessible(page, 'editor dashboard');
    expect(problems).toEqual([]);
  });

  it('an editor renames a goal and deletes the funnel; the lists survive a reload and show in a second browser', async () => {
    const { page, problems } = editor;
    await page.click('#saved-goals li[data-name="Signed up"] .saved-rename');
    await page.fill('#saved-goals .saved-rename-input', 'Signup done');
    await page.press('#saved-goals .saved-rename-input', 'Enter');
    await page.waitForSelector('#saved-goals li[data-name="Signup done"]');
    // Focus stays on the renamed one (keyboard users are not sent back to the top of the page).
    await page.waitForFunction(() => document.activeElement?.textContent === 'Signup done');
    await goalsLoaded(page);
    expect((await goalRows(page)).map((r) => r[1])).toEqual(['Signup done']);
    expect((await list('goals')).map((g) => g.name)).toEqual(['Signup done']);

    await confirmClick(page, '#saved-funnels li[data-name="Visit to signup"] .saved-delete');
    await page.waitForSelector('#saved-funnels li', { state: 'detached' });
    await page.waitForFunction(() => document.activeElement?.id === 'saved-funnels-title');
    expect(await list('funnels')).toEqual([]);
    expect(page.url()).not.toContain('fid=');
    // The funnel stays open as its steps (asked again, unsaved).
    await viewLoaded(page);
    await goalsLoaded(page);
    expect(await page.$$eval('#funnel-body .funnel li', (items) => items.length)).toBe(2);

    await page.reload();
    await loaded(page);
    expect(await savedRows(page, 'saved-goals')).toEqual([['Signup done', true]]);
    expect(await savedRows(page, 'saved-funnels')).toEqual([]);
    expect(await segmentOptions(page)).toEqual([['', 'None'], [segment.id, 'From Google']]);

    const second = await openContext();
    await signInAs(second.page, EDITOR);
    expect(await savedRows(second.page, 'saved-goals')).toEqual([['Signup done', true]]);
    expect(await segmentOptions(second.page)).toEqual([['', 'None'], [segment.id, 'From Google']]);
    expect([...problems, ...second.problems]).toEqual([]);
  });

  it('a viewer sees the saved ones and applies them, with no save, rename, delete or Share control; the API refuses the viewer', async () => {
    viewer = await openContext();
    const { page, problems } = viewer;
    await signInAs(page, VIEWER);
    expect(await savedRows(page, 'saved-goals')).toEqual([['Signup done', false]]);
    for (const id of ['#goal-name', '#goal-save', '#funnel-save-form', '#segment-save-form', '#share-open', '.saved-rename', '.saved-delete']) expect([id, await page.isVisible(id)]).toEqual([id, false]);
    // Applying works for a viewer: the segment and the saved goal.
    await page.selectOption('#segment-picker', segment.id);
    await page.waitForFunction((id) => new URLSearchParams(location.search).get('seg') === id, segment.id);
    await loaded(page);
    expect(await shown(page, 'visitors')).toBe(4);
    expect(await page.isVisible('#segment-actions button')).toBe(false);
    await page.click('#saved-goals li[data-name="Signup done"] .saved-apply');
    await goalsLoaded(page);
    await page.waitForFunction(() => document.querySelectorAll('#goals-body li').length === 1);
    expect(await goalRows(page)).toEqual([[`saved:${goal.id}`, 'Signup done', ...goalWithSegment]]);
    await expectAccessible(page, 'viewer dashboard');
    expect(problems).toEqual([]);

    const v = tokens.viewer;
    expect((await asUser(v, 'GET', `/admin/projects/${projectId}/goals`)).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', 'goals', { name: 'x', event: 'x' }],
      ['PATCH', `goals/${goal.id}`, { name: 'y' }],
      ['DELETE', `goals/${goal.id}`, undefined],
      ['POST', 'segments', { name: 'x', filters: [['is', 'source', ['x']]] }],
      ['DELETE', `segments/${segment.id}`, undefined],
      ['POST', 'shares', {}],
    ] as const) {
      const res = await asUser<{ error: string }>(v, method, `/admin/projects/${projectId}/${path}`, body);
      expect([method, path, res.status, res.body.error]).toEqual([method, path, 403, 'insufficient_role']);
    }
  });

  it('a pasted rk_ key lists the saved ones read-only (GET /v1/goals, /v1/funnels, /v1/segments)', async () => {
    const { page, problems } = await openContext();
    const listed: string[] = [];
    page.on('request', (r) => {
      if (/\/v1\/(goals|funnels|segments)/.test(r.url())) listed.push(`${new URL(r.url()).pathname} ${r.headers()['authorization']?.slice(0, 10)}`);
    });
    await signInWithKey(page, `${base}/`, rk);
    expect(listed.sort()).toEqual(['/v1/funnels Bearer rk_', '/v1/goals Bearer rk_', '/v1/segments Bearer rk_']);
    expect(await savedRows(page, 'saved-goals')).toEqual([['Signup done', false]]);
    expect(await segmentOptions(page)).toEqual([['', 'None'], [segment.id, 'From Google']]);
    for (const id of ['#goal-save', '#segment-save-form', '#share-open']) expect([id, await page.isVisible(id)]).toEqual([id, false]);
    expect(problems).toEqual([]);
  });

  it('the Share dialog (editors) creates a link with a password and the segment, copies its url, lists it and revokes it', async () => {
    const { page, context, problems } = editor;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await page.click('#share-open');
    await page.waitForSelector('#share-dialog[open]');
    await page.waitForSelector('#shares tbody tr');
    expect(await page.textContent('#shares tbody')).toContain('No links yet');
    // The applied segment is chosen by default.
    expect(await page.$eval('#share-link-segment', (s) => (s as HTMLSelectElement).value)).toBe(segment.id);
    await page.fill('#share-name', 'For the client');
    await page.fill('#share-link-password', 'client passphrase 1');
    const made = page.waitForResponse((r) => r.url() === `${base}/admin/projects/${projectId}/shares` && r.request().method() === 'POST');
    await page.click('#share-create');
    const answer = (await (await made).json()) as { share: { id: string; has_password: boolean; segment: { id: string } }; url: string };
    expect(answer.share).toMatchObject({ has_password: true, segment: { id: segment.id } });
    expect(answer.url).toMatch(new RegExp(`^${base}/share/shr_`));
    await page.waitForSelector('#share-result:not([hidden])');
    expect(await page.inputValue('#share-url')).toBe(answer.url);
    await page.click('#share-copy');
    await page.waitForFunction(() => document.getElementById('share-status')?.textContent === 'Copied.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(answer.url);
    // Listed: name, no expiry, a password, the segment.
    const rowSelector = `#shares tr[data-share="${answer.share.id}"]`;
    await page.waitForSelector(rowSelector);
    expect(await page.$$eval(`${rowSelector} td`, (tds) => tds.slice(0, 5).map((td) => td.textContent))).toEqual(['For the client', 'never', 'yes', 'From Google', 'none']);
    expect((await list<{ id: string }>('shares')).map((s) => s.id)).toEqual([answer.share.id]);
    await expectAccessible(page, 'share dialog');
    // The link opens with its password (POST /v1/share/unlock, the shared page's first call)...
    const unlock = () => asUser<{ error?: string }>('', 'POST', '/v1/share/unlock', { token: answer.url.split('/share/')[1], password: 'client passphrase 1' });
    expect((await unlock()).status).toBe(200);

    // ...until revoked: gone from the list here and in the API, and the link no longer opens.
    await confirmClick(page, `${rowSelector} button`);
    await page.waitForSelector(rowSelector, { state: 'detached' });
    expect(await list('shares')).toEqual([]);
    expect((await unlock()).status).not.toBe(200);
    await page.click('#share-close');
    await page.waitForSelector('#share-dialog:not([open])', { state: 'attached' });
    expect(problems).toEqual([]);
  });

  it('a deleted segment stops applying, here at once and elsewhere at the next load', async () => {
    const { page, problems } = editor;
    await page.waitForSelector('#segment-actions .saved-delete');
    await confirmClick(page, '#segment-actions .saved-delete');
    await page.waitForFunction(() => !/[?&]seg=/.test(location.search));
    await loaded(page);
    expect(await list('segments')).toEqual([]);
    expect(await shown(page, 'visitors')).toBe(6);
    // The viewer's page still names it in its address: the next load drops it and reads everything. Until then its
    // 30-second refresh (the range includes now) may ask with the deleted segment, which the API refuses with 400:
    // the only problem allowed on that page before the reload.
    const beforeReload = viewer.problems.splice(0);
    expect(beforeReload.filter((p) => !p.startsWith(`answered 400: ${base}/v1/insights`))).toEqual([]);
    await viewer.page.reload();
    await loaded(viewer.page);
    expect(viewer.page.url()).not.toContain('seg=');
    expect(await shown(viewer.page, 'visitors')).toBe(6);
    expect([...problems, ...viewer.problems]).toEqual([]);
  });
});
