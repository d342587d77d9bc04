// Hostile-load benchmark: what an attacker or a greedy tenant costs the others, against the built
// standalone server (`npm start`'s dist/apps/standalone/main.js) on the embedded stores.
//
//   flood   legitimate track traffic (10 connections) alone, then beside 50 connections of well-formed random keys
//           from another client IP: req/s and p99 of the legitimate traffic, server CPU per request.
//   bodies  64 concurrent /v1/batch bodies of 1000 events at every field's limit (~14 MB each): idle RSS, peak RSS
//           (the kernel's VmHWM), answers, and every acknowledged event counted in the store after the stop.
//   reader  10M events of project H and 1M of project L (30 days, loaded inside ClickHouse before the server starts):
//           L's /v1/stats p50/p95 and L's track throughput, quiet and while H runs 8 concurrent raw stats queries
//           over its whole range.
//   spread  a bystander project's track traffic (10 connections) quiet, then while another key sends 1000-event batches
//           whose events fall in 1000 different months, 4 at a time: bystander req/s, p99, CPU; every 202 stored.
//   forget  the same bystander, quiet and while another key sends POST /v1/forget for random unknown users in 4 loops.
//   gzip    32 concurrent gzip batches with the public pk_ key (~110 KB on the wire, ~13 MB inflated): peak RSS.
//   mcp     64 concurrent 14 MB POST /mcp bodies (a JSON-RPC batch of ~120,000 calls) with an rk_ key: peak RSS.
//   exporthold  a bystander's GET /v1/export (10,000 events) quiet, then while two other projects keep non-reading
//           exports open (and one queued each, to take a freed turn at once): its wall time p50/max and answers.
//   shapes  a bystander project's track traffic (10 connections) and insights reads (2 loops), quiet, then while another
//           key sends the worst read shapes in 4 loops (500 copies of a metric, 1.8 MB of invalid filters, a batch of 1000
//           invalid events, those filters through MCP): the attack's answers and largest answer, the bystander's req/s,
//           p99 and read p50/p99, the server's event-loop lag (max over each phase, from /metrics) and peak RSS over idle.
//   signin  the same bystander, quiet and while 64 loops send POST /auth/login with unknown emails from ever new client
//           addresses (a distributed guesser: no throttle stops it, each attempt costs a scrypt hash at OWASP's
//           parameters): bystander req/s and p99, the sign-in answers (401, or 503 past the hashing queue), peak RSS.
//   register the same bystander, quiet and while 4 loops send POST /register (MCP OAuth's open dynamic client
//           registration, ~7 KB of metadata each) from 20 rotating client addresses: its figures, the registrations'
//           answers (201 stored, 429 past 10 an hour per address, 503 past 10,000 clients) and the clients stored.
//   heavyread  project A loops one funnel (10 steps, the widest window, a breakdown) over its own visitor with 2,000
//           events, one in flight, while project B (5,000 events over 28 days) loads its dashboard (12 insights calls
//           in parallel) with a pause of 1 s after each load: B's load p50/p95 quiet and while A loops, B's answers,
//           A's completed funnels per minute, server CPU per read.
//
//   slowbodies a bystander project's track and insights calls, one after the other: their p50/p95 quiet, then while 8
//           sockets of another project's public pk_ key declare 16 MiB bodies and send one byte a second (each
//           reconnecting when refused): the bystander's figures and answers, and the slow sockets' answers (408 at
//           BODY_READ_TIMEOUT_MS).
//
//   npm run build && node tools/bench/hostile.mjs                    # every scenario
//   node tools/bench/hostile.mjs --only=spread,forget,gzip,mcp        # the hostile writes
//   node tools/bench/hostile.mjs --only=shapes --duration=10         # the worst read shapes
//   node tools/bench/hostile.mjs --only=heavyread                     # one tenant's heavy read beside a dashboard
//   node tools/bench/hostile.mjs --only=slowbodies --duration=30     # slow bodies beside a bystander
//   node tools/bench/hostile.mjs --only=flood,bodies --duration=10   # some; seconds per phase
//   node tools/bench/hostile.mjs --server-dir=/tmp/before            # measure another checkout's build (before/after)
//   BENCH_EVENTS=10000000 (project H of the reader scenario; L gets a tenth)
import autocannon from 'autocannon';
import { build } from 'esbuild';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ADMIN_TOKEN, UNLIMITED, bundleFromSource, cpuMsOf, createProject, fmt, memoryOf, pct, queryStore, sampleEvent, sleep, startService } from './lib.mjs';
import { syntheticEventsSql } from './synthetic-events.mjs';

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const ONLY = arg('only', 'flood,bodies,reader,spread,forget,gzip,mcp,heavyread,exporthold,shapes,signin,register,slowbodies').split(',');
const DURATION = Number(arg('duration', 15));
const SERVER_DIR = resolve(arg('server-dir', process.cwd()));
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000_000);
const SERVER_ENV = { ...UNLIMITED, ...(process.env.BODY_BUDGET_BYTES ? { BODY_BUDGET_BYTES: process.env.BODY_BUDGET_BYTES } : {}) };
const LEGIT_IP = '203.0.113.10';
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const base62 = (n) => randomBytes(n * 2).toString('base64').replace(/[^0-9A-Za-z]/g, '').slice(0, n).padEnd(n, 'a');

