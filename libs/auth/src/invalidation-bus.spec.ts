import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRedis, redisReady } from '@analytics/service-kit';
import { ApiError } from '@analytics/schema';
import { Authenticator } from './authenticator';
import { ACK_TIMEOUT_MS, InvalidationBus } from './invalidation-bus';
import { KeyStore } from './key-store';
import { migrateKeyStore } from './migrate';
import type { SqlPort } from './sql-port';
import { memoryPglitePort } from './pglite-template';
import { REDIS, systemServer } from './test-servers';

// Against real Redis (TEST_REDIS_URL, set by .ci/run): fails, not skips, when it is set and Redis is down.
const REDIS_SERVER = systemServer(REDIS);
const silent = { warn: () => undefined };
const codeOf = async (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof ApiError ? e.code : String(e)));

let db: SqlPort;
let store: KeyStore;
beforeAll(async () => {
  db = await memoryPglitePort();
  await migrateKeyStore(db);
  store = new KeyStore(db);
});
afterAll(() => db.close());

/** A key whose project exists, cached (resolved once) by each of `auths`; its prefix is what a revocation names. */
async function cachedKey(...auths: Authenticator[]) {
  const { keys } = await store.createProject({ name: 'bus' });
  for (const a of auths) expect(await codeOf(a.resolve(`Bearer ${keys.sk}`))).toBe('ok');
  return { header: `Bearer ${keys.sk}`, prefix: keys.sk.split('_')[2]! };
}

describe('invalidation bus without Redis', () => {
  it('applies a revocation locally and resolves at once', async () => {
    const auth = new Authenticator(store);
    const bus = new InvalidationBus(auth);
    await bus.start();
    const key = await cachedKey(auth);
    await store.revokeKey(key.prefix);
    const t0 = Date.now();
    await bus.keyRevoked(key.prefix);
    // Far below any wait for acknowledgements (ACK_TIMEOUT_MS, 2 s), and above a loaded CI machine's pauses.
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(await codeOf(auth.resolve(key.header))).toBe('invalid_api_key');
  });

  it('does not wait for acks when its subscriber never subscribed (a failed start)', async () => {
    const auth = new Authenticator(store);
    const bus = new InvalidationBus(auth, undefined, undefined, { ackTimeoutMs: 5_000 });
    const key = await cachedKey(auth);
    const t0 = Date.now();
    await bus.keyRevoked(key.prefix);
    expect(Date.now() - t0).toBeLessThan(1_000); // the ack bound is 5 s
  });
});

