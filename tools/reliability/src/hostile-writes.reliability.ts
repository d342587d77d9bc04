import { gzipSync } from 'node:zlib';
import { ATTACKER_IP, type LoopResult, UNLIMITED, base62, bystanderTrack, expectBystanderUnhurt, loops, maxSizeBatch, post, report, resetPeak, rssMiB } from './support/hostile';
import { ORIGIN, type ProjectKeys, type Server, call, createProject, queryEvents, sleep, startServer } from './support/server';

// One key must not stall every project's writes or exhaust memory: each attack on a fresh server, beside a bystander
// project's track traffic (10 connections from its own address), measured quiet and then under the attack.

const countOf = (server: Server, projectId: string, where = '') =>
  Number(queryEvents<{ n: string }>(server.dataDir, `SELECT count() AS n FROM analytics.events WHERE project_id = '${projectId}' ${where}`)[0]!.n);

const acked = (...results: LoopResult[]) => results.reduce((n, r) => n + (r.statuses[202] ?? 0), 0);

/** The bystander warmed up, measured quiet, then measured again while `attack` runs (from 1 s before to its end). */
async function measure(server: Server, bystander: ProjectKeys, attack: (ms: number) => Promise<LoopResult>) {
  const warmup = await bystanderTrack(server, bystander.sk, 1_000);
  const quiet = await bystanderTrack(server, bystander.sk, 5_000);
  const [busy, attacked] = await Promise.all([sleep(1_000).then(() => bystanderTrack(server, bystander.sk, 5_000)), attack(6_000)]);
  return { bystanderAcked: acked(warmup, quiet, busy), quiet, busy, attacked };
}

/** A fresh server with a bystander project and an attacker's, for one describe block. */
function attackedServer(attackerName: string) {
  const ctx = {} as { server: Server; bystander: ProjectKeys; attacker: ProjectKeys };
  beforeAll(async () => {
    ctx.server = await startServer({ env: UNLIMITED });
    ctx.bystander = await createProject(ctx.server.base, 'bystander');
    ctx.attacker = await createProject(ctx.server.base, attackerName);
  });
  afterAll(() => ctx.server?.dispose());
  return ctx;
}

describe('one key sends 1000-event batches spread over 1000 months, 4 at a time', () => {
  const ctx = attackedServer('spreader');

  it("leaves another project's track throughput and p99 near their quiet values, and stores every acknowledged event", async () => {
    const { server, bystander, attacker } = ctx;
    // Every month of 2000-2083: all inside the accepted 2000-2099 range, one partition each.
    const spread = { events: Array.from({ length: 1000 }, (_, i) => ({ event: 'spread', anonymous_id: `s-${i}`, timestamp: new Date(Date.UTC(2000, i, 15)).toISOString() })) };
    const { bystanderAcked, quiet, busy, attacked } = await measure(server, bystander, (ms) => loops(4, ms, async () => (await post(server.base, '/v1/batch', attacker.sk, spread, ATTACKER_IP)).status));
    report('spread batches', { answered: attacked.latencies.length, ...attacked.statuses });
    expectBystanderUnhurt(quiet, busy);
    expect(Object.keys(attacked.statuses).every((s) => s === '202' || s === '429')).toBe(true);
    expect(await server.stop()).toBe(0);
    expect(countOf(server, attacker.id)).toBe(acked(attacked) * 1000);
    expect(countOf(server, bystander.id)).toBe(bystanderAcked);
  });
});

