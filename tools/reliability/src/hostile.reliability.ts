import { UNLIMITED, base62, loops, maxSizeBatch, pct, post, resetPeak, rssMiB, serverWithProject } from './support/hostile';
import { type ProjectKeys, type Server, call, createProject, queryEvents, startServer } from './support/server';

// No caller can starve or exhaust the service. Each attack against the built server, beside the traffic it must not
// hurt. Callers are told apart by X-Forwarded-For (TRUST_PROXY=loopback), as behind the proxy.

describe('a flood of well-formed random keys', () => {
  const ctx = serverWithProject('flood');

  it('costs no key-store round trips: legitimate track traffic keeps at least half its throughput and its p99 stays near its quiet value', async () => {
    const { server, p } = ctx;
    const legit = () => loops(10, 5_000, async (i) => (await post(server.base, '/v1/track', p.sk, { event: 'legit', anonymous_id: `a-${i % 50}` })).status);
    await loops(10, 1_000, async () => (await post(server.base, '/v1/track', p.sk, { event: 'warmup' })).status);
    const quiet = await legit();
    const floodStatuses: Record<number, number> = {};
    let retryAfter: string | null = null;
    const [busy] = await Promise.all([
      legit(),
      loops(50, 5_000, async () => {
        const r = await post(server.base, '/v1/track', `sk_live_${base62(12)}_${base62(32)}`, { event: 'x' }, '198.51.100.66');
        floodStatuses[r.status] = (floodStatuses[r.status] ?? 0) + 1;
        if (r.status === 429) retryAfter = r.headers.get('retry-after');
        return r.status;
      }),
    ]);
    expect(Object.keys(quiet.statuses)).toEqual(['202']);
    expect(Object.keys(busy.statuses)).toEqual(['202']);
    // The flood is refused as it should be: 401 while the IP's failure budget lasts, then 429 with Retry-After.
    expect(Object.keys(floodStatuses).sort()).toEqual(['401', '429']);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(busy.perS).toBeGreaterThanOrEqual(0.5 * quiet.perS);
    // Near its quiet value: twice it, or 250 ms more, whichever is larger. Moving the aggregates off the request path made the quiet path ~3x faster
    // (this test's quiet p99 224 -> 87 ms at 61 -> 201 req/s, measured back to back) while what the flood adds fell
    // from ~140 to ~70 ms on a quiet machine; under CI's load it added 70-200 ms (one stall of the two cores reaches
    // the p99 of a 5 s phase). A key-store round trip per flood request, what this test guards against, costs seconds.
    const quietP99 = pct(quiet.latencies, 99);
    expect(pct(busy.latencies, 99)).toBeLessThan(Math.max(2 * quietP99 + 25, quietP99 + 250));
  });
});

describe('64 concurrent batches of 1000 events at every field limit (~14 MB each)', () => {
  const ctx = serverWithProject('bodies', { initdb: true });

  it('keeps peak memory within idle + 768 MiB, answers each 202 or 503 server_busy with Retry-After, and stores every acknowledged event once', async () => {
    const { server, p } = ctx;
    const body = maxSizeBatch();
    expect(body.length).toBeGreaterThan(14_000_000);
    const busyAnswered = async () => Number(/^analytics_refusals_total\{reason="server_busy"\} (\S+)$/m.exec((await call(server.base, 'GET', '/metrics')).text)?.[1] ?? 0);
    const busyBefore = await busyAnswered();
    // VmHWM counts from start-up (the key store's initdb worker, the engine's start); reset it so the peak is the load's.
    resetPeak(server);
    const idle = rssMiB(server, 'VmRSS');
    // A 503 closes the connection after the answer without reading the rest of the body (docs/api/ingest.md): a
    // client still sending then may see the connection reset before it reads the answer (status 0 here). Each such
    // reset must be one of the server's 503s (its refusals counter), never a lost or unanswered request.
    const answers = await Promise.all(Array.from({ length: 64 }, () => post(server.base, '/v1/batch', p.sk, body).catch(() => undefined)));
    const peak = rssMiB(server, 'VmHWM');
    const statuses = answers.map((r) => r?.status ?? 0);
    expect(statuses.filter((s) => s !== 202 && s !== 503 && s !== 0)).toEqual([]);
    expect(statuses).toContain(202);
    expect(statuses.filter((s) => s === 503 || s === 0).length).toBe((await busyAnswered()) - busyBefore);
    for (const r of answers.filter((a) => a?.status === 503)) expect(r!.headers.get('retry-after')).toBe('1');
    expect(peak - idle).toBeLessThanOrEqual(768);
    expect(await server.stop()).toBe(0);
    const [stored] = queryEvents<{ n: string }>(server.dataDir, `SELECT count() AS n FROM analytics.events WHERE project_id = '${p.id}'`);
    expect(Number(stored!.n)).toBe(statuses.filter((s) => s === 202).length * 1000);
  });
});