REDIS_SERVER.describe('invalidation bus through Redis: acknowledged', () => {
  const clients: Redis[] = [];
  const connect = async (subscriber = false) => {
    const c = createRedis(REDIS_SERVER.url!, { warn: () => undefined } as never, { subscriber });
    clients.push(c);
    if (!subscriber) expect(await redisReady(c, 5_000)).toBe(true);
    return c;
  };
  /** A channel of this test's own: other suites sharing the Redis server neither receive nor count. */
  const channel = () => `analytics:test-invalidate:${randomBytes(6).toString('hex')}`;
  /** A replica: its cache, applying what arrives on the channel; `applied` records when (in `events`). */
  const replica = async (name: string, events: string[], opts: { channel: string }) => {
    const auth = new Authenticator(store);
    const invalidate = auth.invalidateKey.bind(auth);
    auth.invalidateKey = (prefix: string) => {
      events.push(`${name} applied`);
      invalidate(prefix);
    };
    const sub = await connect(true);
    const bus = new InvalidationBus(auth, await connect(), sub, { ...opts, logger: silent });
    await bus.start();
    return { auth, sub };
  };
  /** admin-api's bus: no cache, a publisher and a subscriber for the acks. */
  const admin = async (opts: { channel: string; ackTimeoutMs?: number; logger?: { warn: (o: object, m: string) => void } }) => {
    const bus = new InvalidationBus(undefined, await connect(), await connect(true), { logger: silent, ...opts });
    await bus.start();
    return bus;
  };
  afterAll(() => clients.forEach((c) => c.disconnect()));

  it('resolves a revocation only after a replica whose delivery is held back applied it', async () => {
    const events: string[] = [];
    const opts = { channel: channel() };
    const r = await replica('replica', events, opts);
    const bus = await admin(opts);
    const key = await cachedKey(r.auth);
    await store.revokeKey(key.prefix);
    // A loaded replica: its socket is read 300 ms late, long after Redis answered PUBLISH.
    r.sub.stream.pause();
    setTimeout(() => r.sub.stream.resume(), 300);
    const t0 = Date.now();
    await bus.keyRevoked(key.prefix);
    events.push('resolved');
    const elapsed = Date.now() - t0;
    expect(events).toEqual(['replica applied', 'resolved']);
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(ACK_TIMEOUT_MS); // the ack ended the wait, not the bound
    expect(await codeOf(r.auth.resolve(key.header))).toBe('invalid_api_key');
  });

  it('with two replicas, resolves once both applied it (each refuses the key when it resolves)', async () => {
    const events: string[] = [];
    const opts = { channel: channel() };
    const a = await replica('a', events, opts);
    const b = await replica('b', events, opts);
    const bus = await admin(opts);
    const key = await cachedKey(a.auth, b.auth);
    await store.revokeKey(key.prefix);
    a.sub.stream.pause();
    b.sub.stream.pause();
    setTimeout(() => a.sub.stream.resume(), 100);
    setTimeout(() => b.sub.stream.resume(), 250);
    const t0 = Date.now();
    await bus.keyRevoked(key.prefix);
    events.push('resolved');
    expect(Date.now() - t0).toBeLessThan(ACK_TIMEOUT_MS);
    expect(events).toEqual(['a applied', 'b applied', 'resolved']);
    expect([await codeOf(a.auth.resolve(key.header)), await codeOf(b.auth.resolve(key.header))]).toEqual(['invalid_api_key', 'invalid_api_key']);
  });

  it("counts the publishing instance's own subscriber too: a replica revoking through its admin routes waits for the other", async () => {
    const events: string[] = [];
    const opts = { channel: channel() };
    const self = await replica('self', events, opts);
    const other = await replica('other', events, opts);
    const key = await cachedKey(self.auth, other.auth);
    other.sub.stream.pause();
    setTimeout(() => other.sub.stream.resume(), 200);
    // standalone's bus: publisher, subscriber and cache in one
    const bus = new InvalidationBus(self.auth, await connect(), await connect(true), { ...opts, logger: silent });
    await bus.start();
    await bus.keyRevoked(key.prefix);
    events.push('resolved');
    expect(events.indexOf('other applied')).toBeGreaterThanOrEqual(0);
    expect(events.indexOf('other applied')).toBeLessThan(events.indexOf('resolved'));
  });

  it('resolves after the bound, logging how many acked of how many, when a receiver never acks', async () => {
    const opts = { channel: channel(), ackTimeoutMs: 200 };
    const events: string[] = [];
    await replica('replica', events, opts);
    // A receiver that never acknowledges (a replica that died after receiving): a raw subscriber on the channel.
    const mute = await connect(true);
    await mute.subscribe(opts.channel);
    const warnings: Array<{ o: object; m: string }> = [];
    const bus = await admin({ ...opts, logger: { warn: (o, m) => void warnings.push({ o, m }) } });
    const t0 = Date.now();
    await bus.keyRevoked('pfx');
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(1_000);
    expect(events).toEqual(['replica applied']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.o).toMatchObject({ acks: 1, expected: 2 });
    expect(warnings[0]!.m).toContain('1 of 2');
  });

  it('resolves without waiting and without throwing when Redis fails mid-way (publisher gone)', async () => {
    const opts = { channel: channel(), ackTimeoutMs: 5_000 };
    const publisher = await connect();
    const bus = new InvalidationBus(undefined, publisher, await connect(true), { ...opts, logger: silent });
    await bus.start();
    publisher.disconnect();
    const t0 = Date.now();
    await expect(bus.keyRevoked('pfx')).resolves.toBeUndefined();
    expect(Date.now() - t0).toBeLessThan(1_000);
  });
});
