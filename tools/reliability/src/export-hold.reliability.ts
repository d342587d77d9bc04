import { type ClientRequest, type IncomingMessage, get as httpGet } from 'node:http';
import { UNLIMITED, pct, post, report } from './support/hostile';
import { type ProjectKeys, type Server, call, createProject, sleep, startServer } from './support/server';

// Issue 43, "an export whose client never reads holds its turn forever": two clients open exports (two projects: one
// export per project) and never read. Their writes waited on `drain` with no deadline, the engine's time limit never
// ran (nobody pulled the stream), and with both export turns held (EXPORT_CONCURRENCY 2) every other project's export
// was 429 after its 10 s queue wait. Here the attackers keep a second non-reading export queued at all times, to take
// a freed turn at once. The server runs with the default export settings.
const D0 = Date.UTC(2026, 2, 2);
const DAY = 86_400_000;
const qs = `from=${new Date(D0).toISOString()}&to=${new Date(D0 + DAY).toISOString()}`;

describe('two clients that open exports and never read', () => {
  let server: Server;
  let attackers: ProjectKeys[];
  let bystander: ProjectKeys;
  beforeAll(async () => {
    server = await startServer({ env: UNLIMITED });
    attackers = [await createProject(server.base, 'holder-1'), await createProject(server.base, 'holder-2')];
    bystander = await createProject(server.base, 'bystander');
    // 40,000 events of ~700 bytes each per holder (about 28 MB of NDJSON): far more than the socket buffers of a client
    // that reads nothing take in.
    const batch = (n: number) => ({
      events: Array.from({ length: 1000 }, (_, i) => ({
        event: 'bulk',
        anonymous_id: `a-${i % 500}`,
        timestamp: new Date(D0 + (n * 1000 + i) * 1000).toISOString(),
        path: `/p/${i}`,
        properties: { pad: 'x'.repeat(400), n: n * 1000 + i },
      })),
    });
    for (const holder of attackers) for (let n = 0; n < 40; n += 4) await Promise.all([0, 1, 2, 3].map((k) => post(server.base, '/v1/batch', holder.sk, batch(n + k))));
    await post(server.base, '/v1/batch', bystander.sk, batch(0));
  });
  afterAll(() => server?.dispose());

  /** The bystander's export of its 1000 events: status and wall time. */
  const bystanderExport = async () => {
    const t = performance.now();
    const r = await call(server.base, 'GET', `/v1/export?${qs}`, { key: bystander.rk });
    return { status: r.status, ms: performance.now() - t, lines: r.text.split('\n').filter(Boolean).length };
  };

  it("other projects' exports still answer 200 within a few seconds, quiet and while the holds last", async () => {
    const quiet: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await bystanderExport();
      expect([r.status, r.lines]).toEqual([200, 1000]);
      quiet.push(r.ms);
    }

    // Each holder opens a non-reading export every 500 ms: one holds the project's turn, one waits to take it over.
    const held: Array<{ req: ClientRequest; res?: IncomingMessage }> = [];
    const answers: Record<string, number> = {};
    let stop = false;
    const open = (key: string) => {
      const hold: { req: ClientRequest; res?: IncomingMessage } = {
        req: httpGet(`${server.base}/v1/export?${qs}`, { headers: { authorization: `Bearer ${key}` } }, (res) => {
          hold.res = res;
          answers[res.statusCode!] = (answers[res.statusCode!] ?? 0) + 1;
          // A refusal (429 while its project's queue is full) is read; a file never is.
          if (res.statusCode === 200) res.pause();
          else res.resume();
        }),
      };
      hold.req.on('error', () => undefined);
      held.push(hold);
    };
    const holding = (async () => {
      while (!stop) {
        for (const holder of attackers) open(holder.rk);
        await sleep(500);
      }
    })();
    // Both export turns are held before the bystander asks.
    const t0 = Date.now();
    while ((answers[200] ?? 0) < 2 && Date.now() - t0 < 20_000) await sleep(50);
    expect(answers[200]).toBeGreaterThanOrEqual(2);

    const during: Array<{ status: number; ms: number; lines: number }> = [];
    const until = Date.now() + 25_000;
    while (Date.now() < until) during.push(await bystanderExport());
    stop = true;
    await holding;
    for (const h of held) {
      h.res?.destroy();
      h.req.destroy();
    }
    const ms = during.map((d) => d.ms);
    report('bystander export', { 'quiet p50 ms': pct(quiet, 50), 'held p50 ms': pct(ms, 50), 'held max ms': Math.max(...ms), 'held exports': during.length, 'holder answers': JSON.stringify(answers) });
    expect(during.map((d) => [d.status, d.lines])).toEqual(during.map(() => [200, 1000]));
    // A few seconds: a stalled export gives its turn up 5 s after its client stopped taking bytes when another waits.
    expect(Math.max(...ms)).toBeLessThan(12_000);
    // The holders got their turns again and again (the attack went on), and nothing else failed.
    expect(answers[200]).toBeGreaterThan(2);
    expect(Object.keys(answers).every((s) => s === '200' || s === '429')).toBe(true);
    expect(server.log()).not.toMatch(/"level":50/);
  });
});
