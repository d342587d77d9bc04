import { ApiError } from '@analytics/schema';
import { keyStoreBackends } from './test-backends';
import { Authenticator } from './authenticator';
import { randomBase62 } from './key-format';
import { KeyStore } from './key-store';
import { migrateKeyStore } from './migrate';
import type { SqlPort } from './sql-port';

const codeOf = async (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof ApiError ? e.code : String(e)));
const randomKey = () => `sk_live_${randomBase62(12)}_${randomBase62(32)}`;

describe.each(keyStoreBackends())('authenticator on %s', (_name, open) => {
  let db: SqlPort;
  let lookups = 0;
  let store: KeyStore;
  beforeAll(async () => {
    db = await open();
    await migrateKeyStore(db);
    // The real store, with its key lookups counted (the round trip a flood of unknown keys must not cost).
    const counted: SqlPort = { ...db, query: (sql, params) => {
      if (sql.includes('WHERE k.prefix = $1')) lookups++;
      return db.query(sql, params);
    } };
    store = new KeyStore(counted);
  });
  afterAll(() => db.close());

  it('refuses 200 well-formed unknown keys with invalid_api_key while looking up at most a trickle of them', async () => {
    const auth = new Authenticator(store);
    await auth.loadKnownPrefixes(60_000);
    lookups = 0;
    const codes = await Promise.all(Array.from({ length: 200 }, () => codeOf(auth.resolve(`Bearer ${randomKey()}`))));
    expect(new Set(codes)).toEqual(new Set(['invalid_api_key']));
    expect(lookups).toBeLessThanOrEqual(10);
    auth.stop();
  });

  it('knows a key minted through its own key store at once, and refuses a revoked one', async () => {
    const auth = new Authenticator(store);
    await auth.loadKnownPrefixes(60_000);
    for (let i = 0; i < 20; i++) await codeOf(auth.resolve(`Bearer ${randomKey()}`)); // the trickle is spent
    const { project, keys } = await store.createProject({ name: 'fresh' });
    expect((await auth.resolve(`Bearer ${keys.sk}`)).projectId).toBe(project.id);
    const extra = await store.createKey(project.id, 'rk');
    expect((await auth.resolve(`Bearer ${extra!.key}`)).kind).toBe('rk');
    await store.revokeKey(extra!.prefix);
    auth.invalidateKey(extra!.prefix);
    expect(await codeOf(auth.resolve(`Bearer ${extra!.key}`))).toBe('invalid_api_key');
    auth.stop();
  });

  it('learns a key minted by another instance from its announcement, or from the periodic reload', async () => {
    const auth = new Authenticator(store);
    await auth.loadKnownPrefixes(1_000);
    const elsewhere = new KeyStore(db); // another process's key store: nothing reaches `auth` directly
    const announced = await elsewhere.createProject({ name: 'announced' });
    const silent = await elsewhere.createProject({ name: 'silent' });
    for (let i = 0; i < 20; i++) await codeOf(auth.resolve(`Bearer ${randomKey()}`)); // the trickle is spent
    expect(await codeOf(auth.resolve(`Bearer ${announced.keys.sk}`))).toBe('invalid_api_key');
    auth.keyMinted(announced.keys.sk.split('_')[2]!); // what the Redis bus delivers
    expect(await codeOf(auth.resolve(`Bearer ${announced.keys.sk}`))).toBe('ok');
    await new Promise((r) => setTimeout(r, 1_500));
    for (let i = 0; i < 20; i++) await codeOf(auth.resolve(`Bearer ${randomKey()}`)); // spent again: only the reload can tell
    expect(await codeOf(auth.resolve(`Bearer ${silent.keys.sk}`))).toBe('ok');
    auth.stop();
  });

  it('names the prefix a presented key claims only when that prefix exists, whatever its secret, without a lookup', async () => {
    const auth = new Authenticator(store);
    const { keys } = await store.createProject({ name: 'prefixes' });
    const [kind, env, prefix] = keys.sk.split('_');
    const wrongSecret = `Bearer ${kind}_${env}_${prefix}_${randomBase62(32)}`;
    expect(auth.knownPrefix(wrongSecret)).toBeUndefined(); // prefixes not loaded, key not cached: unknown
    await auth.resolve(`Bearer ${keys.sk}`);
    expect(auth.knownPrefix(wrongSecret)).toBe(prefix); // its key is cached
    const fresh = new Authenticator(store);
    await fresh.loadKnownPrefixes(60_000);
    lookups = 0;
    expect(fresh.knownPrefix(`bearer  ${keys.sk} `)).toBe(prefix);
    expect(fresh.knownPrefix(wrongSecret)).toBe(prefix);
    for (const header of [undefined, '', 'Bearer', `Bearer ${randomKey()}`, `Bearer ${prefix}`, `Basic ${keys.sk}`, 'Bearer mcp_at_abc']) {
      expect(fresh.knownPrefix(header)).toBeUndefined();
    }
    expect(lookups).toBe(0);
    fresh.stop();
  });
});
