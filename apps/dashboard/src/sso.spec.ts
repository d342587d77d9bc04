import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { Accounts, PasswordHasher } from '@analytics/accounts';
import { openTestStores, silentLogger } from '@analytics/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the dashboard is tested against the whole service it ships with
import { buildApp } from '../../standalone/src/app';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the loopback helpers of the service tests
import { closeServer } from '../../standalone/src/test-service';
import { CHROMIUM, launchChromium, loaded, watch } from './test-support/page';

// "Sign in with <name>" in Chromium against a real OpenID provider run in this process (oidc-provider, the certified
// Node implementation; its login interaction answered by a minimal handler, as apps/admin-api/src/sso.spec.ts does),
// and the real service: the button, the provider, the callback, `/#sso=<code>` completed with this tab's secret.

const DIST = join(__dirname, '../../../dist/apps/dashboard');
const ADMIN_TOKEN = 'admin-token-sso';
const CLIENT = { client_id: 'analytics', client_secret: 'client-secret-0123456789-abcdefghij' };
const ACCOUNT = { sub: 'ada', email: 'ada@example.com', email_verified: true, name: 'Ada' };

interface OidcProviderLike {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  interactionFinished(req: IncomingMessage, res: ServerResponse, result: unknown, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
}
interface ProviderContext {
  oidc: { client: { clientId: string }; session: { accountId: string }; provider: { Grant: new (init: { clientId: string; accountId: string }) => { addOIDCScope(s: string): void; save(): Promise<string> } } };
}

let provider: Server;
let issuer: string;
let service: Server;
let base: string;
let stores: Awaited<ReturnType<typeof openTestStores>>;
let browser: Browser;

async function listenOn(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

CHROMIUM.describe('single sign-on in the dashboard (Chromium, a real OpenID provider)', () => {
  beforeAll(async () => {
    // The service's address first: the provider's redirect URI and PUBLIC_URL name it.
    service = createServer();
    base = `http://localhost:${await listenOn(service)}`;
    provider = createServer();
    issuer = `http://127.0.0.1:${await listenOn(provider)}`;
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
    // ESM only: a real dynamic import (jest.preset.cjs keeps import() native), by a name tsc does not resolve (no types).
    const specifier = 'oidc-provider';
    const { default: Provider } = (await import(specifier)) as { default: new (issuer: string, config: unknown) => OidcProviderLike };
    const op = new Provider(issuer, {
      clients: [{ ...CLIENT, redirect_uris: [`${base}/auth/oidc/callback`], token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'], response_types: ['code'] }],
      pkce: { required: () => true },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      features: { devInteractions: { enabled: false } },
      cookies: { keys: ['test-cookie-key-0123456789'] },
      ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
      findAccount: (_ctx: unknown, id: string) => (id === ACCOUNT.sub ? { accountId: id, claims: async () => ACCOUNT } : undefined),
      loadExistingGrant: async (ctx: ProviderContext) => {
        const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
        grant.addOIDCScope('openid email profile');
        await grant.save();
        return grant;
      },
    });
    warn.mockRestore();
    const handle = op.callback();
    provider.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (!req.url?.startsWith('/interaction/')) return handle(req, res);
      // Whoever opens the login prompt is Ada (the provider's own login page is not under test).
      op.interactionFinished(req, res, { login: { accountId: ACCOUNT.sub } }, { mergeWithLastSubmission: false }).catch((e: unknown) => {
        res.statusCode = 500;
        res.end(String(e));
      });
    });

    stores = await openTestStores();
    const accounts = new Accounts({
      db: stores.keyDb,
      keyStore: stores.keyStore,
      hasher: new PasswordHasher(),
      throttleSecret: 'sso-test',
      publicUrl: base,
      oidc: { issuer, clientId: CLIENT.client_id, clientSecret: CLIENT.client_secret, name: 'Test ID', org: 'Default', defaultRole: 'viewer', allowedDomains: [], publicUrl: base },
    });
    const app = buildApp({ stores, accounts, logger: silentLogger, trustProxy: true, dashboardDir: DIST, secrets: { ADMIN_TOKEN, IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal' } });
    service.on('request', app);
    // An owner exists (so the page offers sign-in, not the first run) and a project in Default for Ada to read.
    await stores.keyStore.createProject({ name: 'shop', allowed_origins: [] });
    const setup = await fetch(`${base}/auth/setup`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ email: 'owner@example.com', password: 'owner passphrase 1' }) });
    expect(setup.status).toBe(201);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    if (service) await closeServer(service);
    provider?.closeAllConnections();
    await new Promise((resolve) => provider?.close(resolve));
    await stores?.close();
  });

  it('"Sign in with Test ID" goes to the provider and back, and the dashboard reads without a key', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const problems = watch(page, base);
      await page.goto(`${base}/`);
      await page.waitForSelector('#login-page:not([hidden])');
      expect(await page.textContent('#sso-button')).toBe('Sign in with Test ID');
      await page.click('#sso-button');
      await loaded(page);
      expect(page.url()).toBe(`${base}/`);
      expect(await page.evaluate(() => [localStorage.getItem('analytics.session')?.slice(0, 4), sessionStorage.getItem('analytics.ssoSecret')])).toEqual(['ses_', null]);
      expect(await page.textContent('#project-title')).toContain('shop');
      // Only the provider's own pages were of another origin, and only it set cookies (on its origin).
      expect(problems.filter((p) => !p.includes(issuer))).toEqual([]);
      expect((await context.cookies(base)).length).toBe(0);
    } finally {
      await context.close();
    }
  });
});
