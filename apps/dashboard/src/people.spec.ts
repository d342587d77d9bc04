import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { openTestStores, silentLogger } from '@analytics/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the dashboard is tested against the whole service it ships with
import { buildApp } from '../../standalone/src/app';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the loopback helpers of the service tests
import { closeServer, listen, urlOf } from '../../standalone/src/test-service';
import { DAY_MS, dayString, wallMs } from './state';
import { CHROMIUM, axeViolations, launchChromium, loaded, shown, watch } from './test-support/page';

// People in the dashboard (issue 45, docs/dashboard.md "Signing in"), in Chromium against the real service as `npm
// start` serves it: the first run through the page, the project switcher, settings and keys, an invitation accepted in
// another browser context, removal ending the viewer's access, sessions, and axe on every page. No mock anywhere.

const WORKSPACE = join(__dirname, '../../..');
const DIST = join(WORKSPACE, 'dist/apps/dashboard');
const SCREENSHOTS = join(WORKSPACE, 'dist/screenshots');
const ADMIN_TOKEN = 'admin-token-people';
const OWNER = { email: 'owner@example.com', name: 'Olivia Owner', password: 'owner passphrase 1' };
const VIEWER = { email: 'viewer@example.com', name: 'Victor Viewer', password: 'viewer passphrase 1' };
const UNLIMITED = { track: { ratePerS: 1e6, burst: 1e6 }, batch: { ratePerS: 1e6, burst: 1e6 } };

let stores: Awaited<ReturnType<typeof openTestStores>>;
let server: Server;
let base: string;
let browser: Browser;
let projectId: string;
/** The owner's browser (context A) and the viewer's (context B), kept across the tests of the flow. */
let owner: { context: BrowserContext; page: Page; problems: string[] };
let viewer: { context: BrowserContext; page: Page; problems: string[] };

async function openContext(): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
  const page = await context.newPage();
  return { context, page, problems: watch(page, base) };
}

/** axe-core's serious and critical violations of the page as it is now (injected through DevTools: the CSP stays). */
/** No serious or critical axe violation, dark and light; a full-page screenshot of it in dist/screenshots/people-<name>.png. */
async function expectAccessible(page: Page, name: string): Promise<void> {
  for (const colorScheme of ['dark', 'light'] as const) {
    await page.emulateMedia({ colorScheme });
    expect({ name, colorScheme, violations: await axeViolations(page) }).toEqual({ name, colorScheme, violations: [] });
  }
  await page.screenshot({ path: join(SCREENSHOTS, `people-${name.replace(/\W+/g, '-')}.png`), fullPage: true });
}

const tokenOf = (page: Page) => page.evaluate(() => localStorage.getItem('analytics.session'));
async function asUser<T>(token: string, method: string, path: string, body?: object): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: (res.status === 204 ? undefined : await res.json()) as T };
}
/** Clicks a confirm button twice (its first click arms it). */
async function confirmClick(page: Page, selector: string): Promise<void> {
  await page.click(selector);
  await page.click(selector);
}
/** The Authorization headers the page sent to the read API. */
function readAuthorizations(page: Page): string[] {
  const seen: string[] = [];
  page.on('request', (r) => {
    if (r.url().startsWith(`${base}/v1/`)) seen.push(r.headers()['authorization'] ?? '');
  });
  return seen;
}

