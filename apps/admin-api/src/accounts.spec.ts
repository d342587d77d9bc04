import request from 'supertest';
import { Accounts } from '@analytics/accounts';
import { Authenticator, KeyStore, migrateKeyStore, parseApiKey } from '@analytics/auth';
import { createLogger } from '@analytics/service-kit';
import { buildApp } from './app';
import { keyStoreBackends } from '@analytics/auth/testing';
import { PasswordHasher, type ScryptParams } from '@analytics/accounts';
import { DAY_MS } from '@analytics/schema';
import { ADMIN_TOKEN, PASSWORD, type People, TEST_HASHER_PARAMS, setUpPeople, uniqueEmail } from './test-people';
import { memoryPglitePort } from '@analytics/testing';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const operator = bearer(ADMIN_TOKEN);
const NEW_PASSWORD = 'another long passphrase';

/** Counts scrypt runs: a wrong password and an unknown email must cost the same hashing. */
class CountingHasher extends PasswordHasher {
  runs = 0;
  protected override derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
    this.runs++;
    return super.derive(password, salt, params);
  }
}

describe('setup', () => {
  it('needs ADMIN_TOKEN, makes the first user owner of "Default" holding every existing project, then answers 409 already_set_up', async () => {
    const db = await memoryPglitePort();
    const p = await setUpPeople(db);
    // setUpPeople created a project before setup and set up through the API: the project now belongs to Default.
    expect((await p.keyStore.getProject(p.projectId))!.org_id).toBe(p.orgId);
    const again = await request(p.app).post('/auth/setup').set(operator).send({ email: uniqueEmail('second'), password: PASSWORD });
    expect([again.status, again.body]).toEqual([409, { error: 'already_set_up' }]);
    const without = await request(p.app).post('/auth/setup').send({ email: uniqueEmail('x'), password: PASSWORD });
    expect([without.status, without.body]).toEqual([401, { error: 'invalid_session' }]);
    const me = await request(p.app).get('/auth/me').set(bearer(await p.tokenOf('owner')));
    expect(me.body).toEqual({ user: p.users.owner, organizations: [{ id: p.orgId, name: 'Default', role: 'owner' }] });
    await db.close();
  });

  it('answers 201 { user, token, expires_at } with a ses_ token (never an API key) and refuses passwords outside 10..256', async () => {
    const db = await memoryPglitePort();
    await migrateKeyStore(db);
    const keyStore = new KeyStore(db);
    const accounts = new Accounts({ db, keyStore, throttleSecret: 't', hasher: new PasswordHasher({ params: TEST_HASHER_PARAMS }) });
    const app = buildApp({ logger: createLogger({ level: 'silent' }), keyStore, accounts, adminToken: ADMIN_TOKEN });
    for (const password of ['nine char', 'x'.repeat(257)]) {
      const res = await request(app).post('/auth/setup').set(operator).send({ email: 'first@example.com', password });
      expect([res.status, res.body.error, Object.keys(res.body.details.fieldErrors)]).toEqual([400, 'invalid_payload', ['password']]);
    }
    const res = await request(app).post('/auth/setup').set(operator).send({ email: ' First@Example.com ', password: 'x'.repeat(256) });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ user: { id: expect.any(String), email: 'first@example.com', name: null }, token: expect.stringMatching(/^ses_/), expires_at: expect.any(String) });
    expect(parseApiKey(res.body.token)).toBeNull();
    const stored = JSON.stringify((await db.query('SELECT * FROM sessions')).rows);
    expect(stored).not.toContain(res.body.token.split('_')[2]);
    expect((await db.query<{ h: string }>('SELECT password_hash AS h FROM users')).rows[0]!.h).toMatch(/^scrypt\$10\$8\$1\$/);
    await db.close();
  });
});

