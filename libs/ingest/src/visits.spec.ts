import type { Redis } from 'ioredis';
import { dailyAnonymousId } from '@analytics/enrichment';
import type { EventInput } from '@analytics/schema';
import { MemoryRateLimiter, createRedis, redisReady } from '@analytics/service-kit';
import { REDIS, openTestStores, silentLogger, systemServer } from '@analytics/testing';
import { IngestService } from './ingest.service';
import { MemoryVisitState, RedisVisitState, VISIT_CAP_MS, type VisitGroup, type VisitState } from './visit-state';
import { visitKeyOf } from './visits';

const MIN = 60_000;
const IDLE = 30 * MIN;
const RULES = { idleMs: IDLE, capMs: VISIT_CAP_MS };
const T0 = Date.UTC(2026, 10, 27, 10, 0, 0);
const bucket = (ms: number) => Math.floor(ms / (30 * MIN));
const at = (h: number, m: number, s = 0) => Date.UTC(2026, 10, 27, h, m, s);

// Against real Redis (TEST_REDIS_URL, set by .ci/run): fails, not skips, when it is set and Redis is down.
const REDIS_SERVER = systemServer(REDIS);
const redisClients: Redis[] = [];
// QUIT, not disconnect (which leaves ioredis's socket-end timer behind, and jest waits for it); a quit one stays.
afterAll(() => Promise.all(redisClients.filter((c) => c.status === 'ready').map((c) => c.quit())));
let prefixSeq = 0;
const newPrefix = () => `analytics:test-visit:${process.pid}:${Date.now()}:${prefixSeq++}:`;
async function redisClient() {
  const redis = createRedis(REDIS_SERVER.url!, silentLogger);
  redisClients.push(redis);
  expect(await redisReady(redis, 5_000)).toBe(true);
  return redis;
}

/** Places events one request at a time, as separate requests would; answers each event's id bucket. */
async function placeEach(state: VisitState, key: string, times: number[]): Promise<number[]> {
  const out: number[] = [];
  for (const t of times) out.push((await state.place([{ keys: [key], times: [t] }]))[0]![0]![1]);
  return out;
}

type Factory = () => Promise<VisitState>;
const memory: Factory = async () => new MemoryVisitState(RULES);
const FACTORIES: Array<[string, Factory]> = [['memory', memory]];
if (REDIS_SERVER.url) FACTORIES.push(['redis', async () => new RedisVisitState(await redisClient(), RULES, silentLogger, newPrefix())]);

describe.each(FACTORIES)('visits by inactivity (%s state)', (_name, make) => {
  it('continues a visit across clock buckets: 10:29:50 then 10:30:10 is one visit, named by its first event bucket', async () => {
    const s = await make();
    expect(await placeEach(s, 'v', [at(10, 29, 50), at(10, 30, 10), at(10, 55), at(11, 20)])).toEqual(Array(4).fill(bucket(at(10, 29, 50))));
  });

  it('ends a visit after the idle time: a gap of 30 min - 1 ms continues, exactly 30 min starts a new one', async () => {
    const s = await make();
    const [a, b, c] = await placeEach(s, 'v', [T0, T0 + IDLE - 1, T0 + IDLE - 1 + IDLE]);
    expect([a, b]).toEqual([bucket(T0), bucket(T0)]);
    expect(c).toBe(bucket(T0 + 2 * IDLE - 1));
    expect(c).not.toBe(a);
  });

  it('caps a visit at 24 hours from its first event', async () => {
    const s = await make();
    const times = Array.from({ length: 80 }, (_, i) => T0 + i * 20 * MIN); // every 20 min for 26 h 20 min
    const buckets = await placeEach(s, 'v', times);
    const capped = times.findIndex((t) => t - T0 >= VISIT_CAP_MS);
    expect(buckets.slice(0, capped)).toEqual(Array(capped).fill(bucket(T0)));
    expect(buckets.slice(capped)).toEqual(Array(times.length - capped).fill(bucket(times[capped]!)));
  });

  it('places events out of order in the visit their time belongs to', async () => {
    const s = await make();
    // two visits: 10:00-10:20 and 12:00-12:10
    await placeEach(s, 'v', [at(10, 0), at(10, 20), at(12, 0), at(12, 10)]);
    // late events: into the first (after and before its span), into the second (just before it), and a visit of their own
    expect(await placeEach(s, 'v', [at(10, 45), at(9, 40), at(11, 35), at(8, 0)])).toEqual([bucket(at(10, 0)), bucket(at(10, 0)), bucket(at(12, 0)), bucket(at(8, 0))]);
    // a batch out of order: sorted per visitor before placing, so 11:40, 10:00, 10:20, 11:00 (20-40 min apart) ... per time
    const batch = await s.place([{ keys: ['w'], times: [at(10, 0), at(10, 20), at(10, 40), at(11, 0)] }]);
    expect(batch[0]!.map(([, b]) => b)).toEqual(Array(4).fill(bucket(at(10, 0))));
  });

  it('keeps visitors apart and places several visitors in one call', async () => {
    const s = await make();
    const groups: VisitGroup[] = [{ keys: ['a'], times: [at(10, 0), at(10, 10)] }, { keys: ['b'], times: [at(10, 40)] }];
    expect(await s.place(groups)).toEqual([[[0, bucket(at(10, 0))], [0, bucket(at(10, 0))]], [[0, bucket(at(10, 40))]]]);
    expect(await s.place([{ keys: ['b'], times: [at(10, 5)] }])).toEqual([[[0, bucket(at(10, 5))]]]); // b's 10:40 visit is 35 min away
  });

  it("continues the previous day's key when the visitor's own has no visit for the event (daily id rotation)", async () => {
    const s = await make();
    await s.place([{ keys: ['yesterday'], times: [Date.UTC(2026, 10, 27, 23, 50)] }]);
    const next = await s.place([{ keys: ['today', 'yesterday'], times: [Date.UTC(2026, 10, 28, 0, 10), Date.UTC(2026, 10, 28, 1, 0)] }]);
    // 00:10 continues yesterday's visit; 01:00 is 50 min after it: a new visit under today's key
    expect(next).toEqual([[[1, bucket(Date.UTC(2026, 10, 27, 23, 50))], [0, bucket(Date.UTC(2026, 10, 28, 1, 0))]]]);
  });
});