console.log(`machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}; server from ${SERVER_DIR}`);

/** An autocannon run of track requests; `headers(i)` per request. */
function track(base, { connections, duration, key, ip, headers }) {
  let i = 0;
  return autocannon({
    url: `${base}/v1/track`,
    connections,
    duration,
    requests: [
      {
        method: 'POST',
        setupRequest: (req) => {
          const n = i++;
          return { ...req, headers: { 'content-type': 'application/json', 'x-forwarded-for': ip, authorization: `Bearer ${key}`, ...headers?.(n) }, body: JSON.stringify(sampleEvent(n)) };
        },
      },
    ],
  });
}

const row = (label, r, cpuMs) =>
  `  ${label.padEnd(34)} ${fmt(r.requests.average).padStart(7)} req/s  p50 ${fmt(r.latency.p50).padStart(5)} ms  p99 ${fmt(r.latency.p99).padStart(5)} ms  2xx ${fmt(r['2xx']).padStart(7)}  non-2xx ${fmt(r.non2xx).padStart(7)}` +
  (cpuMs === undefined ? '' : `  server CPU ${(cpuMs / Math.max(1, r['2xx'] + r.non2xx)).toFixed(3)} ms/req`);

async function flood() {
  const srv = await startService(SERVER_ENV, { nodeArgs: [], cwd: SERVER_DIR });
  try {
    const p = await createProject(srv.base, 'flood');
    await track(srv.base, { connections: 10, duration: 3, key: p.sk, ip: LEGIT_IP }); // warm-up
    console.log(`flood (load ${load()})`);
    let cpu0 = cpuMsOf(srv.pid);
    const quiet = await track(srv.base, { connections: 10, duration: DURATION, key: p.sk, ip: LEGIT_IP });
    console.log(row('legitimate, quiet', quiet, cpuMsOf(srv.pid) - cpu0));
    cpu0 = cpuMsOf(srv.pid);
    const [busy, attack] = await Promise.all([
      track(srv.base, { connections: 10, duration: DURATION, key: p.sk, ip: LEGIT_IP }),
      track(srv.base, { connections: 50, duration: DURATION, key: 'x', ip: '198.51.100.66', headers: () => ({ authorization: `Bearer sk_live_${base62(12)}_${base62(32)}` }) }),
    ]);
    const cpu = cpuMsOf(srv.pid) - cpu0;
    console.log(row('legitimate, during the flood', busy));
    console.log(row('random keys (the flood)', attack));
    console.log(`  server CPU during the flood ${(cpu / (busy['2xx'] + busy.non2xx + attack['2xx'] + attack.non2xx)).toFixed(3)} ms/req; ` +
      `throughput ratio ${(busy.requests.average / quiet.requests.average).toFixed(2)} (target >= 0.5), p99 ratio ${(busy.latency.p99 / quiet.latency.p99).toFixed(2)} (target < 2)`);
  } finally {
    await srv.stop();
    rmSync(srv.dataDir, { recursive: true, force: true });
  }
}

/** 1000 events with every field at its limit: ~14 MB of JSON. */
function maxBatch(tag) {
  const long = (n, c) => c.repeat(n);
  const url = `https://shop.example.com/${long(2048 - 'https://shop.example.com/'.length, 'u')}`;
  const events = Array.from({ length: 1000 }, (_, i) => ({
    event: `${tag}`.padEnd(128, 'e'),
    event_id: `${tag}-${i}`.padEnd(128, 'i'),
    anonymous_id: long(128, 'a'),
    user_id: long(256, 'u'),
    session_id: long(128, 's'),
    url,
    path: `/${long(2047, 'p')}`,
    referrer: url,
    properties: { blob: long(8192 - 12, 'x') },
  }));
  return JSON.stringify({ events });
}

async function bodies() {
  const srv = await startService(SERVER_ENV, { nodeArgs: [], cwd: SERVER_DIR });
  let acked = 0;
  try {
    const p = await createProject(srv.base, 'bodies');
    await sleep(2_000);
    const idle = memoryOf(srv.pid).rssMiB;
    const body = maxBatch('maxsize');
    console.log(`bodies (load ${load()}): 64 concurrent batches of ${(Buffer.byteLength(body) / 2 ** 20).toFixed(1)} MB, idle RSS ${fmt(idle)} MiB`);
    const t = performance.now();
    const statuses = await Promise.all(
      Array.from({ length: 64 }, () =>
        fetch(`${srv.base}/v1/batch`, { method: 'POST', headers: { authorization: `Bearer ${p.sk}`, 'content-type': 'application/json' }, body }).then(
          async (r) => (await r.arrayBuffer(), r.status),
          (e) => `network error: ${e.cause?.code ?? e.message}`,
        ),
      ),
    );
    const ms = performance.now() - t;
    const counts = {};
    for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
    acked = (counts[202] ?? 0) * 1000;
    const peak = srv.peakRssMiB();
    console.log(`  answers ${JSON.stringify(counts)} in ${fmt(ms)} ms; peak RSS ${fmt(peak)} MiB = idle + ${fmt(peak - idle)} MiB (target <= idle + 768)`);
  } finally {
    await srv.stop();
  }
  const [{ n }] = queryStore(srv.dataDir, "SELECT count() AS n FROM analytics.events WHERE startsWith(event_name, 'maxsize')");
  console.log(`  acknowledged ${fmt(acked)} events, stored ${fmt(Number(n))}${Number(n) === acked ? ' (all, once)' : ' MISMATCH'}`);
  rmSync(srv.dataDir, { recursive: true, force: true });
}

