import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { Authenticator, InvalidationBus, KeyStore } from '@analytics/auth';
import { keyStoreBackends } from '@analytics/auth/testing';
import { REDIS, redisClients, systemServer, memoryPglitePort } from '@analytics/testing';
import { type People, setUpPeople } from './test-people';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * Signed-in users read with a read key minted for their session (POST /auth/read-key), and lose it with their access:
 * a removed member's token and read key are refused at once on this instance; the key also ends with its session and
 * at its expiry. The authenticator here is the read API's (libs/auth), fed by the same invalidation bus.
 */
describe.each(keyStoreBackends())('access ends with the membership, the session or the key\'s expiry on %s', (_name, open) => {
  let p: People;
  let reader: Authenticator;
  beforeAll(async () => {
    const db = await open();
    const clock = { now: Date.now() };
    reader = new Authenticator(new KeyStore(db), { clock: () => clock.now });
    p = await setUpPeople(db, { bus: new InvalidationBus(reader), clock });
  }, 180_000);
  afterAll(() => p.db.close());

  const readKey = async (token: string) => {
    const res = await request(p.app).post('/auth/read-key').set(bearer(token)).send({ project_id: p.projectId });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ key: expect.stringMatching(/^rk_live_/), prefix: expect.any(String), kind: 'rk', project_id: p.projectId, expires_at: new Date(p.clock.now + 3_600_000).toISOString() });
    return res.body.key as string;
  };

  it('a removed member\'s user token and read key are refused as soon as the removal answers', async () => {
    const member = await p.addMember(p.orgId, 'viewer');
    const token = (await p.accounts.sessions.create(member, 'tests')).token;
    const key = await readKey(token);
    expect((await reader.authenticate(`Bearer ${key}`, 'read')).projectId).toBe(p.projectId);
    expect((await request(p.app).get(`/admin/projects/${p.projectId}`).set(bearer(token))).status).toBe(200);
    const owner = await p.tokenOf('owner');
    expect((await request(p.app).delete(`/admin/orgs/${p.orgId}/members/${member.id}`).set(bearer(owner))).status).toBe(204);
    await expect(reader.authenticate(`Bearer ${key}`, 'read')).rejects.toMatchObject({ code: 'invalid_api_key' });
    expect((await request(p.app).get(`/admin/projects/${p.projectId}`).set(bearer(token))).body).toEqual({ error: 'not_found' });
    expect((await request(p.app).post('/auth/read-key').set(bearer(token)).send({ project_id: p.projectId })).body).toEqual({ error: 'not_found' });
    expect((await request(p.app).get('/auth/me').set(bearer(token))).body.organizations).toEqual([]);
  });

  it('a read key ends with its session (sign-out) and at its expiry, cached or not', async () => {
    const token = await p.tokenOf('viewer');
    const key = await readKey(token);
    await reader.authenticate(`Bearer ${key}`, 'read');
    expect((await request(p.app).post('/auth/logout').set(bearer(token))).status).toBe(204);
    await expect(reader.authenticate(`Bearer ${key}`, 'read')).rejects.toMatchObject({ code: 'invalid_api_key' });

    const later = await readKey(await p.tokenOf('viewer'));
    await reader.authenticate(`Bearer ${later}`, 'read');
    p.clock.now += 3_600_000;
    await expect(reader.authenticate(`Bearer ${later}`, 'read')).rejects.toMatchObject({ code: 'invalid_api_key' });
  });

  it('a read key is an rk_ key like any other: refused on writes, never listed with the project\'s keys', async () => {
    const key = await readKey(await p.tokenOf('editor'));
    await expect(reader.authenticate(`Bearer ${key}`, 'ingest')).rejects.toMatchObject({ code: 'insufficient_scope' });
    const keys = (await request(p.app).get(`/admin/projects/${p.projectId}/keys`).set(bearer(await p.tokenOf('admin')))).body.keys as Array<{ prefix: string }>;
    expect(keys.map((k) => k.prefix)).not.toContain(key.split('_')[2]);
  });
});

// Several instances: the read API's cache is in another process; the removal answers once it dropped the key (Redis).
const REDIS_SERVER = systemServer(REDIS);
REDIS_SERVER.describe('a removal reaches another instance through Redis before it answers', () => {
  const connect = redisClients(REDIS_SERVER);

  it('the other instance refuses the removed member\'s read key when DELETE /admin/orgs/:id/members/:user_id answers 204', async () => {
    const channel = `analytics:test-people-${randomBytes(4).toString('hex')}`;
    const db = await memoryPglitePort();
    const replica = new Authenticator(new KeyStore(db));
    await new InvalidationBus(replica, connect(), connect(true), { channel }).start();
    const adminBus = new InvalidationBus(undefined, connect(), connect(true), { channel });
    await adminBus.start();
    const p = await setUpPeople(db, { bus: adminBus });
    await replica.loadKnownPrefixes(3_600_000);
    const member = await p.addMember(p.orgId, 'viewer');
    const token = (await p.accounts.sessions.create(member, 'tests')).token;
    const key = (await request(p.app).post('/auth/read-key').set(bearer(token)).send({ project_id: p.projectId })).body.key as string;
    expect((await replica.authenticate(`Bearer ${key}`, 'read')).projectId).toBe(p.projectId);
    expect((await request(p.app).delete(`/admin/orgs/${p.orgId}/members/${member.id}`).set(bearer(await p.tokenOf('owner')))).status).toBe(204);
    await expect(replica.authenticate(`Bearer ${key}`, 'read')).rejects.toMatchObject({ code: 'invalid_api_key' });
    await db.close();
  });
});
