import { gzipSync } from 'node:zlib';
import { ATTACKER_IP, type LoopResult, UNLIMITED, base62, bystanderTrack, bystanderUnhurt, expectBystanderUnhurt, loops, maxSizeBatch, pct, post, report, resetPeak, rssMiB, serverWithProject } from './support/hostile';
import { ORIGIN, type ProjectKeys, type Server, call, createProject, queryEvents, sleep, startServer } from './support/server';
import { MAX_ERROR_ANSWER_BYTES, WORST_BODIES } from '@analytics/testing';
import { MCP_CAPABILITIES } from '@analytics/schema';

// One key must not stall every project's writes or exhaust memory: each attack on a fresh server, beside a bystander
// project's track traffic (10 connections from its own address), measured quiet and then under the attack.

const countOf = (server: Server, projectId: string, where = '') =>
  Number(queryEvents<{ n: string }>(server.dataDir, `SELECT count() AS n FROM analytics.events WHERE project_id = '${projectId}' ${where}`)[0]!.n);

const acked = (...results: LoopResult[]) => results.reduce((n, r) => n + (r.statuses[202] ?? 0), 0);

/**
 * The bystander warmed up, measured quiet, then measured again while `attack` runs (from 1 s before to its end). The
 * quiet figure is the slower of two 2.5 s windows: on the shared 2-core machine one lone window read 178 to 511 req/s
 * across runs, and the attacked window is compared with it (an attack that stalls writes drops it near 0 either way).
 */
async function measure(server: Server, bystander: ProjectKeys, attack: (ms: number) => Promise<LoopResult>) {
  const warmup = await bystanderTrack(server, bystander.sk, 1_000);
  const quietA = await bystanderTrack(server, bystander.sk, 2_500);
  const quietB = await bystanderTrack(server, bystander.sk, 2_500);
  const quiet = quietA.perS <= quietB.perS ? quietA : quietB;
  const [busy, attacked] = await Promise.all([sleep(1_000).then(() => bystanderTrack(server, bystander.sk, 5_000)), attack(6_000)]);
  return { bystanderAcked: acked(warmup, quietA, quietB, busy), quiet, busy, attacked };
}

interface Trial {
  server: Server;
  bystander: ProjectKeys;
  attacker: ProjectKeys;
}

/**
 * One attack beside the bystander on a fresh server (removed after). `trial` runs it, asserts what must hold on every
 * run (statuses, every acknowledged event stored) and returns the bystander's windows; then the bystander bound is
 * asserted. When that bound alone misses, the trial runs once more on another fresh server and the second decides:
 * the shared CI machine's speed drifts between a quiet window and the attacked one seconds later (the bound missed in
 * CI at 0.47 of quiet twice, 217 against 462 and 242 against 511 req/s, where the same attacks run at 0.72-0.98 alone
 * on a quiet machine). A drift does not repeat on demand; a stall (0.00 before issue 26) misses every trial.
 */
async function bystanderTrials(attackerName: string, trial: (t: Trial) => Promise<{ quiet: LoopResult; busy: LoopResult }>, { initdb = false, minShare = 0.5 } = {}) {
  for (let n = 1; ; n++) {
    const server = await startServer({ env: UNLIMITED, initdb });
    try {
      const bystander = await createProject(server.base, 'bystander');
      const attacker = await createProject(server.base, attackerName);
      const { quiet, busy } = await trial({ server, bystander, attacker });
      // Every bystander write is answered 202 on every trial.
      expect(Object.keys(quiet.statuses)).toEqual(['202']);
      expect(Object.keys(busy.statuses)).toEqual(['202']);
      if (n === 2 || bystanderUnhurt(quiet, busy, minShare)) return expectBystanderUnhurt(quiet, busy, minShare);
      report('bystander track, trial 1 missed the bound (a second trial on a fresh server decides)', {
        'quiet req/s': quiet.perS, 'attacked req/s': busy.perS, 'quiet p99 ms': pct(quiet.latencies, 99), 'attacked p99 ms': pct(busy.latencies, 99),
      });
    } finally {
      await server.dispose();
    }
  }
}