/** Loads the reader scenario's data into a DATA_DIR before any server opens it (chDB binds one directory per process). */
async function prepareReaderData() {
  const { lib } = await bundleFromSource('hostile-bench', ["export { envSchema, loadConfig, openStores } from './libs/runtime/src/index';", "export { createLogger } from './libs/service-kit/src/index';"]);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-hostile-'));
  const env = lib.loadConfig(lib.envSchema, { DATA_DIR: dataDir, ADMIN_TOKEN });
  const stores = await lib.openStores(env, lib.createLogger({ level: 'warn', format: 'json' }), dataDir);
  const fromMs = Date.UTC(2026, 2, 1);
  const projects = {};
  for (const [name, events] of [['heavy', EVENTS], ['light', Math.round(EVENTS / 10)]]) {
    const { project, keys } = await stores.keyStore.createProject({ name });
    projects[name] = { id: project.id, ...keys };
    for (let offset = 0; offset < events; offset += 1_000_000) {
      const rows = Math.min(1_000_000, events - offset);
      await stores.events.insertWith(rows, (seq) => stores.events.command(syntheticEventsSql({ db: stores.events.db, projectId: project.id, fromMs, spanDays: 30, eventsPerSession: 5, offset, rows, seq })));
    }
  }
  await stores.close();
  return { dataDir, projects, fromMs };
}

