import { UNLIMITED, pct, report } from './support/hostile';
import { type ProjectKeys, type Server, call, createProject, sleep, startServer } from './support/server';

// Issue 43, "one tenant's single heavy read starves every other dashboard": project A loops one funnel (10 steps, the
// widest window, a breakdown) over its own visitor with 2,000 events, one read in flight at a time, while project B
// loads its dashboard (12 insights calls in parallel) now and then. Before the fair gate B's load went from 0.3-0.6 s
// to 15-18 s with 3-5 of its 12 calls answered 429: the turn went to the "quiet" project, A, every time.

const D0 = Date.UTC(2026, 2, 1);
const RANGE = { from: '2026-03-01', to: '2026-03-29' };
const list = (dimension: string, metric: string) => ({ ...RANGE, metrics: [metric], dimensions: [dimension], limit: 10 });
/** The dashboard's load (apps/dashboard/src/main.ts): headline with compare, the chart, ten lists. */
const DASHBOARD = [
  { ...RANGE, metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration', 'events'], compare: 'previous_period' },
  { ...RANGE, metrics: ['visitors', 'pageviews'], dimensions: ['time:day'], limit: 10_000 },
  ...[['source', 'visitors'], ['channel', 'visitors'], ['path', 'visitors'], ['entry_path', 'visits'], ['exit_path', 'visits'], ['country', 'visitors'], ['device_type', 'visitors'], ['browser', 'visitors'], ['os', 'visitors'], ['event_name', 'events']].map(([d, m]) => list(d!, m!)),
];
const HEAVY_FUNNEL = { ...RANGE, steps: Array.from({ length: 10 }, () => ({ event: '$pageview' })), window_s: 2_592_000, breakdown: 'path' };

describe("one tenant looping its heaviest read beside another tenant's dashboard", () => {
  let server: Server;
  let a: ProjectKeys;
  let b: ProjectKeys;
  beforeAll(async () => {
    server = await startServer({ env: UNLIMITED });
    [a, b] = [await createProject(server.base, 'heavy'), await createProject(server.base, 'dashboard')];
    for (let k = 0; k < 2; k++) {
      const events = Array.from({ length: 1000 }, (_, i) => ({ event: '$pageview', anonymous_id: 'one-visitor', timestamp: new Date(D0 + (k * 1000 + i) * 60_000).toISOString(), url: `https://shop.example.com/p/${i % 7}` }));
      expect((await call(server.base, 'POST', '/v1/batch', { key: a.sk, body: { events } })).status).toBe(202);
    }
    for (let k = 0; k < 5; k++) {
      const events = Array.from({ length: 1000 }, (_, i) => ({
        event: i % 5 ? '$pageview' : 'signup',
        anonymous_id: `v-${(k * 1000 + i) % 700}`,
        timestamp: new Date(D0 + (((k * 1000 + i) * 7919) % (28 * 86_400_000))).toISOString(),
        url: `https://shop.example.com/p/${i % 9}?utm_source=s${i % 7}`,
      }));
      expect((await call(server.base, 'POST', '/v1/batch', { key: b.sk, body: { events } })).status).toBe(202);
    }
  });
  afterAll(() => server?.dispose());

  /** One load of B's dashboard: wall ms and the 12 statuses. */
  const load = async () => {
    const t = performance.now();
    const answers = await Promise.all(DASHBOARD.map((body) => call(server.base, 'POST', '/v1/insights', { key: b.rk, body })));
    return { ms: performance.now() - t, statuses: answers.map((r) => r.status) };
  };

  it('keeps B\'s dashboard within 2x its quiet time + 300 ms, without a 429, while A still completes its reads', async () => {
    expect((await call(server.base, 'POST', '/v1/funnel', { key: a.rk, body: HEAVY_FUNNEL })).status).toBe(200);
    await load(); // warm-up
    const quiet: number[] = [];
    for (let i = 0; i < 5; i++) quiet.push((await load()).ms);

    let stop = false;
    const heavy: Record<number, number> = {};
    const heavyLoop = (async () => {
      while (!stop) {
        const s = (await call(server.base, 'POST', '/v1/funnel', { key: a.rk, body: HEAVY_FUNNEL })).status;
        heavy[s] = (heavy[s] ?? 0) + 1;
      }
    })();
    await sleep(5_000); // A's recent engine time builds up; B's from the quiet loads decays
    const busy: Array<{ ms: number; statuses: number[] }> = [];
    for (let i = 0; i < 6; i++) {
      busy.push(await load());
      await sleep(1_500); // someone reading the dashboard; A's loop meanwhile has the engine to itself
    }
    stop = true;
    await heavyLoop;

    const quietMs = pct(quiet, 50);
    const busyMs = busy.map((l) => l.ms);
    report('heavy tenant', { 'B quiet p50 ms': quietMs, 'B busy p50 ms': pct(busyMs, 50), 'B busy max ms': Math.max(...busyMs), 'A funnels': JSON.stringify(heavy) });
    const failed = busy.flatMap((l) => l.statuses).filter((s) => s !== 200);
    // A failure names its cause: the server's error lines (a 500 met once in CI, unexplained by the answer alone).
    if (failed.length > 0) console.log(server.log().split('\n').filter((l) => /"level":(50|60)|"status(Code)?":5\d\d|Error/.test(l)).slice(-20).join('\n'));
    expect(failed).toEqual([]);
    // The target on the median load. The margin for a loaded machine (two cores shared with other test runs):
    // the median of 5 quiet and of 6 busy loads, so that one stall of the machine moves neither; the old tree's loads
    // took 12-19 s here.
    expect(pct(busyMs, 50)).toBeLessThan(2 * quietMs + 300);
    // No load waited out A's reads (a single funnel here took seconds before the funnel's chains became n log n).
    expect(Math.max(...busyMs)).toBeLessThan(3 * quietMs + 1_000);
    // A is not starved: its reads complete, none refused.
    expect(Object.keys(heavy)).toEqual(['200']);
    expect(heavy[200]).toBeGreaterThanOrEqual(5);
  });
});