describe('the visit state across restarts and replicas', () => {
  it('memory: a restart loses the visits, and the next event starts a new visit with another id (never a merge)', async () => {
    const before = new MemoryVisitState(RULES);
    const [first] = await placeEach(before, 'v', [at(10, 0), at(10, 25)]);
    const [after] = await placeEach(new MemoryVisitState(RULES), 'v', [at(10, 40)]);
    expect(after).toBe(bucket(at(10, 40)));
    expect(after).not.toBe(first);
  });

  REDIS_SERVER.it('redis: the visits survive a restart and are shared by two replicas, keyed by hashes with a TTL', async () => {
    const prefix = newPrefix();
    const redis = await redisClient();
    const a = new RedisVisitState(redis, RULES, silentLogger, prefix);
    const b = new RedisVisitState(await redisClient(), RULES, silentLogger, prefix);
    const key = visitKeyOf('p', 'visitor-1', 'secret');
    const buckets = [
      ...(await placeEach(a, key, [at(10, 0)])),
      ...(await placeEach(b, key, [at(10, 20)])),
      ...(await placeEach(a, key, [at(10, 45)])),
      ...(await placeEach(new RedisVisitState(await redisClient(), RULES, silentLogger, prefix), key, [at(11, 10)])), // restarted
    ];
    expect(buckets).toEqual(Array(4).fill(bucket(at(10, 0))));
    // stored under the keyed hash of (project, visitor id), not the id
    expect(key).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await redis.exists(prefix + key, `${prefix}visitor-1`)).toBe(1);
    const ttl = await redis.pttl(prefix + key);
    expect(ttl).toBeGreaterThan(VISIT_CAP_MS);
    expect(ttl).toBeLessThanOrEqual(VISIT_CAP_MS + IDLE);
  });

  REDIS_SERVER.it('redis: one round trip per request; while Redis cannot answer, memory continues (a new visit at worst)', async () => {
    const redis = await redisClient();
    const calls: string[] = [];
    const s = new RedisVisitState(redis, RULES, silentLogger, newPrefix());
    await s.place([{ keys: ['warm'], times: [at(9, 0)] }]); // loads the script (EVALSHA, then EVAL once)
    const sendCommand = redis.sendCommand.bind(redis);
    redis.sendCommand = ((cmd: { name: string }) => {
      calls.push(cmd.name);
      return sendCommand(cmd as never);
    }) as typeof redis.sendCommand;
    const groups = Array.from({ length: 500 }, (_, i): VisitGroup => ({ keys: [`k${i}`], times: [at(10, 0), at(10, 5)] }));
    await s.place(groups);
    expect(calls).toEqual(['evalsha']);
    await redis.quit(); // Redis no longer answers this client
    await expect(s.place([{ keys: ['k1'], times: [at(10, 10)] }])).resolves.toEqual([[[0, bucket(at(10, 10))]]]);
  });
});