async function reader() {
  const t0 = performance.now();
  const { dataDir, projects, fromMs } = await prepareReaderData();
  console.log(`reader: loaded ${fmt(EVENTS)} + ${fmt(EVENTS / 10)} events in ${fmt((performance.now() - t0) / 1000, 1)} s`);
  const srv = await startService(SERVER_ENV, { nodeArgs: [], cwd: SERVER_DIR, dataDir });
  try {
    await sleep(5_000); // background merges of the load
    const iso = (ms) => new Date(ms).toISOString();
    const lightUrl = `${srv.base}/v1/stats?from=${iso(fromMs)}&to=${iso(fromMs + 30 * 86_400_000)}&group_by=source`;
    const heavyUrl = `${srv.base}/v1/stats?from=${iso(fromMs + 1000)}&to=${iso(fromMs + 30 * 86_400_000)}&group_by=source,medium`;
    const get = (url, key) => fetch(url, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => (await r.arrayBuffer(), r.status));
    const phase = async (label, heavy) => {
      let stop = false;
      const light = [];
      const heavyStatus = {};
      const heavyMs = [];
      const lightLoop = (async () => {
        while (!stop) {
          const t = performance.now();
          const s = await get(lightUrl, projects.light.rk);
          if (s === 200) light.push(performance.now() - t);
        }
      })();
      const heavyLoops = heavy
        ? Array.from({ length: 8 }, async () => {
            while (!stop) {
              const t = performance.now();
              const s = await get(heavyUrl, projects.heavy.rk);
              heavyStatus[s] = (heavyStatus[s] ?? 0) + 1;
              if (s === 200) heavyMs.push(performance.now() - t);
            }
          })
        : [];
      const cpu0 = cpuMsOf(srv.pid);
      const ingest = await track(srv.base, { connections: 10, duration: DURATION, key: projects.light.sk, ip: LEGIT_IP });
      const cpu = cpuMsOf(srv.pid) - cpu0;
      stop = true;
      await Promise.all([lightLoop, ...heavyLoops]);
      light.sort((a, b) => a - b);
      heavyMs.sort((a, b) => a - b);
      console.log(`  ${label.padEnd(40)} L stats p50 ${fmt(pct(light, 50), 1).padStart(7)} ms  p95 ${fmt(pct(light, 95), 1).padStart(7)} ms (${light.length})  L track ${fmt(ingest.requests.average).padStart(6)} req/s p99 ${fmt(ingest.latency.p99)} ms` +
        (heavy ? `  H answers ${JSON.stringify(heavyStatus)} p50 ${fmt(pct(heavyMs, 50) ?? 0)} ms` : '') + `  server CPU ${fmt(cpu / DURATION / 10, 0)}% (load ${load()})`);
      return { p95: pct(light, 95), rps: ingest.requests.average };
    };
    await get(lightUrl, projects.light.rk);
    const quiet = await phase('quiet (L reads + L ingest)', false);
    const busy = await phase('H: 8 concurrent raw stats, whole range', true);
    console.log(`  L stats p95 ratio ${(busy.p95 / quiet.p95).toFixed(2)} (target <= 2), L ingest ratio ${(busy.rps / quiet.rps).toFixed(2)} (target >= 0.5)`);
  } finally {
    await srv.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}


/** A bystander project's track traffic quiet, then beside `attack` (closed loops until `stop()`): its figures and the attack's. */
async function bystander(name, attack) {
  const srv = await startService(SERVER_ENV, { nodeArgs: [], cwd: SERVER_DIR });
  try {
    const [b, a] = [await createProject(srv.base, 'bystander'), await createProject(srv.base, name)];
    await track(srv.base, { connections: 10, duration: 3, key: b.sk, ip: LEGIT_IP }); // warm-up
    console.log(`${name} (load ${load()})`);
    let cpu0 = cpuMsOf(srv.pid);
    const quiet = await track(srv.base, { connections: 10, duration: DURATION, key: b.sk, ip: LEGIT_IP });
    console.log(row('bystander, quiet', quiet, cpuMsOf(srv.pid) - cpu0));
    let stop = false;
    const answers = {};
    const loops = attack.start(srv, a, () => stop, (status) => (answers[status] = (answers[status] ?? 0) + 1));
    await sleep(1_000);
    cpu0 = cpuMsOf(srv.pid);
    const busy = await track(srv.base, { connections: 10, duration: DURATION, key: b.sk, ip: LEGIT_IP });
    const cpu = cpuMsOf(srv.pid) - cpu0;
    stop = true;
    await loops;
    console.log(row(`bystander, under ${name}`, busy));
    console.log(`  attack answers ${JSON.stringify(answers)}; server CPU during the attack ${fmt(cpu / DURATION / 10, 0)}%; ` +
      `throughput ratio ${(busy.requests.average / quiet.requests.average).toFixed(2)} (target >= 0.5), p99 ${fmt(busy.latency.p99)} vs 2 x ${fmt(quiet.latency.p99)} + 100 ms`);
    await srv.stop();
    // The store of the stopped server: every acknowledged batch is there, once.
    if (attack.eventsPer202) {
      const [{ n }] = queryStore(srv.dataDir, `SELECT count() AS n FROM analytics.events WHERE project_id = '${a.id}'`);
      const want = (answers[202] ?? 0) * attack.eventsPer202;
      console.log(`  acknowledged ${fmt(want)} events, stored ${fmt(Number(n))}${Number(n) === want ? ' (all, once)' : ' MISMATCH'}`);
    }
  } finally {
    await srv.stop();
    rmSync(srv.dataDir, { recursive: true, force: true });
  }
}

const attackLoops = (n, stop, send) => Promise.all(Array.from({ length: n }, async () => { while (!stop()) await send(); }));
const postAs = (base, path, key, body, headers = {}) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.66', ...headers }, body }).then(
    async (r) => (await r.arrayBuffer(), r.status),
    (e) => `network error: ${e.cause?.code ?? e.message}`,
  );

async function spread() {
  const body = JSON.stringify({ events: Array.from({ length: 1000 }, (_, i) => ({ event: 'spread', anonymous_id: `s-${i}`, timestamp: new Date(Date.UTC(2000, i, 15)).toISOString() })) });
  await bystander('spread', {
    start: (srv, a, stop, count) => attackLoops(4, stop, async () => count(await postAs(srv.base, '/v1/batch', a.sk, body))),
    eventsPer202: 1000,
  });
}

async function forget() {
  await bystander('forget', {
    start: (srv, a, stop, count) => attackLoops(4, stop, async () => count(await postAs(srv.base, '/v1/forget', a.sk, JSON.stringify({ user_id: `nobody-${base62(16)}` })))),
  });
}

/** Concurrent bodies against a fresh server: answers and peak RSS over idle. */
async function concurrentBodies(label, n, send) {
  const srv = await startService(SERVER_ENV, { nodeArgs: [], cwd: SERVER_DIR });
  try {
    const p = await createProject(srv.base, label);
    await sleep(2_000);
    // The kernel's peak counts from start-up (the key store's initdb): reset it so the peak is the load's.
    writeFileSync(`/proc/${srv.pid}/clear_refs`, '5');
    const idle = memoryOf(srv.pid).rssMiB;
    const t = performance.now();
    const cpu0 = cpuMsOf(srv.pid);
    const statuses = await Promise.all(Array.from({ length: n }, () => send(srv, p)));
    const counts = {};
    for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
    const peak = memoryOf(srv.pid).hwmMiB;
    console.log(`${label} (load ${load()}): ${n} concurrent, answers ${JSON.stringify(counts)} in ${fmt(performance.now() - t)} ms, server CPU ${fmt(cpuMsOf(srv.pid) - cpu0)} ms; ` +
      `idle RSS ${fmt(idle)} MiB, peak ${fmt(peak)} MiB = idle + ${fmt(peak - idle)} MiB (target <= idle + 768)`);
  } finally {
    await srv.stop();
    rmSync(srv.dataDir, { recursive: true, force: true });
  }
}