describe('one key sends 1000-event batches spread over 75 months, 4 at a time', () => {
  it("leaves another project's track throughput and p99 near their quiet values, and stores every acknowledged event", async () => {
    await bystanderTrials('spreader', async ({ server, bystander, attacker }) => {
      // 75 months from 2000, 13 or 14 events each: one partition per month, three far-lane chunks per batch. The far
      // lane writes FAR_PARTITIONS_PER_S (25) partitions a second whatever the spread, so the bystander meets the same
      // load as with 1000 months (the four first batches alone keep it busy for 12 s, past the 6 s window); the test
      // only waits less for the throttled tail (4 x 1000 months drained for ~100 s after the window, 4 x 250 for ~40 s).
      const spread = { events: Array.from({ length: 1000 }, (_, i) => ({ event: 'spread', anonymous_id: `s-${i}`, timestamp: new Date(Date.UTC(2000, i % 75, 15)).toISOString() })) };
      const { bystanderAcked, quiet, busy, attacked } = await measure(server, bystander, (ms) => loops(4, ms, async () => (await post(server.base, '/v1/batch', attacker.sk, spread, ATTACKER_IP)).status));
      report('spread batches', { answered: attacked.latencies.length, ...attacked.statuses });
      expect(Object.keys(attacked.statuses).every((s) => s === '202' || s === '429')).toBe(true);
      expect(await server.stop()).toBe(0);
      expect(countOf(server, attacker.id)).toBe(acked(attacked) * 1000);
      expect(countOf(server, bystander.id)).toBe(bystanderAcked);
      return { quiet, busy };
    });
  });
});

describe('one key sends POST /v1/forget for random unknown users in 4 loops', () => {
  it("leaves another project's writes near their quiet values, still forgets a real user within seconds, and leaves few mutations", async () => {
    await bystanderTrials('forgetter', async ({ server, bystander, attacker }) => {
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
      return { quiet, busy };
    });
  });
});

describe('bodies that become much larger than they arrive: gzip batches and /mcp', () => {
  const ctx = serverWithProject('bodies', { each: true, initdb: true });

  it('32 concurrent gzip batches with the public pk_ key (~13 MB inflated each) keep the peak within idle + 896 MiB and store every acknowledged event', async () => {
    const { server, p } = ctx;
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
    // The one accepted batch's 13 MB of JSON parsed and written: 719 MiB over idle on Node 20, 757-815 on Node 24 (CI),
    // whose V8 collects later; the budget keeps the other 31 from adding theirs.
    expect(peak - idle).toBeLessThanOrEqual(896);
    expect(await server.stop()).toBe(0);
    expect(countOf(server, p.id)).toBe(statuses.filter((s) => s === 202).length * 1000);
  });

  it('64 concurrent 14 MB POST /mcp bodies with an rk_ key keep the peak within idle + 768 MiB, each answered with an error envelope or 503', async () => {
    const { server, p } = ctx;
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
      // 408: a body that did not arrive whole within BODY_READ_TIMEOUT_MS (64 senders in one process on 2 cores), also enveloped
      expect([400, 408, 503]).toContain(a.status);
      expect(a.body?.jsonrpc).toBe('2.0');
    }
    expect((await call(server.base, 'GET', '/healthz')).status).toBe(200);
  });
});