describe.each(keyStoreBackends())('sign-in on %s', (_name, open) => {
  let p: People;
  let hasher: CountingHasher;
  beforeAll(async () => {
    hasher = new CountingHasher({ params: TEST_HASHER_PARAMS });
    p = await setUpPeople(await open(), { hasher, trustProxy: true });
  }, 180_000);
  afterAll(() => p.db.close());
  const login = (email: string, password: string, address = '203.0.113.1') => request(p.app).post('/auth/login').set('x-forwarded-for', address).send({ email, password });

  it('answers 200 { token, expires_at, user } and a wrong password or an unknown email the same 401 invalid_credentials, with the same hashing', async () => {
    const ok = await login(p.users.editor.email.toUpperCase(), PASSWORD);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ token: expect.stringMatching(/^ses_[0-9A-Za-z]{22}_[0-9A-Za-z]{43}$/), expires_at: new Date(p.clock.now + 14 * DAY_MS).toISOString(), user: p.users.editor });
    // The dummy hash an unknown email is checked against is made once, at the first one.
    await login(uniqueEmail('first-unknown'), 'not the password', '203.0.113.3');
    const before = hasher.runs;
    const wrong = await login(p.users.editor.email, 'not the password', '203.0.113.2');
    const afterWrong = hasher.runs;
    const unknown = await login(uniqueEmail('nobody'), 'not the password', '203.0.113.2');
    expect([wrong.status, wrong.body]).toEqual([401, { error: 'invalid_credentials' }]);
    expect([unknown.status, unknown.body, unknown.headers['content-length']]).toEqual([401, { error: 'invalid_credentials' }, wrong.headers['content-length']]);
    expect([afterWrong - before, hasher.runs - afterWrong]).toEqual([1, 1]);
  });

  it('answers CORS preflights on /auth/* as on /admin/* and never sets a cookie', async () => {
    const pre = await request(p.app).options('/auth/login').set('origin', 'https://dashboard.example').set('access-control-request-method', 'POST').set('access-control-request-headers', 'authorization,content-type');
    expect([pre.status, pre.headers['access-control-allow-origin'], pre.headers['access-control-allow-headers']]).toEqual([204, '*', expect.stringMatching(/authorization/i)]);
    const res = await login(p.users.viewer.email, PASSWORD, '203.0.113.40').set('origin', 'https://dashboard.example');
    expect([res.status, res.headers['access-control-allow-origin'], res.headers['set-cookie']]).toEqual([200, '*', undefined]);
  });

  it('refuses the 11th attempt within 15 minutes on one account with 429 rate_limited and Retry-After, even with the right password, then lets it in', async () => {
    const user = await p.addMember(p.orgId, 'viewer');
    for (let i = 0; i < 10; i++) expect((await login(user.email, `wrong password ${i}`, `198.51.100.${i}`)).status).toBe(401);
    const refused = await login(user.email, PASSWORD, '198.51.100.200');
    expect([refused.status, refused.body.error]).toEqual([429, 'rate_limited']);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(800);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(900);
    p.clock.now += 15 * 60_000 + 1;
    expect((await login(user.email, PASSWORD, '198.51.100.201')).status).toBe(200);
  });

  it('refuses the 11th failure from one client address over any accounts, and not another address', async () => {
    for (let i = 0; i < 10; i++) expect((await login(uniqueEmail(`spray${i}`), 'wrong password', '192.0.2.7')).status).toBe(401);
    const refused = await login(p.users.admin.email, PASSWORD, '192.0.2.7');
    expect([refused.status, refused.body.error, Number(refused.headers['retry-after']) > 0]).toEqual([429, 'rate_limited', true]);
    expect((await login(p.users.admin.email, PASSWORD, '192.0.2.8')).status).toBe(200);
  });

  it('ends a session idle for SESSION_IDLE_DAYS and any session at SESSION_MAX_DAYS (injectable clock)', async () => {
    const idle = (await login(p.users.viewer.email, PASSWORD, '203.0.113.50')).body.token as string;
    const used = (await login(p.users.viewer.email, PASSWORD, '203.0.113.50')).body.token as string;
    const me = (token: string) => request(p.app).get('/auth/me').set(bearer(token));
    for (let day = 0; day < 9; day++) {
      p.clock.now += 10 * DAY_MS;
      const res = await me(used);
      // Used every 10 days: alive until the absolute 90 days, then refused.
      expect([day, res.status]).toEqual([day, day < 8 ? 200 : 401]);
      if (day === 1) expect([(await me(idle)).status, (await me(idle)).body]).toEqual([401, { error: 'invalid_session' }]);
    }
  });

  it('logs out, lists and ends sessions; a password change ends every other session and keeps this one', async () => {
    const a = (await login(p.users.editor.email, PASSWORD, '203.0.113.60')).body.token as string;
    const b = (await login(p.users.editor.email, PASSWORD, '203.0.113.60')).body.token as string;
    const c = (await login(p.users.editor.email, PASSWORD, '203.0.113.60')).body.token as string;
    const list = await request(p.app).get('/auth/sessions').set(bearer(a));
    expect(list.body.sessions.filter((s: { current: boolean }) => s.current)).toEqual([expect.objectContaining({ id: a.split('_')[1], user_agent: null })]);
    expect((await request(p.app).delete(`/auth/sessions/${b.split('_')[1]}`).set(bearer(a))).status).toBe(204);
    expect((await request(p.app).get('/auth/me').set(bearer(b))).status).toBe(401);
    expect((await request(p.app).delete('/auth/sessions/unknown').set(bearer(a))).body).toEqual({ error: 'not_found' });
    const wrong = await request(p.app).post('/auth/password').set(bearer(a)).set('x-forwarded-for', '203.0.113.61').send({ current_password: 'not it at all', new_password: NEW_PASSWORD });
    expect([wrong.status, wrong.body]).toEqual([401, { error: 'invalid_credentials' }]);
    expect((await request(p.app).post('/auth/password').set(bearer(a)).send({ current_password: PASSWORD, new_password: NEW_PASSWORD })).status).toBe(204);
    expect((await request(p.app).get('/auth/me').set(bearer(c))).status).toBe(401);
    expect((await request(p.app).get('/auth/me').set(bearer(a))).status).toBe(200);
    expect((await login(p.users.editor.email, PASSWORD, '203.0.113.62')).status).toBe(401);
    expect((await login(p.users.editor.email, NEW_PASSWORD, '203.0.113.63')).status).toBe(200);
    expect((await request(p.app).post('/auth/logout').set(bearer(a))).status).toBe(204);
    expect((await request(p.app).get('/auth/me').set(bearer(a))).body).toEqual({ error: 'invalid_session' });
    await p.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [p.users.editor.id, await hasher.hash(PASSWORD)]);
  });
});