async function gzip() {
  const gz = gzipSync(maxBatch('gzip'), { level: 9 });
  console.log(`gzip: ${fmt(gz.length / 1024)} KB on the wire, ${(Buffer.byteLength(maxBatch('gzip')) / 2 ** 20).toFixed(1)} MB inflated`);
  await concurrentBodies('gzip', 32, (srv, p) => postAs(srv.base, '/v1/batch', p.pk, gz, { 'content-encoding': 'gzip', origin: 'https://shop.example.com' }));
}

async function mcp() {
  const messages = [];
  for (let id = 0, size = 2; size < 14_000_000; id++) {
    const m = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_stats', arguments: { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' } } });
    size += m.length + 1;
    messages.push(m);
  }
  const body = `[${messages.join(',')}]`;
  await concurrentBodies('mcp', 64, (srv, p) => postAs(srv.base, '/mcp', p.rk, body, { accept: 'application/json, text/event-stream' }));
}

/** Exports of `key` one after another for `ms`: each one's wall time and status. */
async function exportLoop(base, key, qs, ms) {
  const times = [];
  const statuses = {};
  for (const until = Date.now() + ms; Date.now() < until; ) {
    const t = performance.now();
    const status = await fetch(`${base}/v1/export?${qs}`, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => (await r.arrayBuffer(), r.status), (e) => `network error: ${e.cause?.code ?? e.message}`);
    times.push(performance.now() - t);
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  return { times: times.sort((a, b) => a - b), statuses };
}

async function exportHold() {
  const srv = await startService(SERVER_ENV, { nodeArgs: [], cwd: SERVER_DIR });
  try {
    const d0 = Date.UTC(2026, 2, 2);
    const qs = `from=${new Date(d0).toISOString()}&to=${new Date(d0 + 86_400_000).toISOString()}`;
    const batch = (n) => JSON.stringify({ events: Array.from({ length: 1000 }, (_, i) => ({ event: 'bulk', anonymous_id: `a-${i % 500}`, timestamp: new Date(d0 + (n * 1000 + i) * 1000).toISOString(), path: `/p/${i}`, properties: { pad: 'x'.repeat(400) } })) });
    const [b, ...holders] = [await createProject(srv.base, 'bystander'), await createProject(srv.base, 'holder-1'), await createProject(srv.base, 'holder-2')];
    // The holders' exports (40,000 events, ~28 MB of NDJSON each) cannot fit in the buffers of a client that reads nothing.
    for (const h of holders) for (let n = 0; n < 40; n += 4) await Promise.all([0, 1, 2, 3].map((k) => postAs(srv.base, '/v1/batch', h.sk, batch(n + k))));
    for (let n = 0; n < 10; n++) await postAs(srv.base, '/v1/batch', b.sk, batch(n));
    console.log(`exporthold (load ${load()})`);
    const line = (label, r) => `  ${label.padEnd(34)} p50 ${fmt(pct(r.times, 50)).padStart(6)} ms  max ${fmt(r.times.at(-1)).padStart(6)} ms  answers ${JSON.stringify(r.statuses)}`;
    console.log(line('bystander export, quiet', await exportLoop(srv.base, b.rk, qs, DURATION * 1000)));
    const held = [];
    const answers = {};
    let stop = false;
    const holding = (async () => {
      while (!stop) {
        for (const h of holders) {
          const req = httpGet(`${srv.base}/v1/export?${qs}`, { headers: { authorization: `Bearer ${h.rk}` } }, (res) => {
            answers[res.statusCode] = (answers[res.statusCode] ?? 0) + 1;
            if (res.statusCode === 200) res.pause();
            else res.resume();
          });
          req.on('error', () => undefined);
          held.push(req);
        }
        await sleep(500);
      }
    })();
    await sleep(2_000);
    const busy = await exportLoop(srv.base, b.rk, qs, DURATION * 1000);
    stop = true;
    await holding;
    for (const req of held) req.destroy();
    console.log(line('bystander export, during the hold', busy));
    console.log(`  holders' answers ${JSON.stringify(answers)} (a 200 is a turn taken; 429: its project's queue was full)`);
  } finally {
    await srv.stop();
    rmSync(srv.dataDir, { recursive: true, force: true });
  }
}

/** The longest event-loop stall since the last call (prom-client's histogram restarts at each scrape of /metrics), in ms. */
async function lagMaxMs(base) {
  const text = await fetch(`${base}/metrics`).then((r) => r.text());
  return Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1] ?? NaN) * 1000;
}

