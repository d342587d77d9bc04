import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { Accounts, OIDC_HANDOFF_TTL_MS, type OidcSettings, PasswordHasher, bindingOf } from '@analytics/accounts';
import { KeyStore, migrateKeyStore } from '@analytics/auth';
import { keyStoreBackends } from '@analytics/auth/testing';
import { createLogger } from '@analytics/service-kit';
import { buildApp } from './app';
import { ADMIN_TOKEN, PASSWORD, type People, TEST_HASHER_PARAMS, setUpPeople, uniqueEmail } from './test-people';
import { type ContractCheck, TestOidcProvider, type TestOidcAccount, contractChecked, memoryPglitePort, pathOf } from '@analytics/testing';

/**
 * Single sign-on end to end against a real OpenID provider run in this process: oidc-provider (the certified Node
 * implementation) on 127.0.0.1, driven with plain HTTP (libs/testing's TestOidcProvider: its login interaction
 * answered by a minimal handler, its consent by a grant loaded for the client), and admin-api on a real key store (PGlite, and PostgreSQL when
 * TEST_DATABASE_URL is set). Nothing of ours is mocked.
 */

const PUBLIC_URL = 'http://localhost:3999';

const fragmentOf = (location: string) => new URLSearchParams(new URL(location).hash.slice(1));