describe('one key sends the worst read shapes of issue 43, one after another', () => {
  it("answers each with a bounded 400 (an argument error over MCP), never stalls the event loop for seconds, and leaves another project's writes near their quiet values", async () => {
    // The worst bodies (500 copies of a metric, 1.8 MB of invalid filters, ...), each also through MCP, and a
    // batch of 1000 invalid events: each was seconds of event loop (6.8 s, 4.3 s) and up to 54 MB of answer.
    const rpc = (name: string, args: unknown) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
    // Each read route's tool, from the capability declarations (libs/schema's routes declared with `mcp`).
    const TOOL = Object.fromEntries(MCP_CAPABILITIES.map((c) => [c.route.path, c.mcp.tool])) as Record<string, string>;
    const badEvents = { events: Array.from({ length: 1000 }, () => ({ event: 1, anonymous_id: 2, url: 3, properties: 4, timestamp: 5 })) };
    const shapes = [
      ...WORST_BODIES.flatMap(([, path, body]) => [[path, JSON.stringify(body)], ['/mcp', JSON.stringify(rpc(TOOL[path]!, body))]] as const),
      ['/v1/batch', JSON.stringify(badEvents)] as const,
    ];
    await bystanderTrials('shapes', async ({ server, bystander, attacker }) => {
      const lagMaxMs = async () => Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec((await call(server.base, 'GET', '/metrics')).text)?.[1]) * 1000;
      let largest = 0;
      let quietLag = 0;
      let attackLag = 0;
      let rssOverIdle = 0;
      const outcomes: Record<string, number> = {};
      await lagMaxMs(); // prom-client's lag histogram restarts at each scrape: from here, the quiet windows
      const { quiet, busy, attacked } = await measure(server, bystander, async (ms) => {
        quietLag = await lagMaxMs();
        resetPeak(server);
        const idle = rssMiB(server, 'VmRSS');
        const attack = await loops(1, ms, async (i) => {
          const [path, body] = shapes[i % shapes.length]!;
          const r = await fetch(`${server.base}${path}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${path === '/v1/batch' ? attacker.sk : attacker.rk}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-forwarded-for': ATTACKER_IP },
            body,
          });
          const text = await r.text();
          largest = Math.max(largest, Buffer.byteLength(text));
          const answer = JSON.parse(text) as { error?: string; result?: { isError?: boolean; structuredContent?: { error?: string } } };
          const outcome = path === '/mcp' ? `mcp ${answer.result?.isError ? answer.result.structuredContent?.error : JSON.stringify(answer).slice(0, 80)}` : `${r.status} ${answer.error}`;
          outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
          return r.status;
        });
        attackLag = await lagMaxMs();
        rssOverIdle = rssMiB(server, 'VmHWM') - idle;
        return attack;
      });
      report('worst read shapes', { answered: attacked.latencies.length, 'largest answer KB': largest / 1024, 'event-loop lag max ms, quiet': quietLag, 'under the attack': attackLag, 'peak RSS over idle MiB': rssOverIdle, ...outcomes });
      expect(Object.keys(outcomes).sort()).toEqual(['400 invalid_payload', 'mcp invalid_params']);
      expect(largest).toBeLessThanOrEqual(MAX_ERROR_ANSWER_BYTES);
      // Parsing a 1.8 MB body is tens of milliseconds and its validation nothing: not the seconds each shape stalled the
      // loop for (measured against the quiet windows' own stalls: the shared machine descheduled the server for ~1 s).
      expect(attackLag).toBeLessThan(Math.max(2 * quietLag, quietLag + 1_000));
      // Each refused body's parse leaves tens of MiB of short-lived objects; how much the heap grows before collecting
      // them is V8's choice: peak RSS over idle measured 137-202 MiB on Node 20 and 284-300 on Node 24 (CI). Before the
      // bounded shapes, 500 copies of one metric alone took +850 MiB.
      expect(rssOverIdle).toBeLessThan(384);
      return { quiet, busy };
      // The memory bound is against a first start's idle state (StartOptions.initdb). The throughput bound is a third:
      // this attacker is one sequential connection whose every request is a JSON.parse of up to 1.7 MB (10-16 ms of the
      // one main thread, measured), refused only once parsed, so it can hold about half of that thread; the bystander
      // measured 0.47-0.50 of quiet across runs on this 2-core machine, event-loop lag 75-82 ms against 20-26 quiet.
    }, { initdb: true, minShare: 1 / 3 });
  });
});
