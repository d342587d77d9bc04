import { ApiError } from '@analytics/schema';
import { keyStoreBackends } from './test-backends';
import { Authenticator } from './authenticator';
import { KeyStore } from './key-store';
import { migrateKeyStore } from './migrate';
import type { SqlPort } from './sql-port';

const codeOf = async (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof ApiError ? e.code : String(e)));

describe.each(keyStoreBackends())('key store on %s', (_name, open) => {
  let db: SqlPort;
  let store: KeyStore;
  beforeAll(async () => {
    db = await open();
    expect(await migrateKeyStore(db)).toEqual([1, 2, 3, 4, 5]);
    store = new KeyStore(db);
  });
  afterAll(() => db.close());

  it('is idempotent to migrate twice', async () => {
    expect(await migrateKeyStore(db)).toEqual([]);
  });

  it('creates a project with one pk, sk and rk key and stores only secret hashes', async () => {
    const { project, keys } = await store.createProject({ name: 'p1', allowed_origins: ['https://a.example'] });
    expect(project).toMatchObject({ name: 'p1', allowed_origins: ['https://a.example'], retention_days: 365 });
    expect(Object.keys(keys)).toEqual(['pk', 'sk', 'rk']);
    const { rows } = await db.query<{ secret_hash: string; kind: string }>('SELECT kind, secret_hash FROM api_keys WHERE project_id = $1 ORDER BY kind', [project.id]);
    expect(rows.map((r) => r.kind)).toEqual(['pk', 'rk', 'sk']);
    for (const k of Object.values(keys)) {
      const secret = k.split('_')[3]!;
      expect(JSON.stringify(rows)).not.toContain(secret);
    }
  });

  it('updates, lists and finds projects; unknown and non-uuid ids give null', async () => {
    const { project } = await store.createProject({ name: 'p2' });
    expect(await store.updateProject(project.id, { retention_days: 30, allowed_origins: ['https://b.example'] })).toMatchObject({ retention_days: 30, allowed_origins: ['https://b.example'], name: 'p2' });
    expect((await store.listProjects()).map((p) => p.id)).toContain(project.id);
    expect(await store.getProject('00000000-0000-4000-8000-000000000000')).toBeNull();
    expect(await store.getProject('not-a-uuid')).toBeNull();
    expect(await store.updateProject('not-a-uuid', { retention_days: 3 })).toBeNull();
  });

  it('authenticates each kind for its access, and revocation ends a key', async () => {
    const { project, keys } = await store.createProject({ name: 'p3', allowed_origins: ['https://c.example'] });
    const auth = new Authenticator(store);
    const bearer = (k: string) => `Bearer ${k}`;
    expect((await auth.authenticate(bearer(keys.sk), 'ingest')).projectId).toBe(project.id);
    expect((await auth.authenticate(bearer(keys.rk), 'read')).kind).toBe('rk');
    expect(await codeOf(auth.authenticate(bearer(keys.pk), 'ingest', 'https://c.example'))).toBe('ok');
    expect(await codeOf(auth.authenticate(bearer(keys.pk), 'ingest'))).toBe('origin_not_allowed');
    expect(await codeOf(auth.authenticate(bearer(keys.pk), 'read', 'https://c.example'))).toBe('insufficient_scope');
    expect(await codeOf(auth.authenticate(bearer(keys.sk), 'read'))).toBe('insufficient_scope');
    expect(await codeOf(auth.authenticate(bearer(keys.rk), 'ingest'))).toBe('insufficient_scope');
    expect(await codeOf(auth.authenticate(bearer(keys.pk), 'forget', 'https://c.example'))).toBe('forget_requires_secret_key');
    expect(await codeOf(auth.authenticate(bearer(`rk${keys.sk.slice(2)}`), 'read'))).toBe('key_kind_mismatch');
    expect(await codeOf(auth.authenticate(bearer(keys.sk.replace('_live_', '_test_')), 'ingest'))).toBe('invalid_api_key');
    const ak = await store.createKey(project.id, 'ak');
    expect(await codeOf(auth.authenticate(bearer(ak!.key), 'forget'))).toBe('ok');
    expect(await codeOf(auth.authenticate(bearer(ak!.key), 'ingest'))).toBe('ok');
    expect(await codeOf(auth.authenticate(bearer(ak!.key), 'read'))).toBe('insufficient_scope');

    const prefix = keys.sk.split('_')[2]!;
    expect(await store.revokeKey(prefix)).toBe(project.id);
    expect(await store.revokeKey(prefix)).toBeNull();
    // Cached: still accepted until the entry is dropped (the spec's up-to-5-minutes window) ...
    expect(await codeOf(auth.authenticate(bearer(keys.sk), 'ingest'))).toBe('ok');
    auth.invalidateKey(prefix);
    // ... and refused once it is.
    expect(await codeOf(auth.authenticate(bearer(keys.sk), 'ingest'))).toBe('invalid_api_key');
    // A fresh instance (another server) refuses at once.
    expect(await codeOf(new Authenticator(store).authenticate(bearer(keys.sk), 'ingest'))).toBe('invalid_api_key');
  });

  it('re-reads a project after invalidateProject (origin changes take effect)', async () => {
    const { project, keys } = await store.createProject({ name: 'p4', allowed_origins: ['https://old.example'] });
    const auth = new Authenticator(store);
    expect(await codeOf(auth.authenticate(`Bearer ${keys.pk}`, 'ingest', 'https://new.example'))).toBe('origin_not_allowed');
    await store.updateProject(project.id, { allowed_origins: ['https://new.example'] });
    auth.invalidateProject(project.id);
    expect(await codeOf(auth.authenticate(`Bearer ${keys.pk}`, 'ingest', 'https://new.example'))).toBe('ok');
  });

  it('expires cached keys after the TTL', async () => {
    const { keys } = await store.createProject({ name: 'p5' });
    const auth = new Authenticator(store, { ttlMs: 50 });
    await auth.authenticate(`Bearer ${keys.sk}`, 'ingest');
    await store.revokeKey(keys.sk.split('_')[2]!);
    await new Promise((r) => setTimeout(r, 80));
    expect(await codeOf(auth.authenticate(`Bearer ${keys.sk}`, 'ingest'))).toBe('invalid_api_key');
  });
});
