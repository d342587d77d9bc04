import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type * as Sdk from './index';
import type { WireEvent } from './index';
import { CHROMIUM, DIST, launchChromium, startPageServer } from './test-support/browser';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: an SDK's tests run against the whole service
import { type RealService, closeServer, listen, startRealService, urlOf } from '../../../apps/standalone/src/test-service';

declare global {
  interface Window {
    analytics: typeof Sdk;
    __analyticsConfig?: Sdk.InitOptions;
    __fetches: { url: string; keepalive?: boolean; headers: Record<string, string>; body: string }[];
  }
}


let service: RealService;
let browser: Browser;
let pages: { server: Server; origin: string };
let foreign: { server: Server; origin: string };
const contexts: BrowserContext[] = [];
const extraServers: Server[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A fresh project (own keys, own rate buckets) whose allowlist holds the test pages' origin. */
async function newProject(name: string) {
  const p = await service.stores.keyStore.createProject({ name, allowed_origins: [pages.origin] });
  return { key: p.keys.pk, readKey: p.keys.rk, projectId: p.project.id };
}

interface PageOptions {
  /** The SDK's `persistence`; left out of the config when absent, so the default applies. */
  persistence?: Sdk.InitOptions['persistence'];
  prepare?: (context: BrowserContext) => Promise<unknown>;
  /** More init options (the standard events' opt-ins). */
  options?: Partial<Sdk.InitOptions>;
}
const LOCAL = { persistence: 'local' } as const;

/** A fresh browser context (own storage) whose pages init the SDK with `key`; fetch calls are recorded. */
async function openPage(key: string, { persistence, prepare, options }: PageOptions = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  contexts.push(context);
  await context.addInitScript((config) => {
    window.__analyticsConfig = config;
    window.__fetches = [];
    const realFetch = window.fetch;
    window.fetch = (input, init) => {
      window.__fetches.push({ url: String(input), keepalive: init?.keepalive, headers: { ...(init?.headers as Record<string, string>) }, body: String(init?.body) });
      return realFetch(input, init);
    };
  }, { endpoint: service.endpoint, key, ...(persistence && { persistence }), ...options });
  await prepare?.(context);
  return { context, page: await context.newPage() };
}

const seen = (key: string) => service.requests.filter((r) => r.key === key);
const batches = (key: string) => seen(key).filter((r) => r.method === 'POST' && r.path === '/v1/batch');
const sentEvents = (key: string) => batches(key).flatMap((r) => (r.body as { events: WireEvent[] }).events);
const rowsOf = (projectId: string) =>
  service.stores.events.select<Record<string, string | null>>(
    `SELECT * FROM ${service.stores.events.eventsTable} WHERE project_id = {p:UUID} ORDER BY timestamp, event_name`,
    { p: projectId },
  );
/** Fake timers in the page, paused: its timers fire only when the test advances the clock (fetch stays real). */
async function freezeClock(page: Page): Promise<void> {
  const now = Date.now();
  await page.clock.install({ time: now });
  await page.clock.pauseAt(now + 1000);
}
const storedAnonymousId = (page: Page) => page.evaluate(() => localStorage.getItem('analytics_anonymous_id'));

/** What the SDK could have left on the device: Web Storage, cookies (the page's and the context's) and IndexedDB. */
async function deviceStorage(page: Page, context: BrowserContext) {
  const inPage = await page.evaluate(async () => ({
    localStorage: Object.keys(localStorage),
    sessionStorage: Object.keys(sessionStorage),
    cookie: document.cookie,
    indexedDB: (await indexedDB.databases()).map((d) => d.name),
  }));
  return { ...inPage, contextCookies: await context.cookies(), storageState: await context.storageState({ indexedDB: true }) };
}
const NOTHING_STORED = { localStorage: [], sessionStorage: [], cookie: '', indexedDB: [], contextCookies: [], storageState: { cookies: [], origins: [] } };

CHROMIUM.describe('browser SDK in headless Chromium against the real service', () => {
  beforeAll(async () => {
    browser = await launchChromium(); // first: a Chromium that cannot start fails the suite at once
    [service, pages, foreign] = await Promise.all([startRealService(), startPageServer(), startPageServer()]);
  });
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all([pages, foreign].filter(Boolean).map((p) => closeServer(p.server)));
    await Promise.all(extraServers.map(closeServer));
    await service?.close();
  });

  describe("persistence: 'local' (ids kept in localStorage, the opt-in)", () => {
    it('script tag: $pageview on load, flushed by the 2 s timer, stored with the source of the utm parameters; no cookies', async () => {
      const { key, projectId } = await newProject('load');
      const { context, page } = await openPage(key, LOCAL);
      const url = `${pages.origin}/landing?utm_source=newsletter&utm_medium=email&utm_campaign=spring`;
      await page.goto(url);
      await until(() => batches(key).length === 1, 'the timed flush');
      const [batch] = batches(key);
      // From the moment the $pageview was buffered (its client timestamp, same machine clock) to its arrival.
      const waited = batch!.at - Date.parse(sentEvents(key)[0]!.timestamp);
      expect(waited).toBeGreaterThanOrEqual(1990);
      expect(waited).toBeLessThan(4000);
      expect(batch).toMatchObject({ status: 202, origin: pages.origin, contentType: 'text/plain' });

      const anonymousId = await storedAnonymousId(page);
      expect(anonymousId).toMatch(/^[0-9a-f-]{36}$/);
      const rows = await rowsOf(projectId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        event_name: '$pageview',
        anonymous_id: anonymousId,
        user_id: null,
        url,
        path: '/landing',
        referrer: null,
        source: 'newsletter',
        medium: 'email',
        campaign: 'spring',
        source_confidence: 'high',
        browser: expect.stringContaining('Chrom'), // parsed server-side from the real User-Agent
      });
      const properties = JSON.parse(rows[0]!.properties!);
      expect(properties).toEqual({ viewport: expect.stringMatching(/^\d+x\d+$/), language: expect.any(String), timezone: expect.any(String) });
      expect(properties.timezone).toBe(await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone));
      expect(await context.cookies()).toEqual([]);
      expect(await page.evaluate(() => document.cookie)).toBe('');
    });

    it('ES module build: click ids and the referrer travel to the classifier (gclid -> google / paid)', async () => {
      const { key, projectId } = await newProject('esm');
      const { page } = await openPage(key, LOCAL);
      await page.goto(`${pages.origin}/ad?esm&gclid=abc123&fbclid=fb1&ttclid=tt1&msclkid=ms1&li_fat_id=li1`, { referer: 'https://www.google.com/' });
      await page.evaluate(() => window.analytics.flush());
      const rows = await rowsOf(projectId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ event_name: '$pageview', source: 'google', medium: 'paid', source_rule_id: 'click_id', referrer: 'https://www.google.com/' });
      expect(rows[0]!.url).toBe(`${pages.origin}/ad?esm&gclid=abc123&fbclid=fb1&ttclid=tt1&msclkid=ms1&li_fat_id=li1`);
    });

    it("a device clock a day ahead: each batch carries sent_at by that clock, and the server stores today's time", async () => {
      const { key, projectId } = await newProject('wrong-clock');
      const { page } = await openPage(key, LOCAL);
      const DAY = 86_400_000;
      await page.clock.setSystemTime(Date.now() + DAY); // only Date moves: the page's timers run on real time
      await page.goto(`${pages.origin}/ahead`);
      await page.evaluate(() => window.analytics.track('later'));
      const before = Date.now();
      await page.evaluate(() => window.analytics.flush());
      const [batch] = batches(key);
      const body = batch!.body as { events: WireEvent[]; sent_at: string };
      // sent_at and the timestamps are by the page's clock (a day ahead), sent_at the latest of them.
      expect(Date.parse(body.sent_at) - batch!.at).toBeGreaterThan(DAY - 60_000);
      for (const e of body.events) expect(Date.parse(body.sent_at) - Date.parse(e.timestamp)).toBeGreaterThanOrEqual(0);
      const rows = await rowsOf(projectId);
      expect(rows.map((r) => r.event_name)).toEqual(['$pageview', 'later']);
      for (const r of rows) {
        const stored = Date.parse(`${r.timestamp!.replace(' ', 'T')}Z`);
        expect(stored).toBeGreaterThan(before - 60_000);
        expect(stored).toBeLessThanOrEqual(batch!.at);
      }
    });

    it('emits $pageview on pushState, replaceState, popstate and bfcache restores (not on same-URL or fragment-only changes)', async () => {
      const { key, projectId } = await newProject('spa');
      const { page } = await openPage(key, LOCAL);
      await page.goto(`${pages.origin}/app`);
      await page.evaluate(() => {
        history.pushState({}, '', '/app/a?x=1');
        history.replaceState({}, '', '/app/b');
        history.replaceState({ same: true }, '', '/app/b');
        history.pushState({}, '', '/app/b#section');
      });
      const back = () => page.evaluate(() => new Promise<void>((resolve) => (addEventListener('popstate', () => resolve(), { once: true }), history.back())));
      await back(); // /app/b#section -> /app/b: fragment only
      await back(); // /app/b -> /app
      // Back/forward-cache restores (headless Chromium under Playwright does not use the cache, so the event is dispatched).
      await page.evaluate(() => {
        dispatchEvent(new PageTransitionEvent('pageshow', { persisted: false }));
        dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }));
      });
      await page.evaluate(() => window.analytics.flush());

      const o = pages.origin;
      expect(sentEvents(key).map((e) => [e.event, e.path, e.url, e.referrer])).toEqual([
        ['$pageview', '/app', `${o}/app`, undefined],
        ['$pageview', '/app/a', `${o}/app/a?x=1`, `${o}/app`],
        ['$pageview', '/app/b', `${o}/app/b`, `${o}/app/a?x=1`],
        ['$pageview', '/app', `${o}/app`, `${o}/app/b`],
        ['$pageview', '/app', `${o}/app`, `${o}/app/b`],
      ]);
      const rows = await rowsOf(projectId);
      expect(rows.map((r) => r.source).sort()).toEqual(['direct', 'internal', 'internal', 'internal', 'internal']);
    });

    it('flushes as soon as 20 events are buffered, without waiting for the timer', async () => {
      const { key, projectId } = await newProject('twenty');
      const { page } = await openPage(key, LOCAL);
      await freezeClock(page); // the 2 s timer cannot fire unless the test advances the page's clock
      await page.goto(`${pages.origin}/many`);
      await page.evaluate(() => {
        for (let i = 1; i <= 18; i++) window.analytics.track('step', { i });
      });
      await sleep(300);
      expect(batches(key)).toHaveLength(0); // 19 buffered ($pageview + 18)
      await page.evaluate(() => window.analytics.track('step', { i: 19 }));
      await until(() => batches(key).length === 1, 'the 20-event flush');
      expect(sentEvents(key)).toHaveLength(20);
      expect(batches(key)[0]!.status).toBe(202);
      expect(await rowsOf(projectId)).toHaveLength(20);

      await page.evaluate(() => window.analytics.track('step', { i: 20 }));
      await sleep(300);
      expect(batches(key)).toHaveLength(1); // the 21st waits for the timer
      await page.clock.runFor(2000);
      await until(() => batches(key).length === 2, 'the timed flush of the 21st event');
      expect((batches(key)[1]!.body as { events: WireEvent[] }).events.map((e) => e.properties['i'])).toEqual([20]);
    });

    it('flushes 2 s after the first buffered event, not before', async () => {
      const { key } = await newProject('two-seconds');
      const { page } = await openPage(key, LOCAL);
      await freezeClock(page);
      await page.goto(`${pages.origin}/timer`); // $pageview buffered at t = 0
      await page.clock.runFor(500);
      await page.evaluate(() => window.analytics.track('clicked_pricing'));
      await page.clock.runFor(1400); // t = 1900
      await sleep(300);
      expect(batches(key)).toHaveLength(0);
      await page.clock.runFor(100); // t = 2000
      await until(() => batches(key).length === 1, 'the 2 s flush');
      expect(sentEvents(key).map((e) => e.event)).toEqual(['$pageview', 'clicked_pricing']);
    });

    it('flushes with keepalive fetch and the Authorization header when the page is left, closed or hidden', async () => {
      const { key, projectId } = await newProject('hidden');
      const { page, context } = await openPage(key, LOCAL);
      await freezeClock(page); // only the hide handlers can flush
      await page.goto(`${pages.origin}/leaving`);
      await page.evaluate(() => window.analytics.track('leaving'));
      await page.goto(`${pages.origin}/next`); // pagehide + visibilitychange on /leaving
      await until(() => batches(key).length === 1, 'the flush on leaving the page');
      expect(sentEvents(key).map((e) => [e.event, e.path])).toEqual([
        ['$pageview', '/leaving'],
        ['leaving', '/leaving'],
      ]);

      // visibilitychange -> hidden on its own (a tab switch): the page stays, the flush uses keepalive.
      await page.evaluate(() => {
        Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
        document.dispatchEvent(new Event('visibilitychange'));
      });
      await until(() => batches(key).length === 2, 'the flush on visibilitychange');
      expect(sentEvents(key).slice(2).map((e) => e.path)).toEqual(['/next']);
      const fetches = await page.evaluate(() => window.__fetches);
      expect(fetches).toEqual([
        {
          url: `${service.endpoint}/v1/batch`,
          keepalive: true,
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'text/plain' },
          body: expect.stringContaining('"path":"/next"'),
        },
      ]);

      // Closing the tab.
      const second = await context.newPage();
      await freezeClock(second);
      await second.goto(`${pages.origin}/closing`);
      await second.evaluate(() => window.analytics.track('closing'));
      await second.close();
      await until(() => batches(key).length === 3, 'the flush on closing the tab');
      expect(sentEvents(key).slice(3).map((e) => e.event)).toEqual(['$pageview', 'closing']);
      expect(batches(key).every((b) => b.status === 202)).toBe(true);
      expect(await rowsOf(projectId)).toHaveLength(5);
    });

    it.each([
      ['navigator.doNotTrack = "1"', () => Object.defineProperty(Navigator.prototype, 'doNotTrack', { configurable: true, get: () => '1' })],
      ['window.doNotTrack = "1"', () => Object.defineProperty(window, 'doNotTrack', { configurable: true, value: '1' })],
      ['navigator.globalPrivacyControl = true', () => Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', { configurable: true, get: () => true })],
    ])('is silent with %s: nothing is stored locally and nothing reaches the server', async (_name, optOut) => {
      const { key, projectId } = await newProject('opted-out');
      const { page } = await openPage(key, { ...LOCAL, prepare: (context) => context.addInitScript(optOut) });
      const toService: string[] = [];
      page.on('request', (r) => r.url().startsWith(service.endpoint) && toService.push(r.url()));
      const before = service.requests.length;
      await freezeClock(page);
      await page.goto(`${pages.origin}/private?utm_source=newsletter`);
      await page.evaluate(async () => {
        const a = window.analytics;
        for (let i = 0; i < 25; i++) a.track('ignored', { i });
        a.page();
        history.pushState({}, '', '/private/other');
        await a.identify('user-1', { plan: 'pro' });
        a.reset();
        await a.flush();
      });
      expect(await page.evaluate(() => localStorage.length)).toBe(0);
      await page.clock.runFor(10_000);
      await page.goto(`${pages.origin}/elsewhere`); // pagehide
      await sleep(300);
      expect(toService).toEqual([]);
      expect(await page.evaluate(() => window.__fetches)).toEqual([]);
      expect(seen(key)).toEqual([]);
      expect(service.requests.length).toBe(before);
      expect(await rowsOf(projectId)).toEqual([]);
    });

    it('a page on an origin outside allowed_origins gets 403 origin_not_allowed, nothing is stored and the batch is not retried', async () => {
      const { key, projectId } = await newProject('allowlist');
      const { page } = await openPage(key, LOCAL);
      await freezeClock(page);
      await page.goto(`${foreign.origin}/elsewhere`);
      await page.evaluate(() => window.analytics.flush());
      expect(batches(key).map((b) => [b.status, b.origin])).toEqual([[403, foreign.origin]]);
      const answer = await page.evaluate(
        async ({ endpoint, key }) => {
          const res = await fetch(`${endpoint}/v1/batch`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: JSON.stringify({ events: [{ event: 'x' }] }) });
          return { status: res.status, body: await res.json() };
        },
        { endpoint: service.endpoint, key },
      );
      expect(answer).toEqual({ status: 403, body: { error: 'origin_not_allowed' } });
      await page.clock.runFor(60_000);
      await sleep(200);
      expect(batches(key)).toHaveLength(2); // the SDK's one and the probe: a 4xx is final
      expect(await rowsOf(projectId)).toEqual([]);
    });

    it('identify sends user_id on later events (across reloads) and calls /v1/identify; reset forgets it and starts a new anonymous id', async () => {
      const { key, projectId } = await newProject('identify');
      const { page } = await openPage(key, LOCAL);
      await page.goto(`${pages.origin}/account?esm`);
      const first = await storedAnonymousId(page);
      await page.evaluate(async () => {
        await window.analytics.identify('user-7', { plan: 'pro' });
        window.analytics.track('after_login');
        await window.analytics.flush();
      });
      expect(seen(key).filter((r) => r.path === '/v1/identify').map((r) => [r.status, r.body])).toEqual([[200, { anonymous_id: first, user_id: 'user-7', traits: { plan: 'pro' } }]]);
      await page.reload();
      expect(await storedAnonymousId(page)).toBe(first);
      await page.evaluate(async () => {
        window.analytics.track('before_logout');
        window.analytics.reset();
        window.analytics.track('after_logout');
        await window.analytics.flush();
      });
      const second = await storedAnonymousId(page);
      expect(second).toMatch(/^[0-9a-f-]{36}$/);
      expect(second).not.toBe(first);
      expect(await page.evaluate(() => localStorage.getItem('analytics_user_id'))).toBeNull();

      const rows = await rowsOf(projectId);
      const byName = (n: string) => rows.filter((r) => r.event_name === n).map((r) => [r.anonymous_id, r.user_id]);
      expect(byName('$pageview')).toEqual([
        [first, null],
        [first, 'user-7'],
      ]);
      expect(byName('$identify')).toEqual([[first, 'user-7']]);
      expect(rows.find((r) => r.event_name === '$identify')!.properties).toBe('{"plan":"pro"}');
      expect(byName('after_login')).toEqual([[first, 'user-7']]);
      expect(byName('before_logout')).toEqual([[first, 'user-7']]);
      expect(byName('after_logout')).toEqual([[second, null]]);
    });

    it('keeps a batch answered 5xx and retries it after the back-off; drops a batch answered 4xx', async () => {
      const statuses = [503, 202, 400];
      const posts: { status: number; ids: string[] }[] = [];
      const stub = await listen((req, res) => {
        const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization, content-type', 'access-control-max-age': '600' };
        if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end();
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          const status = statuses[posts.length] ?? 202;
          posts.push({ status, ids: (JSON.parse(body) as { events: WireEvent[] }).events.map((e) => e.event_id) });
          res.writeHead(status, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify(status < 300 ? { ok: true } : { error: 'x' }));
        });
      });
      extraServers.push(stub);
      const context = await browser.newContext();
      contexts.push(context);
      await context.addInitScript((endpoint) => (window.__analyticsConfig = { endpoint, key: 'pk_live_stub_secret', persistence: 'local' }), urlOf(stub));
      const page = await context.newPage();
      await freezeClock(page);
      await page.goto(`${pages.origin}/flaky`);
      await page.evaluate(() => window.analytics.flush());
      expect(posts).toEqual([{ status: 503, ids: [expect.any(String)] }]);
      await page.clock.runFor(1900);
      await sleep(200);
      expect(posts).toHaveLength(1);
      await page.clock.runFor(100);
      await until(() => posts.length === 2, 'the retry');
      expect(posts[1]!.ids).toEqual(posts[0]!.ids); // the same event, retried

      await page.evaluate(() => {
        window.analytics.track('rejected');
        return window.analytics.flush();
      });
      expect(posts).toHaveLength(3);
      await page.clock.runFor(120_000);
      await sleep(200);
      expect(posts).toHaveLength(3);
    });

    it('init refuses a non-pk_ key (a secret key must never reach a page)', async () => {
      const context = await browser.newContext(); // no __analyticsConfig: the page does not init by itself
      contexts.push(context);
      const page = await context.newPage();
      await page.goto(`${pages.origin}/plain`);
      const outcome = await page.evaluate(() => {
        try {
          window.analytics.init({ endpoint: 'http://127.0.0.1:9', key: 'sk_live_abc_secret' });
          return 'accepted';
        } catch (e) {
          return (e as Error).message;
        }
      });
      expect(outcome).toMatch(/pk_ key/);
      expect(await page.evaluate(() => localStorage.length)).toBe(0);
    });
  });

  describe('console warnings: what the site owner must fix, once per page load', () => {
    const warningsOf = (page: Page) => {
      const warnings: string[] = [];
      page.on('console', (m) => m.type() === 'warning' && m.text().startsWith('analytics:') && warnings.push(m.text()));
      return warnings;
    };
    const flushTwice = (page: Page) =>
      page.evaluate(async () => {
        await window.analytics.flush();
        window.analytics.track('again');
        await window.analytics.flush();
        await window.analytics.identify('user-1');
      });

    it('403 origin_not_allowed names the origin to add to allowed_origins, once per page load however many requests fail', async () => {
      const { key } = await newProject('warn-origin');
      const { page } = await openPage(key);
      const warnings = warningsOf(page);
      await freezeClock(page);
      await page.goto(`${foreign.origin}/elsewhere`);
      await flushTwice(page);
      const warning = `analytics: 403 origin_not_allowed: add the origin '${foreign.origin}' to the project's allowed_origins`;
      await until(() => warnings.length > 0, 'the warning');
      await sleep(200);
      expect(warnings).toEqual([warning]);
      expect(batches(key).map((b) => b.status)).toEqual([403, 403]);
      await page.reload();
      await flushTwice(page);
      await until(() => warnings.length > 1, 'the warning of the second page load');
      await sleep(200);
      expect(warnings).toEqual([warning, warning]);
    });

    it('401 invalid_api_key says the service has no such pk_ key, once', async () => {
      const { key } = await newProject('warn-key');
      const wrong = key.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'));
      const { page } = await openPage(wrong);
      const warnings = warningsOf(page);
      await freezeClock(page);
      await page.goto(`${pages.origin}/wrong-key`);
      await flushTwice(page);
      await until(() => warnings.length > 0, 'the warning');
      await sleep(200);
      expect(warnings).toEqual([`analytics: 401 invalid_api_key: no project of ${service.endpoint} has this pk_ key`]);
      expect(seen(wrong).map((r) => r.status)).toEqual([401, 401, 401]);
    });

    it('says nothing for every other answer: 400, other 401 and 403 codes, 429, 5xx, 2xx', async () => {
      const answers: Array<[number, object]> = [
        [400, { error: 'invalid_payload' }],
        [401, { error: 'malformed_api_key' }],
        [403, { error: 'insufficient_scope' }],
        [429, { error: 'rate_limited', retry_after_s: 1 }],
        [503, { error: 'upstream_failed' }],
        [202, { ok: true, count: 1 }],
      ];
      let posts = 0;
      const stub = await listen((req, res) => {
        const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization, content-type', 'access-control-max-age': '600' };
        if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end();
        req.resume().on('end', () => {
          const [status, body] = answers[posts++] ?? [202, { ok: true }];
          res.writeHead(status, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify(body));
        });
      });
      extraServers.push(stub);
      const context = await browser.newContext();
      contexts.push(context);
      await context.addInitScript((endpoint) => (window.__analyticsConfig = { endpoint, key: 'pk_live_stub_secret' }), urlOf(stub));
      const page = await context.newPage();
      const warnings = warningsOf(page);
      await freezeClock(page);
      await page.goto(`${pages.origin}/quiet`);
      for (let i = 0; i < answers.length; i++) {
        await page.evaluate(() => {
          window.analytics.track('one');
          return window.analytics.flush();
        });
      }
      await sleep(300);
      expect(posts).toBe(answers.length);
      expect(warnings).toEqual([]);
    });
  });

  describe('standard events (opt-in): $outbound, $download, $404', () => {
    const propsOf = (row: Record<string, string | null>) => JSON.parse(row.properties!) as Record<string, unknown>;
    const eventsStored = async (projectId: string) => (await rowsOf(projectId)).map((r) => [r.event_name, r.path, propsOf(r)['url'] ?? propsOf(r)['path'] ?? null]);

    it('a click on a link to another host sends $outbound with its URL at once (no timer runs), and it is stored although the click leaves the page', async () => {
      const { key, projectId } = await newProject('outbound');
      const { page } = await openPage(key, { options: { outboundLinks: true } });
      await freezeClock(page); // no timed flush: only the click's own send can deliver it before the navigation
      await page.goto(`${pages.origin}/article?links=${encodeURIComponent(foreign.origin)}`);
      await Promise.all([page.waitForURL(`${foreign.origin}/landing?from=page#top`), page.click('#out')]);
      await until(async () => (await rowsOf(projectId)).some((r) => r.event_name === '$outbound'), 'the $outbound row');
      const sent = sentEvents(key).find((e) => e.event === '$outbound')!;
      expect(sent).toMatchObject({ path: '/article', properties: { url: `${foreign.origin}/landing?from=page` } });
      expect(batches(key).find((b) => (b.body as { events: WireEvent[] }).events.some((e) => e.event === '$outbound'))).toMatchObject({ status: 202 });
      // The $pageview buffered before the click went in the same keepalive request.
      expect(await eventsStored(projectId)).toEqual(expect.arrayContaining([['$pageview', '/article', null], ['$outbound', '/article', `${foreign.origin}/landing?from=page`]]));
    });

    it('downloads: a listed extension (any case) or a download attribute sends $download with the file URL, before $outbound; links inside the site, mailto: and other clicks send nothing', async () => {
      const { key, projectId } = await newProject('downloads');
      const { page } = await openPage(key, { options: { outboundLinks: true, fileDownloads: true } });
      await freezeClock(page);
      const at = `${pages.origin}/files?links=${encodeURIComponent(foreign.origin)}`;
      // Clicks that navigate nowhere: each link's default action is prevented after the SDK's capture listener ran.
      await page.goto(at);
      await page.evaluate(() => document.addEventListener('click', (e) => e.preventDefault()));
      await page.click('#file');
      await page.click('#attr');
      await page.click('#inner'); // a click on an element inside the link
      await page.click('#inside');
      await page.click('#mail');
      await page.click('h1');
      await until(() => sentEvents(key).filter((e) => e.event !== '$pageview').length === 3, 'three events');
      await sleep(200);
      expect(sentEvents(key).filter((e) => e.event !== '$pageview').map((e) => [e.event, e.properties['url']])).toEqual([
        ['$download', `${pages.origin}/files/Report.PDF?v=2`],
        ['$download', `${pages.origin}/export/data`],
        ['$download', `${foreign.origin}/dist/tool.zip`],
      ]);
      await until(async () => (await rowsOf(projectId)).length === 4, 'four rows');
    });

    it('without the opt-ins a click on any link sends nothing', async () => {
      const { key } = await newProject('no-opt-in');
      const { page } = await openPage(key);
      await freezeClock(page);
      await page.goto(`${pages.origin}/plain?links=${encodeURIComponent(foreign.origin)}`);
      await page.evaluate(() => document.addEventListener('click', (e) => e.preventDefault()));
      for (const id of ['#out', '#file', '#attr', '#inner']) await page.click(id);
      await page.evaluate(() => window.analytics.flush());
      expect(sentEvents(key).map((e) => e.event)).toEqual(['$pageview']);
    });

    it('$404: notFound: true on init, or analytics.notFound() on a single-page app route; goals count it by its event name', async () => {
      const { key, projectId, readKey } = await newProject('not-found');
      const { page } = await openPage(key, { options: { notFound: true } });
      await page.goto(`${pages.origin}/missing-page`);
      await page.evaluate(() => {
        history.pushState({}, '', '/app/unknown-route');
        window.analytics.notFound();
        return window.analytics.flush();
      });
      expect(await eventsStored(projectId)).toEqual(expect.arrayContaining([['$404', '/missing-page', '/missing-page'], ['$404', '/app/unknown-route', '/app/unknown-route']]));
      const today = new Date().toISOString().slice(0, 10);
      const res = await fetch(`${service.endpoint}/v1/insights`, {
        method: 'POST',
        headers: { authorization: `Bearer ${readKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from: today, to: new Date(Date.now() + 86_400_000).toISOString().slice(0, 10), metrics: ['conversions'], goal: { event: '$404' }, include_bots: true /* headless Chromium is a bot */ }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { rows: Record<string, number>[] }).rows[0]).toMatchObject({ conversions: 1 }) // one browser, one visitor;
    });

    it('script tag data attributes: data-key and data-endpoint start the client; data-outbound, data-downloads="zip" and data-404 opt in', async () => {
      const { key, projectId } = await newProject('tag');
      const context = await browser.newContext();
      contexts.push(context);
      const page = await context.newPage();
      const tag = `${service.endpoint}|${key}|outbound,downloads=zip,404`;
      await page.goto(`${pages.origin}/gone?links=${encodeURIComponent(foreign.origin)}&tag=${encodeURIComponent(tag)}`);
      await page.evaluate(() => document.addEventListener('click', (e) => e.preventDefault()));
      await page.click('#file'); // a .pdf: not in data-downloads="zip", and on this host: nothing
      await page.click('#inner'); // tool.zip
      await page.click('#out');
      await until(async () => (await rowsOf(projectId)).length === 4, 'four rows');
      expect((await eventsStored(projectId)).map(([e]) => e).sort()).toEqual(['$404', '$download', '$outbound', '$pageview']);
      expect(sentEvents(key).find((e) => e.event === '$download')!.properties['url']).toBe(`${foreign.origin}/dist/tool.zip`);
    });
  });

  describe("persistence: 'none' (the default: nothing stored on the device)", () => {
    it('leaves no localStorage, sessionStorage, cookie or IndexedDB entry through init, events, identify, reset, SPA navigation and a reload; every event arrives', async () => {
      const { key, projectId } = await newProject('none-storage');
      const { context, page } = await openPage(key); // no persistence option: the default
      await page.goto(`${pages.origin}/home`);
      expect(await deviceStorage(page, context)).toEqual(NOTHING_STORED);
      await page.evaluate(async () => {
        const a = window.analytics;
        a.track('clicked_pricing', { plan: 'pro' });
        await a.identify('user-1', { plan: 'pro' });
        a.track('after_login');
        history.pushState({}, '', '/pricing');
        await a.flush();
      });
      expect(await deviceStorage(page, context)).toEqual(NOTHING_STORED);
      await page.reload();
      await page.evaluate(async () => {
        const a = window.analytics;
        a.track('second_load');
        await a.identify('user-1');
        a.track('identified_again');
        a.reset();
        a.track('after_reset');
        await a.flush();
      });
      expect(await deviceStorage(page, context)).toEqual(NOTHING_STORED);

      // On the wire: no anonymous_id anywhere; user_id only from identify to the end of that page (or reset).
      expect(sentEvents(key).map((e) => [e.event, e.path, e.user_id, 'anonymous_id' in e])).toEqual([
        ['$pageview', '/home', undefined, false],
        ['clicked_pricing', '/home', undefined, false],
        ['after_login', '/home', 'user-1', false],
        ['$pageview', '/pricing', 'user-1', false],
        ['$pageview', '/pricing', undefined, false],
        ['second_load', '/pricing', undefined, false],
        ['identified_again', '/pricing', 'user-1', false],
        ['after_reset', '/pricing', undefined, false],
      ]);
      expect(seen(key).filter((r) => r.path === '/v1/identify').map((r) => [r.status, r.body])).toEqual([
        [200, { user_id: 'user-1', traits: { plan: 'pro' } }],
        [200, { user_id: 'user-1' }],
      ]);

      // In the store: the events without ids and both $identify events carry the one daily visitor id of this browser.
      const rows = await rowsOf(projectId);
      const visitor = rows.find((r) => r.event_name === '$pageview' && r.path === '/home')!.anonymous_id!;
      expect(visitor).toMatch(/^d_[0-9a-f]{32}$/);
      const described = rows.map((r) => `${r.event_name} ${r.path} ${r.user_id} ${r.anonymous_id === visitor ? 'visitor' : JSON.stringify(r.anonymous_id)}`);
      expect(described.sort()).toEqual(
        [
          '$pageview /home null visitor',
          'clicked_pricing /home null visitor',
          '$identify null user-1 visitor',
          'after_login /home user-1 ""',
          '$pageview /pricing user-1 ""',
          '$pageview /pricing null visitor',
          'second_load /pricing null visitor',
          '$identify null user-1 visitor',
          'identified_again /pricing user-1 ""',
          'after_reset /pricing null visitor',
        ].sort(),
      );
    });

    it('two page loads of one browser on one day share one server-side anonymous_id, and stats metric=uniques counts 1', async () => {
      const { key, readKey, projectId } = await newProject('none-uniques');
      const { context, page } = await openPage(key);
      await page.goto(`${pages.origin}/first`);
      await page.evaluate(() => window.analytics.flush());
      await page.goto(`${pages.origin}/second`); // a new document: the SDK starts again with nothing stored
      await page.evaluate(() => window.analytics.flush());
      expect(await deviceStorage(page, context)).toEqual(NOTHING_STORED);

      const rows = await rowsOf(projectId);
      expect(rows.map((r) => r.path)).toEqual(['/first', '/second']);
      expect(rows[0]!.anonymous_id).toMatch(/^d_[0-9a-f]{32}$/);
      expect(rows[1]!.anonymous_id).toBe(rows[0]!.anonymous_id);

      const day = (offset: number) => new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + offset)).toISOString();
      const stats = async (metric: string) => {
        const res = await fetch(`${service.endpoint}/v1/stats?metric=${metric}&from=${day(-1)}&to=${day(2)}`, { headers: { authorization: `Bearer ${readKey}` } });
        return [res.status, await res.json()];
      };
      expect(await stats('count')).toEqual([200, { metric: 'count', rows: [{ value: 2 }] }]);
      expect(await stats('uniques')).toEqual([200, { metric: 'uniques', rows: [{ value: 1 }] }]);
    });
  });
});

describe('build', () => {
  it('the IIFE exposes window.analytics and is under 3 KB minified + gzipped', () => {
    const min = readFileSync(join(DIST, 'analytics.min.js'));
    expect(gzipSync(min, { level: 9 }).length).toBeLessThan(3 * 1024);
    expect(min.toString()).toMatch(/^("use strict";)?var analytics=/);
    expect(readFileSync(join(DIST, 'index.mjs'), 'utf8')).toMatch(/export \{[^}]*\binit\b/);
  });
});