describe.each(keyStoreBackends())('single sign-on against a real OpenID provider, on %s', (_name, open) => {
  const op = new TestOidcProvider(PUBLIC_URL);
  const CLIENT = op.client;
  let p: People;
  let settings: OidcSettings;
  let contract: ContractCheck;
  const domain = `sso-${Date.now().toString(36)}.example.com`;
  const account = (id: string, claims: Partial<TestOidcAccount> = {}) => {
    op.accounts.set(id, { email: `${id}@${domain}`, email_verified: true, name: `Person ${id}`, ...claims });
    return op.accounts.get(id)!.email;
  };
  const userCount = async () => Number((await p.db.query<{ n: string }>('SELECT count(*) AS n FROM users')).rows[0]!.n);

  /** POST /auth/oidc/start with a fresh secret, the provider's login, then our callback: its Location and the secret. */
  async function signIn(accountId: string) {
    const secret = randomBytes(32).toString('base64url');
    const start = await request(p.app).post('/auth/oidc/start').send({ binding: bindingOf(secret) });
    expect(start.status).toBe(200);
    const back = await op.authorize(start.body.url, accountId);
    const callback = await request(p.app).get(pathOf(back));
    expect(callback.status).toBe(302);
    return { location: String(callback.headers.location), secret, back, start: start.body.url as string };
  }

  beforeAll(async () => {
    await op.start();
    settings = op.settings({ name: 'Acme ID', org: 'Acme SSO', defaultRole: 'editor' as const, allowedDomains: [domain] });
    p = await setUpPeople(await open(), { oidc: settings, publicUrl: PUBLIC_URL });
    // Every JSON answer of this suite is checked against the route declarations (openapi-contract.spec.ts cannot reach
    // these answers without a provider).
    contract = contractChecked(p.app);
    p.app = contract.app;
  }, 180_000);
  afterAll(async () => {
    await p.db.close();
    await op.stop();
  });

  afterAll(() => {
    // the contract: every answer of the SSO routes above had a declared status and a body its schema accepts
    expect(contract.violations).toEqual([]);
    expect([...contract.checked.keys()]).toEqual(expect.arrayContaining(['POST /auth/oidc/start 200', 'POST /auth/oidc/complete 200', 'POST /auth/oidc/complete 401']));
  });

  it('asks the provider for the code flow with PKCE S256, state, nonce, scope "openid email profile" and our callback', async () => {
    const secret = randomBytes(32).toString('base64url');
    const res = await request(p.app).post('/auth/oidc/start').send({ binding: bindingOf(secret) });
    const url = new URL(res.body.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${op.issuer}/auth`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: CLIENT.client_id,
      redirect_uri: `${PUBLIC_URL}/auth/oidc/callback`,
      response_type: 'code',
      scope: 'openid email profile',
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: 'S256',
      state: expect.any(String),
      nonce: expect.any(String),
    });
    // Only hashes of the state are kept.
    const stored = JSON.stringify((await p.db.query('SELECT * FROM oidc_logins')).rows);
    expect(stored).not.toContain(url.searchParams.get('state'));
    const bad = await request(p.app).post('/auth/oidc/start').send({ binding: 'short' });
    expect([bad.status, bad.body.error]).toEqual([400, 'invalid_payload']);
  });

  it('creates the user on the first sign-in, in OIDC_ORG (created) with OIDC_DEFAULT_ROLE; the one-time code needs the secret; the token works on /auth/me', async () => {
    const email = account('ada');
    const before = await userCount();
    const { location, secret } = await signIn('ada');
    expect(location).toMatch(new RegExp(`^${PUBLIC_URL}/#sso=sso_[0-9A-Za-z]{43}$`));
    const code = fragmentOf(location).get('sso')!;
    expect(await userCount()).toBe(before + 1);

    const wrong = await request(p.app).post('/auth/oidc/complete').send({ code, secret: randomBytes(32).toString('base64url') });
    expect([wrong.status, wrong.body]).toEqual([401, { error: 'invalid_credentials' }]);
    const ok = await request(p.app).post('/auth/oidc/complete').set('user-agent', 'sso-test').send({ code, secret });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ token: expect.stringMatching(/^ses_/), expires_at: expect.any(String), user: { id: expect.any(String), email, name: 'Person ada' } });
    const again = await request(p.app).post('/auth/oidc/complete').send({ code, secret });
    expect([again.status, again.body]).toEqual([401, { error: 'invalid_credentials' }]);

    const me = await request(p.app).get('/auth/me').set('authorization', `Bearer ${ok.body.token}`);
    expect(me.status).toBe(200);
    expect(me.body.organizations).toEqual([{ id: expect.any(String), name: 'Acme SSO', role: 'editor' }]);
    // No password: a password sign-in fails as a wrong password does.
    const login = await request(p.app).post('/auth/login').send({ email, password: PASSWORD });
    expect([login.status, login.body]).toEqual([401, { error: 'invalid_credentials' }]);
    // Audited as a sign-in, in the organization it joined.
    const audit = await request(p.app).get(`/admin/orgs/${me.body.organizations[0].id}/audit`).set('authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(audit.body.entries.map((e: { action: string; details: unknown }) => [e.action, e.details])).toEqual(
      expect.arrayContaining([
        ['user.signed_in', { method: 'oidc' }],
        ['org.created', { oidc: true }],
      ]),
    );
  });

  it('signs the same user in again without creating another, and an existing password account signs in as itself', async () => {
    account('grace');
    const first = await signIn('grace');
    const firstUser = (await request(p.app).post('/auth/oidc/complete').send({ code: fragmentOf(first.location).get('sso'), secret: first.secret })).body.user;
    const count = await userCount();
    const second = await signIn('grace');
    const res = await request(p.app).post('/auth/oidc/complete').send({ code: fragmentOf(second.location).get('sso'), secret: second.secret });
    expect([res.status, res.body.user]).toEqual([200, firstUser]);
    expect(await userCount()).toBe(count);

    // A password account (a viewer of the setup's organization) keeps their memberships: no OIDC_ORG for an existing user.
    const member = await p.addMember(p.orgId, 'viewer', `member-${Date.now().toString(36)}@${domain}`);
    op.accounts.set('member', { email: member.email, email_verified: true, name: 'M' });
    const viewer = await signIn('member');
    const signed = await request(p.app).post('/auth/oidc/complete').send({ code: fragmentOf(viewer.location).get('sso'), secret: viewer.secret });
    expect(signed.body.user).toEqual(member);
    const me = await request(p.app).get('/auth/me').set('authorization', `Bearer ${signed.body.token}`);
    expect(me.body.organizations).toEqual([{ id: p.orgId, name: 'Default', role: 'viewer' }]);
  });

  it('refuses an email outside OIDC_ALLOWED_DOMAINS and an unverified email: #sso_error, nothing created', async () => {
    op.accounts.set('mallory', { email: `mallory-${Date.now().toString(36)}@elsewhere.example.org`, email_verified: true, name: 'M' });
    account('eve', { email_verified: false });
    const count = await userCount();
    expect((await signIn('mallory')).location).toBe(`${PUBLIC_URL}/#sso_error=domain_not_allowed`);
    expect((await signIn('eve')).location).toBe(`${PUBLIC_URL}/#sso_error=email_not_verified`);
    expect(await userCount()).toBe(count);
    expect((await p.db.query('SELECT 1 FROM oidc_logins WHERE handoff_hash IS NOT NULL AND user_id IS NULL')).rows).toEqual([]);
  });

  it('refuses an unknown or replayed state and a PKCE verifier that does not match (the provider refuses the code)', async () => {
    account('linus');
    // A state we never issued.
    const forged = await request(p.app).get('/auth/oidc/callback?code=abc&state=not-ours');
    expect([forged.status, forged.headers.location]).toEqual([302, `${PUBLIC_URL}/#sso_error=invalid_state`]);
    const none = await request(p.app).get('/auth/oidc/callback?code=abc');
    expect(none.headers.location).toBe(`${PUBLIC_URL}/#sso_error=invalid_state`);
    // The provider's answer replayed: its state was spent by the first callback.
    const first = await signIn('linus');
    expect(first.location).toMatch(/#sso=/);
    const replay = await request(p.app).get(pathOf(first.back));
    expect(replay.headers.location).toBe(`${PUBLIC_URL}/#sso_error=invalid_state`);
    // Another verifier than the challenge was made from: the token endpoint refuses (PKCE), no code is handed out.
    const secret = randomBytes(32).toString('base64url');
    const start = await request(p.app).post('/auth/oidc/start').send({ binding: bindingOf(secret) });
    // Its first character changed (to 'x', or 'y' where it was 'x': replaced by 'x' alone, 1 verifier in 64 stayed valid).
    await p.db.query("UPDATE oidc_logins SET code_verifier = (CASE WHEN left(code_verifier, 1) = 'x' THEN 'y' ELSE 'x' END) || substr(code_verifier, 2) WHERE state_used_at IS NULL");
    const back = await op.authorize(start.body.url, 'linus');
    const cb = await request(p.app).get(pathOf(back));
    expect(cb.headers.location).toBe(`${PUBLIC_URL}/#sso_error=sign_in_failed`);
    // The provider's own refusal (the user declined) comes back with its reason.
    const declined = await request(p.app).post('/auth/oidc/start').send({ binding: bindingOf(secret) });
    const state = new URL(declined.body.url).searchParams.get('state')!;
    const denied = await request(p.app).get(`/auth/oidc/callback?error=access_denied&state=${encodeURIComponent(state)}`);
    expect(denied.headers.location).toBe(`${PUBLIC_URL}/#sso_error=access_denied`);
  });

  it('spends the handoff code after 60 seconds', async () => {
    account('ken');
    const { location, secret } = await signIn('ken');
    p.clock.now += OIDC_HANDOFF_TTL_MS + 1;
    try {
      const late = await request(p.app).post('/auth/oidc/complete').send({ code: fragmentOf(location).get('sso'), secret });
      expect([late.status, late.body]).toEqual([401, { error: 'invalid_credentials' }]);
    } finally {
      p.clock.now -= OIDC_HANDOFF_TTL_MS + 1;
    }
  });

  it('GET /auth/config names the provider', async () => {
    const res = await request(p.app).get('/auth/config');
    expect([res.status, res.body]).toEqual([200, { setup_required: false, sso: { name: 'Acme ID' }, password_reset: false }]);
  });
});

