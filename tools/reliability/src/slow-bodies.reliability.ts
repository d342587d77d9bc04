import { type SlowBody, slowBody } from '@analytics/testing';
import { ATTACKER_IP, LEGIT_IP, UNLIMITED, pct, report } from './support/hostile';
import { ORIGIN, type ProjectKeys, type Server, call, createProject, sleep, startServer } from './support/server';

// Issue 43, "two slow connections with a site's public pk_ key stall every project": sockets that declare a 16 MiB
// body on POST /v1/track and send a byte a second. Before, the body budget reserved the declared length up front and
// kept it (no body deadline but Node's 300 s), so two of them made every other project's track and insights answer
// 503 server_busy. Now the budget counts what arrived and a body not whole within BODY_READ_TIMEOUT_MS is 408: the
// bystander's p95 under 8 such sockets (reconnecting as soon as refused) stays near its quiet p95, with no refusal.

const RANGE = { from: new Date(Date.now() - 7 * 86_400_000).toISOString(), to: new Date(Date.now() + 86_400_000).toISOString() };
const READ_TIMEOUT_MS = 2_000;

describe('slow bodies of one project beside another project', () => {
  let server: Server;
  let a: ProjectKeys;
  let b: ProjectKeys;
  beforeAll(async () => {
    server = await startServer({ env: { ...UNLIMITED, BODY_READ_TIMEOUT_MS: String(READ_TIMEOUT_MS) } });
    [a, b] = [await createProject(server.base, 'slow'), await createProject(server.base, 'bystander')];
  });
  afterAll(() => server?.dispose());

  /** B's track then insights, one after the other, for `ms`: each call's ms and status. */
  const bystander = async (ms: number) => {
    const out: Array<{ ms: number; status: number }> = [];
    const headers = { 'x-forwarded-for': LEGIT_IP };
    for (let i = 0, until = performance.now() + ms; performance.now() < until; i++) {
      const t = performance.now();
      const r = i % 2 === 0
        ? await call(server.base, 'POST', '/v1/track', { key: b.sk, headers, body: { event: 'bystander', anonymous_id: `b-${i}` } })
        : await call(server.base, 'POST', '/v1/insights', { key: b.rk, headers, body: { ...RANGE, metrics: ['visitors'] } });
      out.push({ ms: performance.now() - t, status: r.status });
    }
    return out;
  };

  it("keeps the bystander's p95 within 2x quiet + 200 ms and refuses none of its calls, while the slow bodies get 408 request_timeout", async () => {
    await bystander(1_000); // warm-up
    const quiet = await bystander(5_000);

    let stop = false;
    const slowAnswers: Record<string, number> = {};
    const open = new Set<SlowBody>();
    const attack = Promise.all(
      Array.from({ length: 8 }, async () => {
        while (!stop) {
          const s = slowBody(server.base, '/v1/track', a.pk, { headers: { Origin: ORIGIN, 'X-Forwarded-For': ATTACKER_IP } });
          open.add(s);
          await s.whenClosed;
          open.delete(s);
          slowAnswers[s.status] = (slowAnswers[s.status] ?? 0) + 1;
        }
      }),
    );
    await sleep(500);
    const busy = await bystander(3 * READ_TIMEOUT_MS + 1_000); // through at least two rounds of reconnects
    stop = true;
    for (const s of open) s.stop();
    await attack;

    const quietMs = quiet.map((c) => c.ms);
    const busyMs = busy.map((c) => c.ms);
    report('slow bodies', { 'quiet p50 ms': pct(quietMs, 50), 'quiet p95 ms': pct(quietMs, 95), 'busy p50 ms': pct(busyMs, 50), 'busy p95 ms': pct(busyMs, 95), 'slow answers': JSON.stringify(slowAnswers) });
    expect(busy.filter((c) => c.status !== 202 && c.status !== 200)).toEqual([]);
    expect(pct(busyMs, 95)).toBeLessThan(2 * pct(quietMs, 95) + 200);
    expect(slowAnswers['408']).toBeGreaterThanOrEqual(8); // every socket refused at its deadline at least once
  });
});