describe('one key sends POST /v1/forget for random unknown users in 4 loops', () => {
  const ctx = attackedServer('forgetter');

  it("leaves another project's writes near their quiet values, still forgets a real user within seconds, and leaves few mutations", async () => {
    const { server, bystander, attacker } = ctx;
    const real = { events: Array.from({ length: 20 }, (_, i) => ({ event: 'mine', user_id: i % 2 ? 'real-user' : 'kept-user', anonymous_id: `r-${i}` })) };
    expect((await post(server.base, '/v1/batch', attacker.sk, real)).status).toBe(202);
    let realForget = 0;
    const { bystanderAcked, quiet, busy, attacked } = await measure(server, bystander, async (ms) => {
      const storm = loops(4, ms, async () => (await post(server.base, '/v1/forget', attacker.sk, { user_id: `nobody-${base62(16)}` }, ATTACKER_IP)).status);
      await sleep(2_000);
      realForget = (await post(server.base, '/v1/forget', attacker.sk, { user_id: 'real-user' }, ATTACKER_IP)).status;
      return storm;
    });
    report('forgets', { 'answered in 6 s': attacked.latencies.length, ...attacked.statuses });
    expectBystanderUnhurt(quiet, busy);
    expect(realForget).toBe(202);
    expect(Object.keys(attacked.statuses)).toEqual(['202']);
    expect(acked(attacked)).toBeGreaterThanOrEqual(40); // a storm: one flush every 250 ms answers every forget queued meanwhile
    // The real user's events go within seconds; the other user's stay.
    let left = -1;
    for (let t = Date.now(); Date.now() - t < 15_000; await sleep(250)) {
      const r = await call<{ rows: unknown[] }>(server.base, 'GET', `/v1/query?from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z&user_id=real-user`, { key: attacker.rk });
      left = r.body.rows.length;
      if (left === 0) break;
    }
    expect(left).toBe(0);
    expect(await server.stop()).toBe(0);
    expect(countOf(server, attacker.id, "AND user_id = 'kept-user'")).toBe(10);
    expect(countOf(server, bystander.id)).toBe(bystanderAcked);
    // Unknown users submit no mutation: the storm left (at most) the real user's. The migrations' own mutations
    // (009 and 011 rewrite columns of stored parts) are not the storm's.
    const mutations = queryEvents<{ n: string }>(
      server.dataDir,
      "SELECT count() AS n FROM system.mutations WHERE database = 'analytics' AND command NOT LIKE '%MATERIALIZE COLUMN%' AND command NOT LIKE '%MODIFY COLUMN%'",
    );
    expect(Number(mutations[0]!.n)).toBeLessThanOrEqual(1);
  });
});

describe('bodies that become much larger than they arrive: gzip batches and /mcp', () => {
  let server: Server;
  let p: ProjectKeys;
  beforeEach(async () => {
    server = await startServer({ env: UNLIMITED });
    p = await createProject(server.base, 'bodies');
  });
  afterEach(() => server?.dispose());

  it('32 concurrent gzip batches with the public pk_ key (~13 MB inflated each) keep the peak within idle + 768 MiB and store every acknowledged event', async () => {
    const json = maxSizeBatch();
    expect(json.length).toBeGreaterThan(13_000_000);
    const gz = gzipSync(json, { level: 9 });
    expect(gz.length).toBeLessThan(200_000);
    resetPeak(server);
    const idle = rssMiB(server, 'VmRSS');
    const answers = await Promise.all(
      Array.from({ length: 32 }, () => post(server.base, '/v1/batch', p.pk, gz, ATTACKER_IP, { 'content-encoding': 'gzip', origin: ORIGIN })),
    );
    const peak = rssMiB(server, 'VmHWM');
    const statuses = answers.map((r) => r.status);
    report('gzip bodies', { 'idle MiB': idle, 'peak over idle MiB': peak - idle, '202': statuses.filter((s) => s === 202).length, '503': statuses.filter((s) => s === 503).length });
    expect(statuses.filter((s) => s !== 202 && s !== 503)).toEqual([]);
    expect(statuses).toContain(202);
    expect(peak - idle).toBeLessThanOrEqual(768);
    expect(await server.stop()).toBe(0);
    expect(countOf(server, p.id)).toBe(statuses.filter((s) => s === 202).length * 1000);
  });

  it('64 concurrent 14 MB POST /mcp bodies with an rk_ key keep the peak within idle + 768 MiB, each answered with an error envelope or 503', async () => {
    // A JSON-RPC batch of ~120,000 tool calls.
    const call1 = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_stats', arguments: { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' } } });
    const messages = [];
    let size = 2;
    for (let id = 0; size < 14_000_000; id++) {
      const m = call1(id);
      size += JSON.stringify(m).length + 1;
      messages.push(m);
    }
    const body = JSON.stringify(messages);
    resetPeak(server);
    const idle = rssMiB(server, 'VmRSS');
    const answers = await Promise.all(
      Array.from({ length: 64 }, () =>
        fetch(`${server.base}/mcp`, {
          method: 'POST',
          headers: { authorization: `Bearer ${p.rk}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-forwarded-for': ATTACKER_IP },
          body,
        }).then(async (r) => ({ status: r.status, body: (await r.json().catch(() => null)) as { jsonrpc?: string; error?: { code: number; message: string } } | null })),
      ),
    );
    const peak = rssMiB(server, 'VmHWM');
    report('/mcp bodies', { 'idle MiB': idle, 'peak over idle MiB': peak - idle, statuses: [...new Set(answers.map((a) => a.status))].join('/') });
    expect(peak - idle).toBeLessThanOrEqual(768);
    for (const a of answers) {
      expect([400, 503]).toContain(a.status);
      expect(a.body?.jsonrpc).toBe('2.0');
    }
    expect((await call(server.base, 'GET', '/healthz')).status).toBe(200);
  });
});