/** The worst read shapes (issue 43): each with how it is sent; MCP's is an argument error inside a 200. */
function worstShapes(from, to) {
  const filters = Array.from({ length: 60_000 }, () => ['equals', 'country', ['GB']]);
  const call = (name, args) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
  return [
    ['500 copies of a metric', '/v1/insights', JSON.stringify({ from, to, metrics: Array.from({ length: 500 }, () => 'visitors') })],
    ['1.8 MB of invalid filters', '/v1/insights', JSON.stringify({ from, to, filters })],
    ['1000 invalid events', '/v1/batch', JSON.stringify({ events: Array.from({ length: 1000 }, () => ({ event: 1, anonymous_id: 2, url: 3, properties: 4, timestamp: 5 })) })],
    ['the filters through MCP', '/mcp', call('query_insights', { from, to, filters })],
  ];
}

async function shapes() {
  const srv = await startService(SERVER_ENV, { nodeArgs: [], cwd: SERVER_DIR });
  try {
    const [b, a] = [await createProject(srv.base, 'bystander'), await createProject(srv.base, 'shapes')];
    const from = new Date(Date.now() - 86_400_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    const attack = worstShapes(from, to);
    console.log(`shapes (load ${load()}): attack bodies ${attack.map(([name, , body]) => `${name} ${fmt(body.length / 1024)} KB`).join(', ')}`);
    await track(srv.base, { connections: 10, duration: 3, key: b.sk, ip: LEGIT_IP }); // warm-up, and the bystander's events
    const read = JSON.stringify({ from, to, metrics: ['visitors', 'visits', 'pageviews'], dimensions: ['source'] });
    const phase = async (label, attacking) => {
      let stop = false;
      const reads = [];
      const readStatus = {};
      const answers = {};
      let largest = 0;
      const readLoops = attackLoops(2, () => stop, async () => {
        const t = performance.now();
        const r = await fetch(`${srv.base}/v1/insights`, { method: 'POST', headers: { authorization: `Bearer ${b.rk}`, 'content-type': 'application/json', 'x-forwarded-for': LEGIT_IP }, body: read });
        await r.arrayBuffer();
        readStatus[r.status] = (readStatus[r.status] ?? 0) + 1;
        if (r.status === 200) reads.push(performance.now() - t);
      });
      let n = 0;
      const attackers = attacking
        ? attackLoops(4, () => stop, async () => {
            const [name, path, body] = attack[n++ % attack.length];
            const key = path === '/v1/batch' ? a.sk : a.rk;
            const r = await fetch(`${srv.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-forwarded-for': '198.51.100.66' }, body });
            const bytes = (await r.arrayBuffer()).byteLength;
            largest = Math.max(largest, bytes);
            answers[`${name} ${r.status}`] = (answers[`${name} ${r.status}`] ?? 0) + 1;
          })
        : Promise.resolve();
      await lagMaxMs(srv.base); // restarts the server's lag histogram
      writeFileSync(`/proc/${srv.pid}/clear_refs`, '5');
      const idle = memoryOf(srv.pid).rssMiB;
      const w = await track(srv.base, { connections: 10, duration: DURATION, key: b.sk, ip: LEGIT_IP });
      const lag = await lagMaxMs(srv.base);
      const peak = memoryOf(srv.pid).hwmMiB;
      stop = true;
      await Promise.all([readLoops, attackers]);
      reads.sort((x, y) => x - y);
      console.log(row(`bystander track, ${label}`, w));
      console.log(`  ${`bystander insights, ${label}`.padEnd(34)} p50 ${fmt(pct(reads, 50) ?? 0).padStart(5)} ms  p99 ${fmt(pct(reads, 99) ?? 0).padStart(5)} ms  answers ${JSON.stringify(readStatus)}; ` +
        `event-loop lag max ${fmt(lag)} ms; RSS idle ${fmt(idle)} MiB, peak + ${fmt(peak - idle)} MiB`);
      if (attacking) console.log(`  attack answers ${JSON.stringify(answers)}; largest answer ${fmt(largest / 1024, 1)} KB`);
      return { w, p99: pct(reads, 99) ?? 0 };
    };
    const quiet = await phase('quiet', false);
    const busy = await phase('under the worst shapes', true);
    console.log(`  track throughput ratio ${(busy.w.requests.average / quiet.w.requests.average).toFixed(2)} (target >= 0.5), p99 ${fmt(busy.w.latency.p99)} vs 2 x ${fmt(quiet.w.latency.p99)} + 100 ms; ` +
      `insights p99 ${fmt(busy.p99)} vs 2 x ${fmt(quiet.p99)} + 300 ms`);
  } finally {
    await srv.stop();
    rmSync(srv.dataDir, { recursive: true, force: true });
  }
}

/** A dashboard load of B (apps/dashboard/src/main.ts): the headline with compare, the chart, ten lists. */
function dashboardLoad(range) {
  const list = (dimension, metric) => ({ ...range, metrics: [metric], dimensions: [dimension], limit: 10 });
  return [
    { ...range, metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration', 'events'], compare: 'previous_period' },
    { ...range, metrics: ['visitors', 'pageviews'], dimensions: ['time:day'], limit: 10_000 },
    ...['source', 'channel', 'path', 'country', 'device_type', 'browser', 'os'].map((d) => list(d, 'visitors')),
    list('entry_path', 'visits'),
    list('exit_path', 'visits'),
    list('event_name', 'events'),
  ];
}

async function heavyread() {
  const srv = await startService(SERVER_ENV, { nodeArgs: [], cwd: SERVER_DIR });
  try {
    const [a, b] = [await createProject(srv.base, 'heavy'), await createProject(srv.base, 'dashboard')];
    const d0 = Date.UTC(2026, 2, 1);
    const batchOf = (events) => postAs(srv.base, '/v1/batch', a.sk, JSON.stringify({ events }));
    for (let k = 0; k < 2; k++) {
      await batchOf(Array.from({ length: 1000 }, (_, i) => ({ event: '$pageview', anonymous_id: 'one-visitor', timestamp: new Date(d0 + (k * 1000 + i) * 60_000).toISOString(), url: `https://shop.example.com/p/${i % 7}` })));
    }
    for (let k = 0; k < 5; k++) {
      const events = Array.from({ length: 1000 }, (_, i) => ({
        event: i % 5 ? '$pageview' : 'signup',
        anonymous_id: `v-${(k * 1000 + i) % 700}`,
        timestamp: new Date(d0 + (((k * 1000 + i) * 7919) % (28 * 86_400_000))).toISOString(),
        url: `https://shop.example.com/p/${i % 9}?utm_source=s${i % 7}`,
      }));
      await postAs(srv.base, '/v1/batch', b.sk, JSON.stringify({ events }));
    }
    const range = { from: '2026-03-01', to: '2026-03-29' };
    const dashboard = dashboardLoad(range).map((body) => JSON.stringify(body));
    const funnel = JSON.stringify({ ...range, steps: Array.from({ length: 10 }, () => ({ event: '$pageview' })), window_s: 2_592_000, breakdown: 'path' });
    const loadDashboard = async () => {
      const t = performance.now();
      const statuses = await Promise.all(dashboard.map((body) => postAs(srv.base, '/v1/insights', b.rk, body)));
      return { ms: performance.now() - t, statuses };
    };
    await postAs(srv.base, '/v1/funnel', a.rk, funnel);
    await loadDashboard(); // warm-up
    console.log(`heavyread (load ${load()})`);
    const phase = async (label, heavy) => {
      let stop = false;
      const answers = {};
      let completed = 0;
      const loop = heavy
        ? (async () => {
            while (!stop) {
              const s = await postAs(srv.base, '/v1/funnel', a.rk, funnel);
              answers[s] = (answers[s] ?? 0) + 1;
              if (s === 200) completed++;
            }
          })()
        : undefined;
      if (heavy) await sleep(5_000); // A's recent engine time builds up
      const times = [];
      const statuses = {};
      const [cpu0, done0, t0] = [cpuMsOf(srv.pid), completed, performance.now()];
      while (performance.now() - t0 < DURATION * 1000) {
        const l = await loadDashboard();
        times.push(l.ms);
        for (const s of l.statuses) statuses[s] = (statuses[s] ?? 0) + 1;
        await sleep(1_000);
      }
      const [cpu, minutes, funnels] = [cpuMsOf(srv.pid) - cpu0, (performance.now() - t0) / 60_000, completed - done0];
      stop = true;
      await loop;
      times.sort((x, y) => x - y);
      const reads = times.length * dashboard.length + funnels;
      console.log(`  ${label.padEnd(36)} B load p50 ${fmt(pct(times, 50)).padStart(6)} ms  p95 ${fmt(pct(times, 95)).padStart(6)} ms (${times.length} loads)  B answers ${JSON.stringify(statuses)}` +
        (heavy ? `  A funnels ${fmt(funnels / minutes, 1)}/min ${JSON.stringify(answers)}` : '') + `  server CPU ${fmt(cpu / reads, 1)} ms/read`);
      return pct(times, 50);
    };
    const quiet = await phase('B alone', false);
    const busy = await phase('B while A loops its funnel', true);
    console.log(`  B load p50 ${fmt(busy)} ms (target <= 2 x ${fmt(quiet)} + 300 = ${fmt(2 * quiet + 300)} ms)`);
  } finally {
    await srv.stop();
    rmSync(srv.dataDir, { recursive: true, force: true });
  }
}

/** Sign-ins with unknown emails, each from a new address: every one is hashed, under PASSWORD_HASH_CONCURRENCY. */
async function signin() {
  let n = 0;
  const login = (base) =>
    fetch(`${base}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n++ & 255}` },
      body: JSON.stringify({ email: `guess-${n}@example.com`, password: 'a guessed password' }),
    }).then(
      async (r) => (await r.arrayBuffer(), r.status),
      (e) => `network error: ${e.cause?.code ?? e.message}`,
    );
  await bystander('signin', {
    start: (srv, _a, stop, count) => {
      writeFileSync(`/proc/${srv.pid}/clear_refs`, '5');
      const idle = memoryOf(srv.pid).rssMiB;
      return attackLoops(64, stop, async () => count(await login(srv.base))).then(() =>
        console.log(`  sign-in flood: idle RSS ${fmt(idle)} MiB, peak ${fmt(memoryOf(srv.pid).hwmMiB)} MiB (target <= idle + 2 x 128 MiB + 64 MiB)`),
      );
    },
  });
}

async function register() {
  const metadata = JSON.stringify({ client_name: 'flood', redirect_uris: ['http://127.0.0.1:9/cb'], token_endpoint_auth_method: 'none', policy_uri: `https://x.example/${'p'.repeat(2000)}`, tos_uri: `https://x.example/${'t'.repeat(2000)}`, client_uri: `https://x.example/${'c'.repeat(2000)}` });
  let n = 0;
  // Every 201 is a client stored: at most 10 per address (200 here) whatever the attack's length.
  await bystander('register', {
    start: (srv, _a, stop, count) => attackLoops(4, stop, async () => count(await postAs(srv.base, '/register', 'none', metadata, { 'x-forwarded-for': `198.18.0.${n++ % 20}` }))),
  });
}

/** POST /v1/track declaring 16 MiB and sending a byte a second until the server answers or closes: resolves to the answer's status. */
function slowTrack(base, key) {
  const url = new URL(base);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    let status = 0;
    const dribble = setInterval(() => socket.writable && socket.write('x'), 1_000);
    socket.on('connect', () => socket.write(`POST /v1/track HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\nOrigin: https://shop.example.com\r\nX-Forwarded-For: 198.51.100.66\r\nContent-Type: application/json\r\nContent-Length: ${16 * 1024 * 1024}\r\n\r\n{"a":"`));
    socket.on('data', (chunk) => (status ||= Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString())?.[1] ?? 0)));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(dribble);
      resolve(status || 'closed');
    });
  });
}