describe("one tenant's heavy reads beside another tenant's dashboard", () => {
  let server: Server;
  let heavy: ProjectKeys;
  let light: ProjectKeys;
  const D0 = Date.UTC(2026, 2, 1);
  beforeAll(async () => {
    server = await startServer({ env: { ...UNLIMITED, READ_QUEUE_PER_PROJECT: '16' } }); // a small queue, to see its overflow
    heavy = await createProject(server.base, 'heavy');
    light = await createProject(server.base, 'light');
    // 300k events of the heavy tenant over 30 days, 20k of the light one, through the API.
    const batch = (n: number, days: number) => ({
      events: Array.from({ length: 1000 }, (_, i) => ({
        event: i % 4 ? '$pageview' : 'signup',
        anonymous_id: `a-${(n * 1000 + i) % 20_000}`,
        timestamp: new Date(D0 + ((n * 1000 + i) * 7919 % (days * 86_400_000))).toISOString(),
        url: `https://shop.example.com/p/${i % 9}?utm_source=s${i % 7}`,
      })),
    });
    for (let n = 0; n < 300; n += 4) await Promise.all([0, 1, 2, 3].map((k) => post(server.base, '/v1/batch', heavy.sk, batch(n + k, 30))));
    for (let n = 0; n < 20; n++) await post(server.base, '/v1/batch', light.sk, batch(n, 30));
  });
  afterAll(() => server?.dispose());

  const range = (shiftMs: number) => `from=${new Date(D0 + shiftMs).toISOString()}&to=${new Date(D0 + 30 * 86_400_000).toISOString()}`;
  const get = async (key: string, qs: string) => (await call(server.base, 'GET', `/v1/stats?${qs}`, { key })).status;
  // A raw-events read of the whole range (from is not day-aligned) grouped twice: the expensive shape.
  const heavyRead = () => get(heavy.rk, `${range(1000)}&group_by=source,medium&interval=hour`);
  const lightRead = () => get(light.rk, `${range(0)}&group_by=source`);

  it("delays the other tenant's reads by about one of its turns, not by its backlog, and answers its own overflow 429", async () => {
    const single = (await loops(1, 3_000, heavyRead)).latencies;
    await loops(1, 1_000, lightRead);
    const quiet = await loops(1, 4_000, lightRead);
    let heavyStatuses: Record<number, number> = {};
    const [busy] = await Promise.all([
      (async () => {
        await new Promise((r) => setTimeout(r, 500)); // the heavy tenant's backlog is queued first
        return loops(1, 6_000, lightRead);
      })(),
      loops(8, 7_000, heavyRead).then((r) => (heavyStatuses = r.statuses)),
    ]);
    expect(Object.keys(busy.statuses)).toEqual(['200']);
    expect(Object.keys(heavyStatuses).every((s) => s === '200' || s === '429')).toBe(true);
    // Before the fair gate a light read queued behind all eight heavy ones (~8 turns); now at most the running one.
    expect(pct(busy.latencies, 95)).toBeLessThan(pct(quiet.latencies, 95) + 3 * pct(single, 50));

    const burst = await Promise.all(Array.from({ length: 60 }, () => call(server.base, 'GET', `/v1/stats?${range(1000)}&group_by=source`, { key: heavy.rk })));
    const limited = burst.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]!.body).toEqual({ error: 'rate_limited', retry_after_s: 1 });
    expect(burst.every((r) => r.status === 200 || r.status === 429)).toBe(true);
  });
});