describe.each(keyStoreBackends())('organizations, invitations and members on %s', (_name, open) => {
  let p: People;
  beforeAll(async () => {
    p = await setUpPeople(await open());
  }, 180_000);
  afterAll(() => p.db.close());

  it('invites for 7 days, one use: a new user sets a password and joins; reuse and expiry are 400 invalid_token', async () => {
    const owner = bearer(await p.tokenOf('owner'));
    const email = uniqueEmail('new');
    const created = await request(p.app).post(`/admin/orgs/${p.orgId}/invitations`).set(owner).set('host', 'analytics.example.com').send({ email: email.toUpperCase(), role: 'editor' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      invitation: { id: expect.any(String), email, role: 'editor', expires_at: new Date(p.clock.now + 7 * DAY_MS).toISOString() },
      token: expect.stringMatching(/^inv_/),
      accept_url: `http://analytics.example.com/#invitation=${created.body.token}`,
    });
    expect((await request(p.app).get(`/admin/orgs/${p.orgId}/invitations`).set(owner)).body.invitations.map((i: { email: string }) => i.email)).toContain(email);
    const noPassword = await request(p.app).post('/auth/invitations/accept').send({ token: created.body.token });
    expect([noPassword.status, noPassword.body.error, Object.keys(noPassword.body.details.fieldErrors)]).toEqual([400, 'invalid_payload', ['password']]);
    const accepted = await request(p.app).post('/auth/invitations/accept').send({ token: created.body.token, password: PASSWORD, name: 'New' });
    expect(accepted.status).toBe(200);
    expect(accepted.body.user).toEqual({ id: expect.any(String), email, name: 'New' });
    expect((await request(p.app).get('/auth/me').set(bearer(accepted.body.token))).body.organizations).toEqual([{ id: p.orgId, name: 'Default', role: 'editor' }]);
    const reused = await request(p.app).post('/auth/invitations/accept').send({ token: created.body.token, password: PASSWORD });
    expect([reused.status, reused.body]).toEqual([400, { error: 'invalid_token', details: { reason: 'used' } }]);
    expect((await request(p.app).post(`/admin/orgs/${p.orgId}/invitations`).set(owner).send({ email, role: 'viewer' })).body).toEqual({ error: 'already_member' });

    const late = await request(p.app).post(`/admin/orgs/${p.orgId}/invitations`).set(owner).send({ email: uniqueEmail('late'), role: 'viewer' });
    p.clock.now += 7 * DAY_MS + 1;
    const expired = await request(p.app).post('/auth/invitations/accept').send({ token: late.body.token, password: PASSWORD });
    expect([expired.status, expired.body]).toEqual([400, { error: 'invalid_token', details: { reason: 'expired' } }]);
  });

  it('lets an existing user join signed in as the invited email (keeping the token) or with their password', async () => {
    const admin = bearer(await p.tokenOf('admin'));
    const other = (await request(p.app).post('/admin/orgs').set(admin).send({ name: 'Second' })).body.org.id as string;
    const first = await request(p.app).post(`/admin/orgs/${other}/invitations`).set(admin).send({ email: p.users.viewer.email, role: 'viewer' });
    const viewerToken = await p.tokenOf('viewer');
    const joined = await request(p.app).post('/auth/invitations/accept').set(bearer(viewerToken)).send({ token: first.body.token });
    expect([joined.status, joined.body.token, joined.body.user]).toEqual([200, viewerToken, p.users.viewer]);
    const second = await request(p.app).post(`/admin/orgs/${other}/invitations`).set(admin).send({ email: p.users.editor.email, role: 'admin' });
    const wrong = await request(p.app).post('/auth/invitations/accept').send({ token: second.body.token, password: 'not the password' });
    expect([wrong.status, wrong.body]).toEqual([401, { error: 'invalid_credentials' }]);
    const withPassword = await request(p.app).post('/auth/invitations/accept').send({ token: second.body.token, password: PASSWORD });
    expect([withPassword.status, withPassword.body.user]).toEqual([200, p.users.editor]);
    const members = (await request(p.app).get(`/admin/orgs/${other}/members`).set(admin)).body.members.map((m: { email: string; role: string }) => [m.email, m.role]);
    expect(members).toEqual(expect.arrayContaining([[p.users.admin.email, 'owner'], [p.users.viewer.email, 'viewer'], [p.users.editor.email, 'admin']]));
  });

  it('keeps the last owner: neither demoted nor removed (409 last_owner); owners are an owner\'s to change', async () => {
    const owner = bearer(await p.tokenOf('owner'));
    const admin = bearer(await p.tokenOf('admin'));
    const ownerPath = `/admin/orgs/${p.orgId}/members/${p.users.owner.id}`;
    expect((await request(p.app).patch(ownerPath).set(owner).send({ role: 'admin' })).body).toEqual({ error: 'last_owner' });
    expect((await request(p.app).delete(ownerPath).set(owner)).body).toEqual({ error: 'last_owner' });
    expect((await request(p.app).delete(ownerPath).set(operator)).body).toEqual({ error: 'last_owner' });
    expect((await request(p.app).patch(ownerPath).set(admin).send({ role: 'viewer' })).body).toEqual({ error: 'insufficient_role', details: { required: 'owner', role: 'admin' } });
    expect((await request(p.app).post(`/admin/orgs/${p.orgId}/invitations`).set(admin).send({ email: uniqueEmail('o'), role: 'owner' })).body).toEqual({
      error: 'insufficient_role',
      details: { required: 'owner', role: 'admin' },
    });
    const second = await p.addMember(p.orgId, 'viewer');
    const promoted = await request(p.app).patch(`/admin/orgs/${p.orgId}/members/${second.id}`).set(owner).send({ role: 'owner' });
    expect([promoted.status, promoted.body.member]).toEqual([200, expect.objectContaining({ user_id: second.id, role: 'owner' })]);
    expect((await request(p.app).delete(`/admin/orgs/${p.orgId}/members/${second.id}`).set(owner)).status).toBe(204);
    expect((await request(p.app).delete(`/admin/orgs/${p.orgId}/members/${second.id}`).set(owner)).body).toEqual({ error: 'not_found' });
  });

  it('refuses to delete an organization holding projects (409 not_empty), deletes it once empty', async () => {
    const owner = bearer(await p.tokenOf('owner'));
    const org = (await request(p.app).post('/admin/orgs').set(owner).send({ name: 'Temporary' })).body.org.id as string;
    const project = await request(p.app).post('/admin/projects').set(owner).send({ name: 'inside', org_id: org });
    expect([project.status, project.body.project.org_id]).toEqual([201, org]);
    expect((await request(p.app).delete(`/admin/orgs/${org}`).set(owner)).body).toEqual({ error: 'not_empty', details: { projects: 1 } });
    expect((await request(p.app).delete(`/admin/projects/${project.body.project.id}`).set(owner)).status).toBe(204);
    expect((await request(p.app).delete(`/admin/orgs/${org}`).set(owner)).status).toBe(204);
    expect((await request(p.app).get('/admin/orgs').set(owner)).body.orgs.map((o: { id: string }) => o.id)).not.toContain(org);
  });

  it('lists the caller\'s projects with org_id, a project\'s keys without secrets, and deletes a project with its keys, its events queued', async () => {
    const viewer = bearer(await p.tokenOf('viewer'));
    const outsider = bearer(await p.tokenOf('outsider'));
    const admin = bearer(await p.tokenOf('admin'));
    expect((await request(p.app).get('/admin/projects').set(viewer)).body.projects.every((x: { org_id: string }) => x.org_id === p.orgId)).toBe(true);
    expect((await request(p.app).get('/admin/projects').set(outsider)).body.projects).toEqual([]);
    const created = await request(p.app).post('/admin/projects').set(admin).send({ name: 'doomed', org_id: p.orgId });
    const keys = await request(p.app).get(`/admin/projects/${created.body.project.id}/keys`).set(admin);
    const byKind = [...keys.body.keys].sort((a: { kind: string }, b: { kind: string }) => a.kind.localeCompare(b.kind));
    expect(byKind).toEqual(['pk', 'rk', 'sk'].map((kind) => ({ prefix: expect.any(String), kind, env: 'live', created_at: expect.any(String), last_used_at: null, revoked_at: null })));
    for (const secret of Object.values(created.body.keys as Record<string, string>)) expect(JSON.stringify(keys.body)).not.toContain(secret.split('_')[3]);
    const auth = new Authenticator(p.keyStore);
    expect((await auth.resolve(`Bearer ${created.body.keys.sk}`)).projectId).toBe(created.body.project.id);
    expect((await request(p.app).delete(`/admin/projects/${created.body.project.id}`).set(admin)).status).toBe(204);
    await expect(new Authenticator(p.keyStore).resolve(`Bearer ${created.body.keys.sk}`)).rejects.toMatchObject({ code: 'invalid_api_key' });
    expect(await p.keyStore.pendingProjectDeletions()).toContain(created.body.project.id);
    expect((await request(p.app).get(`/admin/projects/${created.body.project.id}`).set(admin)).status).toBe(404);
  });

  it('writes the audit log: sign-ins and failures, invitations, role changes, removals, projects and keys; no secret, no address', async () => {
    const owner = await p.tokenOf('owner');
    const start = p.clock.now;
    const member = await p.addMember(p.orgId, 'viewer');
    expect((await request(p.app).post('/auth/login').send({ email: member.email, password: 'wrong wrong wrong' })).status).toBe(401);
    const signedIn = await request(p.app).post('/auth/login').send({ email: member.email, password: PASSWORD });
    await request(p.app).patch(`/admin/orgs/${p.orgId}/members/${member.id}`).set(bearer(owner)).send({ role: 'editor' });
    const key = await request(p.app).post(`/admin/projects/${p.projectId}/keys`).set(bearer(owner)).send({ kind: 'rk' });
    await request(p.app).delete(`/admin/keys/${key.body.prefix}`).set(bearer(owner));
    await request(p.app).delete(`/admin/orgs/${p.orgId}/members/${member.id}`).set(bearer(owner));
    // The failed sign-in's entry is written after its answer.
    await new Promise((r) => setTimeout(r, 200));
    const res = await request(p.app).get(`/admin/orgs/${p.orgId}/audit`).query({ from: new Date(start).toISOString(), limit: 50 }).set(bearer(owner));
    expect(res.status).toBe(200);
    const actions = res.body.entries.map((e: { action: string }) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['user.sign_in_failed', 'user.signed_in', 'member.role_changed', 'key.created', 'key.revoked', 'member.removed']));
    expect(res.body.entries[0]).toEqual({ at: expect.any(String), actor: { type: 'user', id: p.users.owner.id, name: p.users.owner.email }, action: 'member.removed', target: { type: 'user', id: member.id, name: member.email }, details: { role: 'editor' } });
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(signedIn.body.token.split('_')[2]);
    expect(text).not.toContain(key.body.key.split('_')[3]);
    expect(text).not.toMatch(/127\.0\.0\.1|::1|ffff/);
    expect((await request(p.app).get(`/admin/orgs/${p.orgId}/audit`).query({ to: new Date(start).toISOString(), limit: 1 }).set(bearer(owner))).body.entries.length).toBeLessThanOrEqual(1);
    expect((await request(p.app).get(`/admin/orgs/${p.orgId}/audit`).query({ from: 'yesterday' }).set(bearer(owner))).body.error).toBe('invalid_params');
  });

  it('purges audit entries after 400 days, and ended or expired sessions, spent invitations and reset links a day after they end', async () => {
    const owner = await p.tokenOf('owner');
    await request(p.app).post(`/admin/orgs/${p.orgId}/invitations`).set(bearer(owner)).send({ email: uniqueEmail('purged'), role: 'viewer' });
    await p.accounts.signIn.resetLink(p.users.viewer.email, 'http://localhost');
    const count = async (table: string) => Number((await p.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
    expect(await count('audit_log')).toBeGreaterThan(0);
    p.clock.now += 399 * DAY_MS;
    await p.accounts.purge();
    expect(await count('audit_log')).toBeGreaterThan(0);
    expect([await count('invitations'), await count('password_resets'), await count('sessions')]).toEqual([0, 0, 0]);
    p.clock.now += 2 * DAY_MS;
    await p.accounts.purge();
    expect(await count('audit_log')).toBe(0);
  });
});
