import request from 'supertest';
import { Authenticator, InvalidationBus, KeyStore, SavedDefinitions } from '@analytics/auth';
import { keyStoreBackends } from '@analytics/auth/testing';
import { ADMIN_TOKEN, type People, setUpPeople } from './test-people';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const tokenOfUrl = (url: string) => url.split('/share/')[1]!;
const PASSWORD = 'a share password';

/**
 * Share links (docs/saved-and-shared.md, "Share links and embeds") through admin-api: who may make, list and revoke
 * them, what a link's body may hold, the unlock of a password link and its throttle, and that revoking or expiry ends
 * every credential of a link on an instance that had it cached (the read API's authenticator, fed by the bus).
 */
describe.each(keyStoreBackends())('share links on %s', (_name, open) => {
  let p: People;
  let reader: Authenticator;
  beforeAll(async () => {
    const db = await open();
    const clock = { now: Date.now() };
    reader = new Authenticator(new KeyStore(db), { clock: () => clock.now });
    p = await setUpPeople(db, { bus: new InvalidationBus(reader), clock, publicUrl: 'https://analytics.example.com', trustProxy: ['loopback'] });
  }, 180_000);
  afterAll(() => p.db.close());

  const create = async (body: object, who: Parameters<People['tokenOf']>[0] | 'operator' = 'editor') =>
    request(p.app)
      .post(`/admin/projects/${p.projectId}/shares`)
      .set(bearer(who === 'operator' ? ADMIN_TOKEN : await p.tokenOf(who)))
      .send(body);

  it('an editor (or the operator) makes a link; a viewer cannot; a member of another organization gets 404', async () => {
    expect((await create({ name: 'x' }, 'viewer')).body).toEqual({ error: 'insufficient_role', details: { required: 'editor', role: 'viewer' } });
    expect((await create({ name: 'x' }, 'outsider')).body).toEqual({ error: 'not_found' });
    for (const who of ['editor', 'admin', 'owner', 'operator'] as const) {
      const res = await create({ name: `by ${who}` }, who);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        share: { id: expect.stringMatching(/^[0-9A-Za-z]{12}$/), name: `by ${who}`, expires_at: null, has_password: false, segment: null, embed_origins: [], created_at: expect.any(String) },
        url: expect.stringMatching(/^https:\/\/analytics\.example\.com\/share\/shr_[0-9A-Za-z]{12}_[0-9A-Za-z]{32}$/),
      });
      expect(tokenOfUrl(res.body.url).split('_')[1]).toBe(res.body.share.id);
    }
    // The list: editors and up, never a token; the viewer and the stranger are refused as for any editor route.
    const list = await request(p.app).get(`/admin/projects/${p.projectId}/shares`).set(bearer(await p.tokenOf('editor')));
    expect(list.status).toBe(200);
    expect(list.body.shares.map((s: { name: string }) => s.name)).toEqual(expect.arrayContaining(['by editor', 'by admin', 'by owner', 'by operator']));
    expect(JSON.stringify(list.body)).not.toContain('shr_');
    expect((await request(p.app).get(`/admin/projects/${p.projectId}/shares`).set(bearer(await p.tokenOf('viewer')))).status).toBe(403);
    expect((await request(p.app).get(`/admin/projects/${p.projectId}/shares`).set(bearer(await p.tokenOf('outsider')))).status).toBe(404);
  });

  it('refuses a past expiry, an unknown segment and origins that are not origins, with the field named', async () => {
    const past = await create({ expires_at: new Date(p.clock.now - 1000).toISOString() });
    expect(past.status).toBe(400);
    expect(past.body.details.fieldErrors.expires_at).toEqual(['must be in the future']);
    const unknown = await create({ segment: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details.fieldErrors.segment).toEqual(['no saved segment of this project has this id']);
    for (const origin of ['*', 'https://example.com/path', 'ftp://example.com', 'https://*.com']) {
      const res = await create({ embed_origins: [origin] });
      expect({ origin, status: res.status, error: res.body.error }).toEqual({ origin, status: 400, error: 'invalid_payload' });
    }
    expect((await create({ password: 'short' })).status).toBe(400);
    const ok = await create({ embed_origins: ['HTTPS://Agency.Example.com:443', 'http://localhost:8080', 'https://*.example.org'], expires_at: new Date(p.clock.now + 86_400_000).toISOString() });
    expect(ok.status).toBe(201);
    expect(ok.body.share.embed_origins).toEqual(['https://agency.example.com', 'http://localhost:8080', 'https://*.example.org']);
  });

  it('keeps a snapshot of the segment: a later edit of the segment leaves the link as it was made', async () => {
    const saved = new SavedDefinitions(p.db);
    const segment = (await saved.create(p.projectId, 'segment', { name: 'France', definition: { filters: [['is', 'country', ['FR']]] } }))!;
    const res = await create({ segment: segment.id });
    expect(res.status).toBe(201);
    expect(res.body.share.segment).toEqual({ id: segment.id, name: 'France', filters: [['is', 'country', ['FR']]] });
    await saved.update(p.projectId, 'segment', segment.id, { name: 'Germany', definition: { filters: [['is', 'country', ['DE']]] } });
    const ctx = await reader.authenticate(`Bearer ${tokenOfUrl(res.body.url)}`, 'read', undefined, true);
    expect(ctx.share).toEqual({ id: res.body.share.id, segment: { id: segment.id, name: 'France', filters: [['is', 'country', ['FR']]] } });
    // Another project's segment is unknown here.
    const other = await p.keyStore.createProject({ name: 'other', org_id: p.orgId });
    const foreign = (await saved.create(other.project.id, 'segment', { name: 'Elsewhere', definition: { filters: [['is', 'country', ['GB']]] } }))!;
    expect((await create({ segment: foreign.id })).status).toBe(400);
  });

  it('a link without a password: its token reads at once, only the routes that take it, and unlock names the project', async () => {
    const res = await create({ name: 'open' });
    const token = tokenOfUrl(res.body.url);
    const ctx = await reader.authenticate(`Bearer ${token}`, 'read', undefined, true);
    expect(ctx).toMatchObject({ projectId: p.projectId, kind: 'rk', share: { id: res.body.share.id, segment: null } });
    // A read route not declared for shares refuses it even with its own access.
    await expect(reader.authenticate(`Bearer ${token}`, 'read')).rejects.toMatchObject({ code: 'insufficient_scope', extra: { required: 'read', got: 'share' } });
    // Its rk_ form is not a key.
    await expect(reader.authenticate(`Bearer rk_live_${token.slice(4)}`, 'read', undefined, true)).rejects.toMatchObject({ code: 'invalid_api_key' });
    const unlock = await request(p.app).post('/v1/share/unlock').send({ token });
    expect(unlock.status).toBe(200);
    expect(unlock.body).toEqual({ token, expires_at: null, project: { id: p.projectId, name: 'before setup' }, share: { id: res.body.share.id, name: 'open', expires_at: null, has_password: false, segment: null, embed_origins: [] } });
    // The project's key list does not show the links' credentials.
    const keys = await request(p.app).get(`/admin/projects/${p.projectId}/keys`).set(bearer(ADMIN_TOKEN));
    expect(keys.body.keys.map((k: { prefix: string }) => k.prefix)).not.toContain(res.body.share.id);
    // A token with a wrong secret, or of no link, is 404.
    expect((await request(p.app).post('/v1/share/unlock').send({ token: `${token.slice(0, -1)}${token.endsWith('x') ? 'y' : 'x'}` })).body).toEqual({ error: 'not_found' });
    expect((await request(p.app).post('/v1/share/unlock').send({ token: 'shr_nope_nope' })).body).toEqual({ error: 'not_found' });
    expect((await request(p.app).post('/v1/share/unlock').send({ token: 'not a token' })).status).toBe(404);
  });

  it('a password link: the token alone reads nothing; a wrong password is 401, throttled to 429 per link; the right one gives an hour', async () => {
    const res = await create({ name: 'locked', password: PASSWORD });
    expect(res.body.share.has_password).toBe(true);
    const token = tokenOfUrl(res.body.url);
    await expect(reader.authenticate(`Bearer ${token}`, 'read', undefined, true)).rejects.toMatchObject({ code: 'invalid_api_key' });
    const unlock = (body: object, ip = '203.0.113.7') => request(p.app).post('/v1/share/unlock').set('x-forwarded-for', ip).send({ token, ...body });
    expect((await unlock({})).body).toEqual({ error: 'invalid_credentials', details: { reason: 'password_required' } });
    expect((await unlock({ password: 'not the password' })).body).toEqual({ error: 'invalid_credentials', details: { reason: 'wrong_password' } });
    const right = await unlock({ password: PASSWORD });
    expect(right.status).toBe(200);
    expect(right.body).toMatchObject({ token: expect.stringMatching(/^shr_[0-9A-Za-z]{12}_[0-9A-Za-z]{32}$/), expires_at: new Date(p.clock.now + 3_600_000).toISOString(), project: { id: p.projectId }, share: { id: res.body.share.id, has_password: true } });
    expect(right.body.token).not.toBe(token);
    const ctx = await reader.authenticate(`Bearer ${right.body.token}`, 'read', undefined, true);
    expect(ctx.share?.id).toBe(res.body.share.id);
    // The credential ends after its hour, cached or not.
    p.clock.now += 3_600_000;
    await expect(reader.authenticate(`Bearer ${right.body.token}`, 'read', undefined, true)).rejects.toMatchObject({ code: 'invalid_api_key' });

    // A day after, the purge deletes the unlocked credential; the link itself stays.
    p.clock.now += 86_400_000 + 1000;
    const credentialRows = async () => (await p.db.query<{ prefix: string }>('SELECT prefix FROM api_keys WHERE share_id = $1', [res.body.share.id])).rows.length;
    expect(await credentialRows()).toBe(1);
    await p.accounts.purge();
    expect(await credentialRows()).toBe(0);
    expect((await unlock({})).body).toEqual({ error: 'invalid_credentials', details: { reason: 'password_required' } });

    // Ten wrong guesses within 15 minutes from several addresses: the link is throttled for everyone, the right password included.
    for (let i = 0; i < 10; i++) expect((await unlock({ password: `wrong ${i}` }, `198.51.100.${i}`)).status).toBe(401);
    const throttled = await unlock({ password: PASSWORD }, '192.0.2.1');
    expect(throttled.status).toBe(429);
    expect(throttled.body.error).toBe('rate_limited');
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('wrong guesses are throttled per address too, across links', async () => {
    const ip = '203.0.113.99';
    for (let i = 0; i < 10; i++) {
      const token = tokenOfUrl((await create({ password: PASSWORD })).body.url);
      expect((await request(p.app).post('/v1/share/unlock').set('x-forwarded-for', ip).send({ token, password: 'wrong' })).status).toBe(401);
    }
    const fresh = tokenOfUrl((await create({ password: PASSWORD })).body.url);
    expect((await request(p.app).post('/v1/share/unlock').set('x-forwarded-for', ip).send({ token: fresh, password: PASSWORD })).status).toBe(429);
    expect((await request(p.app).post('/v1/share/unlock').set('x-forwarded-for', '203.0.113.100').send({ token: fresh, password: PASSWORD })).status).toBe(200);
  });

  it('revoking a link ends its token and every unlocked credential on an instance that had them cached; it leaves the list', async () => {
    const open = await create({ name: 'to revoke' });
    const locked = await create({ name: 'locked to revoke', password: PASSWORD });
    const token = tokenOfUrl(open.body.url);
    const unlocked = (await request(p.app).post('/v1/share/unlock').send({ token: tokenOfUrl(locked.body.url), password: PASSWORD })).body.token as string;
    await reader.authenticate(`Bearer ${token}`, 'read', undefined, true);
    await reader.authenticate(`Bearer ${unlocked}`, 'read', undefined, true);
    const editor = await p.tokenOf('editor');
    expect((await request(p.app).delete(`/admin/projects/${p.projectId}/shares/${open.body.share.id}`).set(bearer(await p.tokenOf('viewer')))).status).toBe(403);
    expect((await request(p.app).delete(`/admin/projects/${p.projectId}/shares/${open.body.share.id}`).set(bearer(await p.tokenOf('outsider')))).status).toBe(404);
    expect((await request(p.app).delete(`/admin/projects/${p.projectId}/shares/${open.body.share.id}`).set(bearer(editor))).status).toBe(204);
    expect((await request(p.app).delete(`/admin/projects/${p.projectId}/shares/${locked.body.share.id}`).set(bearer(editor))).status).toBe(204);
    await expect(reader.authenticate(`Bearer ${token}`, 'read', undefined, true)).rejects.toMatchObject({ code: 'invalid_api_key' });
    await expect(reader.authenticate(`Bearer ${unlocked}`, 'read', undefined, true)).rejects.toMatchObject({ code: 'invalid_api_key' });
    expect((await request(p.app).post('/v1/share/unlock').send({ token })).body).toEqual({ error: 'not_found' });
    expect((await request(p.app).delete(`/admin/projects/${p.projectId}/shares/${open.body.share.id}`).set(bearer(editor))).body).toEqual({ error: 'not_found' });
    const list = await request(p.app).get(`/admin/projects/${p.projectId}/shares`).set(bearer(editor));
    expect(list.body.shares.map((s: { id: string }) => s.id)).not.toContain(open.body.share.id);
    // Another project's id in the path does not reach the link.
    const again = await create({ name: 'kept' });
    const other = await p.keyStore.createProject({ name: 'other', org_id: p.orgId });
    expect((await request(p.app).delete(`/admin/projects/${other.project.id}/shares/${again.body.share.id}`).set(bearer(editor))).status).toBe(404);
    // The audit log has both.
    const audit = await request(p.app).get(`/admin/orgs/${p.orgId}/audit`).set(bearer(ADMIN_TOKEN)).query({ limit: '50' });
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual(expect.arrayContaining(['share.created', 'share.revoked']));
  });

  it('a link ends at its expiry, cached or not, and leaves the list', async () => {
    const res = await create({ name: 'short', expires_at: new Date(p.clock.now + 60_000).toISOString() });
    const token = tokenOfUrl(res.body.url);
    await reader.authenticate(`Bearer ${token}`, 'read', undefined, true);
    p.clock.now += 60_000;
    await expect(reader.authenticate(`Bearer ${token}`, 'read', undefined, true)).rejects.toMatchObject({ code: 'invalid_api_key' });
    expect((await request(p.app).post('/v1/share/unlock').send({ token })).body).toEqual({ error: 'not_found' });
    const list = await request(p.app).get(`/admin/projects/${p.projectId}/shares`).set(bearer(ADMIN_TOKEN));
    expect(list.body.shares.map((s: { id: string }) => s.id)).not.toContain(res.body.share.id);
  });

  it('a share credential is refused with 403 insufficient_scope on every /admin and /auth route', async () => {
    const token = tokenOfUrl((await create({ name: 'probe' })).body.url);
    for (const [method, path] of [['get', '/auth/me'], ['get', `/admin/projects/${p.projectId}`], ['get', `/admin/projects/${p.projectId}/shares`], ['post', '/auth/read-key'], ['get', '/admin/users']] as const) {
      const res = await request(p.app)[method](path).set(bearer(token)).send({});
      expect({ path, status: res.status, error: res.body.error, got: res.body.got }).toEqual({ path, status: 403, error: 'insufficient_scope', got: 'share' });
    }
  });
});