async function slowbodies() {
  const srv = await startService(SERVER_ENV, { nodeArgs: [], cwd: SERVER_DIR });
  const sockets = new Set();
  try {
    const [a, b] = [await createProject(srv.base, 'slow'), await createProject(srv.base, 'bystander')];
    const range = { from: new Date(Date.now() - 7 * 86_400_000).toISOString(), to: new Date(Date.now() + 86_400_000).toISOString() };
    /** B's track then insights, one after the other, for `seconds`: each call's ms and the answers. */
    const bystanderCalls = async (seconds) => {
      const ms = [];
      const answers = {};
      const until = performance.now() + seconds * 1_000;
      for (let i = 0; performance.now() < until; i++) {
        const started = performance.now();
        const status = i % 2 === 0
          ? await postAs(srv.base, '/v1/track', b.sk, JSON.stringify(sampleEvent(i)), { 'x-forwarded-for': LEGIT_IP })
          : await postAs(srv.base, '/v1/insights', b.rk, JSON.stringify({ ...range, metrics: ['visitors'] }), { 'x-forwarded-for': LEGIT_IP });
        ms.push(performance.now() - started);
        answers[status] = (answers[status] ?? 0) + 1;
      }
      ms.sort((x, y) => x - y);
      return `${fmt(ms.length)} calls, p50 ${fmt(pct(ms, 50), 1)} ms, p95 ${fmt(pct(ms, 95), 1)} ms, answers ${JSON.stringify(answers)}`;
    };
    await bystanderCalls(2); // warm-up
    console.log(`slowbodies (load ${load()})`);
    console.log(`  bystander, quiet:                ${await bystanderCalls(DURATION)}`);
    let stop = false;
    const slowAnswers = {};
    const attack = Promise.all(Array.from({ length: 8 }, async () => {
      while (!stop) {
        const answer = slowTrack(srv.base, a.pk);
        sockets.add(answer);
        const status = await answer;
        sockets.delete(answer);
        slowAnswers[status] = (slowAnswers[status] ?? 0) + 1;
      }
    }));
    await sleep(1_000);
    console.log(`  bystander, under 8 slow bodies:  ${await bystanderCalls(DURATION)}`);
    stop = true;
    await srv.stop(); // closes the slow sockets still open
    await attack;
    console.log(`  slow bodies' answers ${JSON.stringify(slowAnswers)} (408: refused at BODY_READ_TIMEOUT_MS; closed: cut at the stop)`);
  } finally {
    await srv.stop();
    rmSync(srv.dataDir, { recursive: true, force: true });
  }
}

if (ONLY.includes('flood')) await flood();
if (ONLY.includes('bodies')) await bodies();
if (ONLY.includes('reader')) await reader();
if (ONLY.includes('spread')) await spread();
if (ONLY.includes('forget')) await forget();
if (ONLY.includes('control')) await bystander('control', { start: (_srv, _a, stop) => attackLoops(1, stop, () => sleep(100)) });
if (ONLY.includes('gzip')) await gzip();
if (ONLY.includes('mcp')) await mcp();
if (ONLY.includes('heavyread')) await heavyread();
if (ONLY.includes('exporthold')) await exportHold();
if (ONLY.includes('shapes')) await shapes();
if (ONLY.includes('signin')) await signin();
if (ONLY.includes('register')) await register();
if (ONLY.includes('slowbodies')) await slowbodies();
