import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { type Server as HttpServer, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { join } from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';
import { Accounts, PasswordHasher } from '@analytics/accounts';
import { OAuthStore } from '@analytics/auth';
import { IngestService } from '@analytics/ingest';
import { openTestStores, silentLogger, systemBinary } from '@analytics/testing';

import { buildApp } from './app';

/** Headless Debian Chromium, and the folder its screenshots go to. */
async function launchBrowser(): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM.path,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Listens on a free loopback port, registers a public client ("Test connector") and the /authorize URL of a PKCE request. */
async function serveAndRegister(app: Express, redirectUri: string, state: string): Promise<{ http: HttpServer; base: string; authorizeUrl: string }> {
  const http = await new Promise<HttpServer>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const registered = await fetch(`${base}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Test connector', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code'] }),
  });
  const { client_id } = (await registered.json()) as { client_id: string };
  const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
  const params = { client_id, redirect_uri: redirectUri, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', state };
  return { http, base, authorizeUrl: `${base}/authorize?${new URLSearchParams(params).toString()}` };
}

/** Debian's chromium; never a downloaded browser. CHROMIUM_PATH overrides it; the suite skips loudly without it. */
const CHROMIUM = systemBinary({ name: 'chromium', env: 'CHROMIUM_PATH', defaults: ['/usr/bin/chromium'], aptPackage: 'chromium' });
const SCREENSHOTS = join(__dirname, '../../../dist/screenshots');
const redirectUri = 'http://127.0.0.1:33418/callback';

// Page-side code as strings: this project's TypeScript has no DOM library.
const AXE_FINDINGS = `axe.run().then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id + ' (' + v.impact + ', ' + v.nodes.length + ' nodes)'))`;

/** Serious or critical axe-core findings on the page as it is now. */
async function violations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, so the page's CSP (no script at all) stays as served.
  await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  return page.evaluate<string[]>(AXE_FINDINGS);
}

/** A phone-sized page in `colorScheme` whose console errors and requests outside `allowed` are collected in `problems`. */
async function watchedPage(browser: Browser, colorScheme: 'light' | 'dark', allowed: (url: string) => boolean) {
  const context = await browser.newContext({ viewport: { width: 375, height: 800 }, colorScheme });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('request', (r) => {
    if (!allowed(r.url())) problems.push(`request: ${r.url()}`);
  });
  return { context, page, problems };
}
const LOOK = `({ background: getComputedStyle(document.body).backgroundColor, button: getComputedStyle(document.querySelector('button')).backgroundColor, font: getComputedStyle(document.body).fontFamily })`;

CHROMIUM.describe('the OAuth consent page in Chromium', () => {
  let stores: Awaited<ReturnType<typeof openTestStores>>, http: HttpServer, browser: Browser;
  let base: string, authorizeUrl: string;

  beforeAll(async () => {
    stores = await openTestStores();
    const ingest = new IngestService({ store: stores.events, limiter: stores.limiter });
    const app = buildApp({ logger: silentLogger, authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: 's', oauth: { store: new OAuthStore(stores.keyDb) } });
    ({ http, base, authorizeUrl } = await serveAndRegister(app, redirectUri, 'st-1'));
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    if (http) await new Promise((r) => http.close(r));
    await stores?.close();
  });

  it.each([
    ['light', 'rgb(246, 247, 249)', 'rgb(67, 56, 202)'],
    ['dark', 'rgb(15, 17, 23)', 'rgb(165, 180, 252)'],
  ] as const)('wears the dashboard look in %s, loads nothing else, and has no axe-core violation before and after a refused key', async (colorScheme, background, accent) => {
    const { context, page, problems } = await watchedPage(browser, colorScheme, (url) => url.startsWith(`${base}/authorize`));
    try {
      await page.goto(authorizeUrl);
      const look = await page.evaluate<Record<string, string>>(LOOK);
      expect(look).toEqual({ background, button: accent, font: expect.stringMatching(/^system-ui/) });
      expect(await violations(page)).toEqual([]);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);

      await page.fill('#api_key', 'not-a-key');
      await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
      const error = await page.textContent('[role=alert]');
      expect(error).toBe('That is not an API key: keys look like rk_live_<prefix>_<secret> or sk_live_<prefix>_<secret>.');
      expect(error).not.toMatch(/[.…]\.$/);
      expect(await violations(page)).toEqual([]);
      await page.screenshot({ path: join(SCREENSHOTS, `oauth-consent-${colorScheme}.png`), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

CHROMIUM.describe('the sign-in and project picker of the consent page in Chromium', () => {
  let stores: Awaited<ReturnType<typeof openTestStores>>, http: HttpServer, browser: Browser;
  let base: string, authorizeUrl: string;
  // The client's redirect URI: a server of its own, so that the browser lands somewhere when the code is sent.
  let callback: HttpServer;
  let callbackUri: string;
  const arrived: URL[] = [];
  const email = 'agent-owner@example.com';
  const password = 'correct horse battery';

  beforeAll(async () => {
    callback = createServer((req, res) => {
      arrived.push(new URL(req.url ?? '/', callbackUri));
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html lang="en"><title>Connected</title><p>Connected</p></html>');
    });
    await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
    callbackUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
    stores = await openTestStores();
    const accounts = new Accounts({ db: stores.keyDb, keyStore: stores.keyStore, throttleSecret: 't', hasher: new PasswordHasher({ params: { N: 1024, r: 8, p: 1 } }) });
    await accounts.signIn.setup({ email, password }, { address: undefined, userAgent: undefined });
    const orgId = String((await stores.keyDb.query<{ id: string }>("SELECT id FROM organizations WHERE name = 'Default'")).rows[0]!.id);
    await stores.keyStore.createProject({ name: 'Marketing site', org_id: orgId });
    await stores.keyStore.createProject({ name: 'Shop', org_id: orgId });
    const ingest = new IngestService({ store: stores.events, limiter: stores.limiter });
    const app = buildApp({ logger: silentLogger, authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: 's', oauth: { store: new OAuthStore(stores.keyDb) }, consent: accounts.mcpConsent, audit: accounts.audit });
    ({ http, base, authorizeUrl } = await serveAndRegister(app, callbackUri, 'st-2'));
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    if (http) await new Promise((r) => http.close(r));
    if (callback) await new Promise((r) => callback.close(r));
    await stores?.close();
  });

  it.each(['light', 'dark'] as const)('signs in (%s), refuses a wrong password in words, picks a project by its label and sends the code, with no axe-core violation on the way', async (colorScheme) => {
    const { context, page, problems } = await watchedPage(browser, colorScheme, (url) => url.startsWith(`${base}/authorize`) || url.startsWith(callbackUri));
    try {
      await page.goto(authorizeUrl);
      expect(await violations(page)).toEqual([]);
      await page.fill('#email', email);
      await page.fill('#password', 'not the password');
      await Promise.all([page.waitForNavigation(), page.click('form.stack button[type=submit]')]);
      expect(await page.textContent('[role=alert]')).toBe('Unknown email or wrong password.');
      expect(await page.inputValue('#email')).toBe(email);
      expect(await violations(page)).toEqual([]);
      await page.screenshot({ path: join(SCREENSHOTS, `oauth-consent-signin-${colorScheme}.png`), fullPage: true });

      await page.fill('#password', password);
      await Promise.all([page.waitForNavigation(), page.click('form.stack button[type=submit]')]);
      expect(await page.textContent('legend')).toBe('Default (owner)');
      expect(await violations(page)).toEqual([]);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      await page.screenshot({ path: join(SCREENSHOTS, `oauth-consent-picker-${colorScheme}.png`), fullPage: true });
      await page.getByLabel('Shop').check();
      await Promise.all([page.waitForURL(`${callbackUri}**`), page.click('button[type=submit]')]);
      // Chromium asks the callback's host for /favicon.ico too.
      const redirected = arrived.filter((u) => u.pathname === '/callback').at(-1);
      expect(redirected?.searchParams.get('state')).toBe('st-2');
      expect(redirected?.searchParams.get('code')).toEqual(expect.any(String));
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

CHROMIUM.describe('the single sign-on button of the consent page in Chromium', () => {
  let stores: Awaited<ReturnType<typeof openTestStores>>, http: HttpServer, browser: Browser;
  let base: string, authorizeUrl: string;

  beforeAll(async () => {
    stores = await openTestStores();
    // A provider that does not answer (a closed port): the page offers the button all the same, and says so when pressed.
    const dead = createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(dead.address() as AddressInfo).port}`;
    await new Promise((resolve) => dead.close(resolve));
    const oidc = { issuer, clientId: 'c', clientSecret: 's', name: 'Acme ID', org: 'Default', defaultRole: 'viewer' as const, allowedDomains: [], publicUrl: 'http://localhost:3997' };
    const accounts = new Accounts({ db: stores.keyDb, keyStore: stores.keyStore, throttleSecret: 't', hasher: new PasswordHasher({ params: { N: 1024, r: 8, p: 1 } }), oidc, onError: () => {} });
    const ingest = new IngestService({ store: stores.events, limiter: stores.limiter });
    const app = buildApp({ logger: silentLogger, authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: 's', oauth: { store: new OAuthStore(stores.keyDb) }, consent: accounts.mcpConsent, audit: accounts.audit });
    ({ http, base, authorizeUrl } = await serveAndRegister(app, redirectUri, 'st-3'));
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    if (http) await new Promise((r) => http.close(r));
    await stores?.close();
  });

  it('offers "Sign in with Acme ID" above the password form, and says in words when the provider does not answer, with no axe-core violation', async () => {
    const { context, page, problems } = await watchedPage(browser, 'light', (url) => url.startsWith(`${base}/authorize`));
    try {
      await page.goto(authorizeUrl);
      expect(await violations(page)).toEqual([]);
      const button = page.getByRole('button', { name: 'Sign in with Acme ID' });
      await Promise.all([page.waitForNavigation(), button.click()]);
      expect(await page.textContent('[role=alert]')).toBe('Acme ID did not answer: try again later, or sign in with your email and password.');
      expect(await page.isVisible('#email')).toBe(true);
      expect(await violations(page)).toEqual([]);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      await page.screenshot({ path: join(SCREENSHOTS, 'oauth-consent-sso.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
