import { ApiError } from '@analytics/schema';
import { Redis } from 'ioredis';
import { keyStoreBackends } from './test-backends';
import { Authenticator } from './authenticator';
import { randomBase62 } from './key-format';
import { KeyStore } from './key-store';
import { migrateKeyStore } from './migrate';
import { LocalRevocationEpoch, RedisRevocationEpoch } from './revocation-epoch';
import type { SqlPort } from './sql-port';

const codeOf = async (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof ApiError ? e.code : String(e)));
const randomKey = () => `sk_live_${randomBase62(12)}_${randomBase62(32)}`;

describe.each(keyStoreBackends())('authenticator on %s', (_name, open) => {
  let db: SqlPort;
  let lookups = 0;
  /** While set, a key lookup's answer is held here until it resolves (a slow key store, a loaded replica). */
  let held: { answered: () => void; release: Promise<void> } | undefined;
  let store: KeyStore;
  beforeAll(async () => {
    db = await open();
    await migrateKeyStore(db);
    // The real store, with its key lookups counted (the round trip a flood of unknown keys must not cost).
    const query = async (sql: string, params?: unknown[]) => {
      if (!sql.includes('WHERE k.prefix = $1')) return db.query(sql, params);
      lookups++;
      const hold = held;
      const answer = await db.query(sql, params);
      if (hold) {
        hold.answered();
        await hold.release;
      }
      return answer;
    };
    const counted: SqlPort = { ...db, query: query as SqlPort['query'] };
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

  /** Holds the answer of the next key lookups once the key store gave it: resolves `answered`, then waits for `release`. */
  const holdLookups = () => {
    let release!: () => void;
    let answered!: () => void;
    const read = new Promise<void>((r) => (answered = r));
    held = { answered, release: new Promise<void>((r) => (release = r)) };
    return { read, release: () => { held = undefined; release(); } };
  };

  it('refuses on its next request a key revoked while a lookup of it was in flight, though that lookup read it before', async () => {
    const epoch = new LocalRevocationEpoch();
    const auth = new Authenticator(store, { epoch });
    const { keys } = await store.createProject({ name: 'in-flight' });
    const prefix = keys.sk.split('_')[2]!;
    const hold = holdLookups();
    const inFlight = codeOf(auth.resolve(`Bearer ${keys.sk}`));
    await hold.read; // the key store answered with the key as it was before the revocation
    // What DELETE /admin/keys does meanwhile: commit, replace the epoch; the bus drops the (not yet cached) entry.
    await store.revokeKey(prefix);
    await epoch.advance();
    auth.invalidateKey(prefix);
    hold.release();
    expect(await inFlight).toBe('ok'); // it arrived before the revocation answered
    expect(await codeOf(auth.resolve(`Bearer ${keys.sk}`))).toBe('invalid_api_key');
  });

  it('serves a cached key without a lookup while the revocation epoch stays, and looks it up again once it changed', async () => {
    const epoch = new LocalRevocationEpoch();
    const auth = new Authenticator(store, { epoch });
    const { keys } = await store.createProject({ name: 'epoch' });
    await auth.resolve(`Bearer ${keys.sk}`);
    lookups = 0;
    for (let i = 0; i < 5; i++) await auth.resolve(`Bearer ${keys.sk}`);
    expect(lookups).toBe(0);
    // Revoked with no message to this instance at all (another instance's admin route): only the epoch changed.
    await store.revokeKey(keys.sk.split('_')[2]!);
    expect(await codeOf(auth.resolve(`Bearer ${keys.sk}`))).toBe('ok');
    await epoch.advance();
    expect(await codeOf(auth.resolve(`Bearer ${keys.sk}`))).toBe('invalid_api_key');
    expect(lookups).toBe(1);
  });

  it('reads the key store for every request while the revocation epoch cannot be read (Redis down)', async () => {
    // A closed client: every command fails at once, as with Redis unreachable.
    const down = new Redis({ lazyConnect: true, enableOfflineQueue: false });
    down.disconnect();
    const auth = new Authenticator(store, { epoch: new RedisRevocationEpoch(down) });
    const { keys } = await store.createProject({ name: 'epoch-down' });
    lookups = 0;
    for (let i = 0; i < 3; i++) expect(await codeOf(auth.resolve(`Bearer ${keys.sk}`))).toBe('ok');
    expect(lookups).toBe(3);
    await store.revokeKey(keys.sk.split('_')[2]!);
    expect(await codeOf(auth.resolve(`Bearer ${keys.sk}`))).toBe('invalid_api_key');
  });

  it('caches nothing with a TTL of 0: a revoked key is refused on the next request with no invalidation at all', async () => {
    const auth = new Authenticator(store, { ttlMs: 0 });
    const { keys } = await store.createProject({ name: 'no-cache' });
    expect(await codeOf(auth.resolve(`Bearer ${keys.sk}`))).toBe('ok');
    await store.revokeKey(keys.sk.split('_')[2]!);
    expect(await codeOf(auth.resolve(`Bearer ${keys.sk}`))).toBe('invalid_api_key');
  });

  it('does not cache "no such key" from a lookup overtaken by the announcement of that key', async () => {
    const auth = new Authenticator(store);
    const elsewhere = new KeyStore(db); // another instance mints it: nothing reaches `auth` but the announcement
    const { keys } = await elsewhere.createProject({ name: 'minted-late' });
    const prefix = keys.sk.split('_')[2]!;
    await db.query('UPDATE api_keys SET prefix = prefix || $2 WHERE prefix = $1', [prefix, 'x']);
    const hold = holdLookups();
    const inFlight = codeOf(auth.resolve(`Bearer ${keys.sk}`));
    await hold.read; // "no such key", read before the key was committed
    await db.query('UPDATE api_keys SET prefix = $1 WHERE prefix = $2', [prefix, `${prefix}x`]);
    auth.keyMinted(prefix);
    hold.release();
    expect(await inFlight).toBe('invalid_api_key');
    expect(await codeOf(auth.resolve(`Bearer ${keys.sk}`))).toBe('ok');
  });
});