CHROMIUM.describe('people in the dashboard (Chromium, the real service)', () => {
  beforeAll(async () => {
    stores = await openTestStores();
    const app = buildApp({ stores, logger: silentLogger, trustProxy: true, dashboardDir: DIST, rateRules: UNLIMITED, secrets: { ADMIN_TOKEN, IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal' } });
    server = await listen(app);
    base = urlOf(server);
    // A project made by the operator before anyone has an account: the first user's organization receives it.
    const created = await stores.keyStore.createProject({ name: 'shop', allowed_origins: [] });
    projectId = created.project.id;
    const now = Date.now();
    const events = Array.from({ length: 5 }, (_, i) => ({ event: '$pageview', anonymous_id: `v-${i % 3}`, timestamp: new Date(now - i * 60_000).toISOString(), url: 'https://shop.example.com/' }));
    const sent = await fetch(`${base}/v1/batch`, { method: 'POST', headers: { authorization: `Bearer ${created.keys.sk}`, 'content-type': 'application/json' }, body: JSON.stringify({ events }) });
    expect(sent.status).toBe(202);
    browser = await launchChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await owner?.context.close();
    await viewer?.context.close();
    await browser?.close();
    if (server) await closeServer(server);
    await stores?.close();
  });

  it('first run: the page asks for the ADMIN_TOKEN, email, name and password, signs the owner in, and the dashboard reads without a pasted key', async () => {
    owner = await openContext();
    const { page, context } = owner;
    const authorizations = readAuthorizations(page);
    await page.goto(`${base}/`);
    await page.waitForSelector('#setup-page:not([hidden])');
    // The read-key card stays beside it ("Open with a read key").
    expect(await page.isVisible('#key-input')).toBe(true);
    expect(await page.textContent('#sign-in-title')).toBe('Open with a read key');
    await expectAccessible(page, 'first run');
    // A wrong admin token is refused in words.
    await page.fill('#setup-token', 'not-the-token');
    await page.fill('#setup-email', OWNER.email);
    await page.fill('#setup-name', OWNER.name);
    await page.fill('#setup-password', OWNER.password);
    await page.click('#setup-form button[type="submit"]');
    await page.waitForFunction(() => document.getElementById('setup-error')?.textContent?.includes('401'));
    expect(await page.textContent('#setup-error')).toContain('not the admin token');
    owner.problems.length = 0;

    await page.fill('#setup-token', ADMIN_TOKEN);
    await page.fill('#setup-password', OWNER.password);
    await page.click('#setup-form button[type="submit"]');
    await loaded(page);
    expect(await shown(page, 'pageviews')).toBe(5);
    expect(await page.textContent('#project-title')).toContain('shop');
    const token = await tokenOf(page);
    expect(token).toMatch(/^ses_/);
    // No pasted key: the reads carry a session read key; the user token is never sent to the read API, never a cookie.
    expect(await page.evaluate(() => sessionStorage.getItem('analytics.readKey'))).toBeNull();
    expect(authorizations.length).toBeGreaterThan(0);
    expect(authorizations.every((a) => /^Bearer rk_live_/.test(a))).toBe(true);
    expect(page.url()).not.toContain(token!);
    expect(await context.cookies()).toEqual([]);
    expect(owner.problems).toEqual([]);

    // A new tab of the same browser stays signed in.
    const second = await context.newPage();
    await second.goto(`${base}/`);
    await loaded(second);
    expect(await second.textContent('#project-title')).toContain('shop');
    await second.close();
  });

  it('the project switcher names every project the user may see, grouped by organization, and switches the dashboard', async () => {
    const { page, problems } = owner;
    const token = (await tokenOf(page))!;
    const org = await asUser<{ org: { id: string } }>(token, 'POST', '/admin/orgs', { name: 'Acme' });
    expect(org.status).toBe(201);
    const made = await asUser<{ project: { id: string } }>(token, 'POST', '/admin/projects', { name: 'acme-site', org_id: org.body.org.id });
    expect(made.status).toBe(201);
    await page.reload();
    await loaded(page);
    const groups = await page.$$eval('#project-switcher optgroup', (gs) => gs.map((g) => [g.getAttribute('label'), [...g.querySelectorAll('option')].map((o) => o.textContent)]));
    expect(groups).toEqual([
      ['Default (owner)', ['shop']],
      ['Acme (owner)', ['acme-site']],
    ]);
    await expectAccessible(page, 'switcher and dashboard');
    await page.selectOption('#project-switcher', made.body.project.id);
    await page.waitForFunction(() => document.getElementById('project-title')?.textContent?.includes('acme-site'));
    await loaded(page);
    expect(await shown(page, 'pageviews')).toBe(0);
    await page.selectOption('#project-switcher', projectId);
    await page.waitForFunction(() => document.getElementById('project-title')?.textContent?.includes('shop'));
    await loaded(page);
    expect(await shown(page, 'pageviews')).toBe(5);
    expect(problems).toEqual([]);
  });

  it('settings: origins added and removed one by one, retention and name saved; a key created with its secret shown once, then revoked', async () => {
    const { page, problems } = owner;
    const token = (await tokenOf(page))!;
    await page.click('#nav-settings');
    await page.waitForSelector('#settings-page:not([hidden]) #keys tbody tr');
    expect(page.url()).toBe(`${base}/#/settings`);
    await expectAccessible(page, 'settings');
    for (const origin of ['https://a.example.com', 'https://b.example.com']) {
      await page.fill('#origin-input', origin);
      await page.click('#origin-form button[type="submit"]');
      await page.waitForSelector(`#origins li[data-origin="${origin}"]`);
    }
    await page.click('#origins li[data-origin="https://a.example.com"] button');
    await page.waitForSelector('#origins li[data-origin="https://a.example.com"]', { state: 'detached' });
    await page.fill('#project-retention', '90');
    await page.click('#project-form button[type="submit"]');
    await page.waitForFunction(() => document.getElementById('project-status')?.textContent === 'Saved.');
    const project = (await asUser<{ project: { allowed_origins: string[]; retention_days: number } }>(token, 'GET', `/admin/projects/${projectId}`)).body.project;
    expect([project.allowed_origins, project.retention_days]).toEqual([['https://b.example.com'], 90]);

    // A new read key: its secret once, and it reads.
    await page.selectOption('#key-kind', 'rk');
    await page.click('#key-create-form button[type="submit"]');
    await page.waitForSelector('#new-key:not([hidden])');
    const secret = await page.inputValue('#new-key-value');
    expect(secret).toMatch(/^rk_live_/);
    const prefix = secret.split('_')[2]!;
    await page.waitForSelector(`#keys tr[data-prefix="${prefix}"][data-state="active"]`);
    const read = () => fetch(`${base}/v1/stats?from=2026-01-01&to=2026-01-02`, { headers: { authorization: `Bearer ${secret}` } }).then((r) => r.status);
    expect(await read()).toBe(200);
    await confirmClick(page, `#keys tr[data-prefix="${prefix}"] button`);
    await page.waitForSelector(`#keys tr[data-prefix="${prefix}"][data-state="revoked"]`);
    expect(await read()).toBe(401);
    // Shown once: opening the page again shows the keys, never a secret.
    await page.reload();
    await page.waitForSelector(`#keys tr[data-prefix="${prefix}"]`);
    expect(await page.isHidden('#new-key')).toBe(true);
    expect(await page.content()).not.toContain(secret.split('_')[3]!);
    expect(problems).toEqual([]);
  });

  it("settings: the time zone select lists the zones the browser knows (UTC by default); saved, the project has it and the dashboard's Today is that zone's day", async () => {
    const { page, problems } = owner;
    const token = (await tokenOf(page))!;
    await page.click('#nav-settings');
    await page.waitForSelector('#settings-page:not([hidden]) #keys tbody tr');
    expect(await page.inputValue('#project-timezone')).toBe('UTC');
    const zones = await page.$$eval('#project-timezone option', (options) => options.map((o) => (o as HTMLOptionElement).value));
    expect(zones.length).toBeGreaterThan(300);
    expect(zones[0]).toBe('UTC');
    expect(zones).toContain('Pacific/Kiritimati');
    await page.selectOption('#project-timezone', 'Pacific/Kiritimati');
    await page.click('#project-form button[type="submit"]');
    await page.waitForFunction(() => document.getElementById('project-status')?.textContent === 'Saved.');
    expect((await asUser<{ project: { timezone: string } }>(token, 'GET', `/admin/projects/${projectId}`)).body.project.timezone).toBe('Pacific/Kiritimati');

    await page.click('#nav-dashboard');
    await loaded(page);
    await page.click('[data-preset="today"]');
    // Kiritimati is UTC+14: its today, whatever the UTC date.
    const wall = wallMs(Date.now(), 'Pacific/Kiritimati');
    await page.waitForURL((u) => u.search.includes(`from=${dayString(wall - (wall % DAY_MS))}`));
    await loaded(page);

    // Back to the settings by their address alone (the later tests expect no range in it), and back to UTC.
    await page.goto(`${base}/#/settings`);
    await page.waitForSelector('#settings-page:not([hidden]) #keys tbody tr');
    expect(await page.inputValue('#project-timezone')).toBe('Pacific/Kiritimati');
    await page.selectOption('#project-timezone', 'UTC');
    await page.click('#project-form button[type="submit"]');
    await page.waitForFunction(() => document.getElementById('project-status')?.textContent === 'Saved.');
    expect((await asUser<{ project: { timezone: string } }>(token, 'GET', `/admin/projects/${projectId}`)).body.project.timezone).toBe('UTC');
    expect(problems).toEqual([]);
  });

  it('members: a viewer invited with a copyable link accepts in another browser context with a new password, sees the dashboard and no keys or settings controls', async () => {
    const { page, context, problems } = owner;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await page.click('#nav-members');
    await page.waitForSelector(`#members tr[data-email="${OWNER.email}"]`);
    expect(page.url()).toBe(`${base}/#/members`);
    await page.fill('#invite-email', VIEWER.email);
    await page.selectOption('#invite-role', 'viewer');
    await page.click('#invite-form button[type="submit"]');
    await page.waitForSelector('#invite-link:not([hidden])');
    const link = await page.inputValue('#invite-url');
    expect(link).toMatch(new RegExp(`^${base}/#invitation=inv_[0-9A-Za-z]{43}$`));
    await page.click('#invite-copy');
    await page.waitForFunction(() => document.getElementById('invite-status')?.textContent === 'Copied.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link);
    await page.waitForSelector(`#invitations li[data-email="${VIEWER.email}"]`);
    await expectAccessible(page, 'members');
    expect(problems).toEqual([]);

    viewer = await openContext();
    const v = viewer.page;
    const authorizations = readAuthorizations(v);
    await v.goto(link);
    await v.waitForSelector('#accept-page:not([hidden])');
    // The one-time token leaves the address bar at once.
    expect(v.url()).toBe(`${base}/`);
    await expectAccessible(v, 'invitation');
    await v.fill('#accept-name', VIEWER.name);
    await v.fill('#accept-password', VIEWER.password);
    await v.click('#accept-submit');
    await loaded(v);
    expect(await shown(v, 'pageviews')).toBe(5);
    expect(authorizations.every((a) => /^Bearer rk_live_/.test(a))).toBe(true);
    // A viewer: no settings, members or audit, and the pages themselves say why when opened by their address.
    for (const id of ['#nav-settings', '#nav-members', '#nav-audit']) expect([id, await v.isVisible(id)]).toEqual([id, false]);
    expect(await v.isVisible('#nav-account')).toBe(true);
    expect(await v.$$eval('#project-switcher optgroup', (gs) => gs.map((g) => g.getAttribute('label')))).toEqual(['Default (viewer)']);
    await v.goto(`${base}/#/settings`);
    await v.waitForSelector('#settings-page:not([hidden])');
    expect(await v.textContent('#settings-error')).toContain('viewer');
    expect(await v.textContent('#settings-error')).toContain('403');
    for (const id of ['#key-create-form', '#keys', '#origin-form', '#project-form']) expect([id, await v.isVisible(id)]).toEqual([id, false]);
    await v.goto(`${base}/#/members`);
    await v.waitForSelector('#members-page:not([hidden])');
    expect(await v.isVisible('#invite-form')).toBe(false);
    expect(await v.textContent('#members-error')).toContain('403');
    await v.goto(`${base}/#/`);
    await loaded(v);
    expect(viewer.problems).toEqual([]);

    // The owner sees the new member with the viewer role.
    await page.reload();
    await page.waitForSelector(`#members tr[data-email="${VIEWER.email}"][data-role="viewer"]`);
  });

  it('the audit list shows admins what happened: the invitation, the acceptance, the key created and revoked; of any of their organizations', async () => {
    const { page, problems } = owner;
    await page.click('#nav-audit');
    await page.waitForSelector('#audit tbody tr[data-action]');
    const actions = await page.$$eval('#audit tbody tr', (rows) => rows.map((r) => (r as HTMLElement).dataset['action']));
    for (const a of ['invitation.created', 'invitation.accepted', 'key.created', 'key.revoked', 'project.updated', 'user.signed_in']) expect([a, actions.includes(a)]).toEqual([a, true]);
    await expectAccessible(page, 'audit');
    // Any organization of the user, one without the current project too: Acme's log.
    const orgs = await page.$$eval('#org-switcher option', (os) => os.map((o) => [o.textContent, (o as HTMLOptionElement).value]));
    expect(orgs.map(([name]) => name)).toEqual(['Default (owner)', 'Acme (owner)']);
    await page.selectOption('#org-switcher', orgs[1]![1]!);
    await page.waitForFunction(() => document.getElementById('audit-title')?.textContent === 'Audit log of Acme');
    await page.waitForSelector('#audit tbody tr[data-action="org.created"]');
    await page.selectOption('#org-switcher', orgs[0]![1]!);
    await page.waitForFunction(() => document.getElementById('audit-title')?.textContent === 'Audit log of Default');
    expect(problems).toEqual([]);
  });

  it("removal: the admin removes the viewer; the viewer's next read fails and their page returns to sign-in", async () => {
    const { page } = owner;
    await page.click('#nav-members');
    await page.waitForSelector(`#members tr[data-email="${VIEWER.email}"]`);
    await confirmClick(page, `#members tr[data-email="${VIEWER.email}"] button`);
    await page.waitForSelector(`#members tr[data-email="${VIEWER.email}"]`, { state: 'detached' });

    const v = viewer.page;
    viewer.problems.length = 0;
    await v.click('button[data-preset="30d"]');
    await v.waitForSelector('#login-page:not([hidden])');
    expect(await v.textContent('#login-error')).toContain('no longer have access');
    expect(await v.isVisible('#dashboard')).toBe(false);
    expect(await tokenOf(v)).toBeNull();
    // What failed on the way: the revoked read key (401), then the new one refused (404, not a member).
    expect(viewer.problems.filter((p) => !/(answered |status of )(401|404)/.test(p))).toEqual([]);
  });

  it('the account page lists the sessions; "sign out everywhere" ends the other browser\'s session, which returns to sign-in', async () => {
    const { page } = owner;
    // The owner signs in in a second browser through the sign-in page (email and password fields password managers know).
    const other = await openContext();
    try {
      await other.page.goto(`${base}/`);
      await other.page.waitForSelector('#login-page:not([hidden])');
      expect(await other.page.getAttribute('#login-email', 'type')).toBe('email');
      expect(await other.page.getAttribute('#login-email', 'autocomplete')).toBe('username');
      expect(await other.page.getAttribute('#login-password', 'type')).toBe('password');
      expect(await other.page.getAttribute('#login-password', 'autocomplete')).toBe('current-password');
      expect(await other.page.isVisible('#sso-button')).toBe(false);
      expect(await other.page.isVisible('#forgot-button')).toBe(false);
      expect(await other.page.isVisible('#forgot-form')).toBe(false);
      await expectAccessible(other.page, 'sign-in');
      await other.page.fill('#login-email', OWNER.email);
      await other.page.fill('#login-password', OWNER.password);
      await other.page.press('#login-password', 'Enter');
      await loaded(other.page);

      await page.click('#nav-account');
      await page.waitForFunction(() => document.querySelectorAll('#sessions tbody tr').length === 2);
      expect(await page.$$eval('#sessions tbody tr', (rows) => rows.map((r) => (r as HTMLElement).dataset['current']).sort())).toEqual(['false', 'true']);
      await expectAccessible(page, 'account');
      await page.click('#sign-out-everywhere');
      await page.waitForSelector('#login-page:not([hidden])');
      expect(await tokenOf(page)).toBeNull();

      await other.page.click('button[data-preset="30d"]');
      await other.page.waitForSelector('#login-page:not([hidden])');
      expect(await other.page.textContent('#login-error')).toContain('session has ended');
      expect(await tokenOf(other.page)).toBeNull();
    } finally {
      await other.context.close();
    }
  });

  it('the account page changes the password: the old one is refused, the new one signs in', async () => {
    const { page } = owner;
    await page.fill('#login-email', OWNER.email);
    await page.fill('#login-password', OWNER.password);
    await page.press('#login-password', 'Enter');
    await loaded(page);
    await page.goto(`${base}/#/account`);
    await page.waitForSelector('#sessions tbody tr');
    await page.fill('#password-current', OWNER.password);
    await page.fill('#password-new', 'a newer owner passphrase');
    await page.click('#password-form button[type="submit"]');
    await page.waitForFunction(() => document.getElementById('password-status')?.textContent?.startsWith('Password changed'));
    const login = (password: string) => fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: OWNER.email, password }) }).then((r) => r.status);
    expect(await login(OWNER.password)).toBe(401);
    expect(await login('a newer owner passphrase')).toBe(200);
    // Sign out ends this session on the server.
    const token = (await tokenOf(page))!;
    await page.click('#sign-out');
    await page.waitForSelector('#login-page:not([hidden])');
    expect((await asUser(token, 'GET', '/auth/me')).status).toBe(401);
  });

  it('a reset link (the operator\'s, as the mailed one) opens "Choose a new password", which sets it and signs in', async () => {
    const made = await asUser<{ reset_url: string }>(ADMIN_TOKEN, 'POST', '/admin/password-resets', { email: OWNER.email });
    expect(made.status).toBe(201);
    expect(made.body.reset_url).toMatch(new RegExp(`^${base}/#reset=rst_`));
    const { page, problems } = owner;
    await page.goto(made.body.reset_url);
    await page.waitForSelector('#reset-page:not([hidden])');
    expect(page.url()).toBe(`${base}/`);
    expect(await page.getAttribute('#reset-password', 'autocomplete')).toBe('new-password');
    await expectAccessible(page, 'reset');
    await page.fill('#reset-password', 'the reset owner passphrase');
    await page.press('#reset-password', 'Enter');
    await loaded(page);
    expect(await tokenOf(page)).toMatch(/^ses_/);
    expect(problems.filter((p) => !/(answered |status of )401/.test(p))).toEqual([]);
    // Used once: the same link again is refused in words.
    await page.evaluate(() => localStorage.clear());
    await page.goto(made.body.reset_url);
    await page.fill('#reset-password', 'yet another passphrase');
    await page.press('#reset-password', 'Enter');
    await page.waitForFunction(() => document.getElementById('reset-error')?.textContent?.includes('400 invalid_token'));
    expect(await page.textContent('#reset-error')).toContain('used');
  });
});