describe('IngestService: session ids by inactivity', () => {
  type Stores = Awaited<ReturnType<typeof openTestStores>>;
  let stores: Stores;
  beforeAll(async () => {
    stores = await openTestStores();
  });
  afterAll(() => stores.close());

  const rowsOf = async (p: string) =>
    stores.events.select<{ event_name: string; anonymous_id: string; session_id: string }>(
      `SELECT event_name, anonymous_id, session_id FROM ${stores.events.eventsTable} WHERE project_id = {p:UUID} ORDER BY timestamp, event_name`,
      { p },
    );
  const service = (visits?: VisitState) => new IngestService({ store: stores.events, limiter: new MemoryRateLimiter(), visits });
  const ctx = (projectId: string, nowMs: number, derived = false) => ({ projectId, ip: '203.0.113.5', userAgent: 'ua/1', host: 'x.example', nowMs, ipHashSecret: 's', anonymousIds: derived ? ('derived' as const) : ('random' as const) });
  const ev = (event: string, t: number, extra: Partial<EventInput> = {}): EventInput => ({ event, timestamp: t, anonymous_id: 'anon-1', ...extra });

  it('gives a visit one session id across buckets; keeps client session ids and events far from arrival as they were', async () => {
    const p = '44444444-4444-4444-8444-444444444444';
    const svc = service();
    await svc.track(ctx(p, at(10, 29, 51)), ev('a', at(10, 29, 50)));
    await svc.batch(ctx(p, at(10, 30, 11)), [ev('b', at(10, 30, 10)), ev('c', at(10, 31), { session_id: 'mine' }), ev('d', at(10, 31), { user_id: 'u', anonymous_id: undefined })]);
    // an import: two days old, and one from a device clock an hour ahead
    await svc.batch(ctx(p, at(10, 32)), [ev('e', at(10, 32) - 2 * VISIT_CAP_MS), ev('f', at(11, 32))]);
    expect(await rowsOf(p)).toEqual([
      { event_name: 'e', anonymous_id: 'anon-1', session_id: `anon-1-${bucket(at(10, 32) - 2 * VISIT_CAP_MS)}` },
      { event_name: 'a', anonymous_id: 'anon-1', session_id: `anon-1-${bucket(at(10, 0))}` },
      { event_name: 'b', anonymous_id: 'anon-1', session_id: `anon-1-${bucket(at(10, 0))}` },
      { event_name: 'c', anonymous_id: 'anon-1', session_id: 'mine' },
      { event_name: 'd', anonymous_id: '', session_id: `u-${bucket(at(10, 31))}` },
      { event_name: 'f', anonymous_id: 'anon-1', session_id: `anon-1-${bucket(at(11, 32))}` },
    ]);
  });

  it('keeps the visitor id and visit of a visit in progress when the daily visitor id rotates at UTC midnight', async () => {
    const p = '55555555-5555-4555-8555-555555555555';
    const svc = service();
    const evening = Date.UTC(2026, 10, 27, 23, 50);
    const night = Date.UTC(2026, 10, 28, 0, 10);
    const later = Date.UTC(2026, 10, 28, 1, 0);
    for (const t of [evening, night, night + MIN, later]) await svc.track(ctx(p, t + 1000, true), { event: `e${t}`, timestamp: t });
    const yesterdayId = dailyAnonymousId(p, '203.0.113.5', 'ua/1', 's', evening);
    const todayId = dailyAnonymousId(p, '203.0.113.5', 'ua/1', 's', later);
    expect(todayId).not.toBe(yesterdayId);
    expect((await rowsOf(p)).map((r) => [r.anonymous_id, r.session_id])).toEqual([
      [yesterdayId, `${yesterdayId}-${bucket(evening)}`],
      [yesterdayId, `${yesterdayId}-${bucket(evening)}`],
      [yesterdayId, `${yesterdayId}-${bucket(evening)}`],
      [todayId, `${todayId}-${bucket(later)}`],
    ]);
  });

  REDIS_SERVER.it('two ingest replicas on one Redis continue the same visit', async () => {
    const p = '66666666-6666-4666-8666-666666666666';
    const prefix = newPrefix();
    const replicas = [service(new RedisVisitState(await redisClient(), RULES, silentLogger, prefix)), service(new RedisVisitState(await redisClient(), RULES, silentLogger, prefix))];
    const times = [at(10, 0), at(10, 25), at(10, 50), at(11, 15), at(12, 0)];
    for (const [i, t] of times.entries()) await replicas[i % 2]!.track(ctx(p, t + 500), ev(`e${i}`, t));
    expect((await rowsOf(p)).map((r) => r.session_id)).toEqual([...Array(4).fill(`anon-1-${bucket(at(10, 0))}`), `anon-1-${bucket(at(12, 0))}`]);
  });
});