describe('single sign-on, not configured or unreachable', () => {
  const open = async (oidc?: OidcSettings) => {
    const db = await memoryPglitePort();
    await migrateKeyStore(db);
    const keyStore = new KeyStore(db);
    const accounts = new Accounts({ db, keyStore, throttleSecret: 't', hasher: new PasswordHasher({ params: TEST_HASHER_PARAMS }), oidc, onError: () => {} });
    return { db, app: buildApp({ logger: createLogger({ level: 'silent' }), keyStore, accounts, adminToken: ADMIN_TOKEN }) };
  };

  it('answers 404 not_found on the three routes, and GET /auth/config says setup is required and offers no SSO', async () => {
    const { db, app } = await open();
    const secret = randomBytes(32).toString('base64url');
    for (const res of [
      await request(app).post('/auth/oidc/start').send({ binding: bindingOf(secret) }),
      await request(app).get('/auth/oidc/callback?code=a&state=b'),
      await request(app).post('/auth/oidc/complete').send({ code: 'sso_x', secret }),
    ]) {
      expect([res.status, res.body]).toEqual([404, { error: 'not_found' }]);
    }
    const config = await request(app).get('/auth/config');
    expect([config.status, config.body]).toEqual([200, { setup_required: true, sso: null, password_reset: false }]);
    await request(app).post('/auth/setup').set('authorization', `Bearer ${ADMIN_TOKEN}`).send({ email: uniqueEmail('first'), password: PASSWORD });
    expect((await request(app).get('/auth/config')).body.setup_required).toBe(false);
    await db.close();
  });

  it('answers 502 upstream_failed while the issuer does not answer, and tries again at the next start', async () => {
    const dead = createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const port = (dead.address() as AddressInfo).port;
    await new Promise((resolve) => dead.close(resolve));
    const { db, app } = await open({ issuer: `http://127.0.0.1:${port}`, clientId: 'c', clientSecret: 's', name: 'SSO', org: 'Default', defaultRole: 'viewer', allowedDomains: [], publicUrl: PUBLIC_URL });
    const binding = bindingOf(randomBytes(32).toString('base64url'));
    const res = await request(app).post('/auth/oidc/start').send({ binding });
    expect([res.status, res.body.error]).toEqual([502, 'upstream_failed']);
    expect((await request(app).post('/auth/oidc/start').send({ binding })).status).toBe(502);
    await db.close();
  });
});
