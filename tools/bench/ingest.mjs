// Write-path benchmarks (`npm run bench`): figures for BENCHMARKS.md, not a timed test.
//
//   track  POST /v1/track at 50 and at 256 connections, 20 s each, against `npm start`'s server, next to a bare
//          express 5 server answering 202 after express.json(), same machine, same run. Every 202 must be a stored row.
//   batch  POST /v1/batch with 1000 realistic events per request, next to the raw insert rate of the same rows
//          straight into the embedded event store (EventStore.insertRows), same machine, same run.
//   memory idle RSS of `npm start` (after start-up and after the runs, settled), peak RSS (VmHWM) of each server.
//   cpu    each server process's CPU time (user + system, every thread: the embedded engine's too, /proc/<pid>/stat)
//          over the measured run, per request and per event; the machine's 1-minute load average before and after.
//
//   --server-dir=/tmp/before,.   measures each checkout's `npm start` in turn, back to back in one run (before/after)
//
//   npm run bench                         # both
//   npm run bench -- --only=track --duration=10 --connections=50,256
//   npm run bench -- --cpu-prof=/tmp/prof # also writes the server's V8 CPU profile (read with profile-summary.mjs)
//
// The server runs with RATE_LIMIT_*_PER_S/BURST raised to 1,000,000 so the token bucket does not cap the measurement.
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { build } from 'esbuild';
import { UAS, UNLIMITED, batchBodies, bundleFromSource, cpuMsOf, createProject, fmt, memoryOf, queryStore, sampleEvent, sleep, startService } from './lib.mjs';

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const ONLY = arg('only', 'track,batch').split(',');
const DURATION = Number(arg('duration', 20));
const CONNECTIONS = arg('connections', '50,256').split(',').map(Number);
const SERVER_DIRS = arg('server-dir', '.').split(',').map((d) => resolve(d));
const BATCH_CONNECTIONS = Number(arg('batch-connections', 8));
const WARMUP = Number(arg('warmup', 3));
const CPU_PROF = arg('cpu-prof', undefined);

/** One autocannon run; `body(i)` gives the i-th request's body and id; acknowledged ids are collected. */
async function load({ url, connections, duration, headers, body, okStatus }) {
  const acked = [];
  let seq = 0;
  const result = await autocannon({
    url,
    connections,
    duration,
    method: 'POST',
    requests: [
      {
        method: 'POST',
        setupRequest: (req, context) => {
          const i = seq++;
          const b = body(i);
          context.id = b.id;
          return { ...req, headers: { ...headers, 'user-agent': UAS[i % UAS.length], 'x-forwarded-for': `81.2.69.${160 + (i % 32)}` }, body: b.text };
        },
        onResponse: (status, _body, context) => {
          if (status === okStatus) acked.push(context.id);
        },
      },
    ],
  });
  return { result, acked, sent: seq };
}

const summary = (r) => ({
  reqPerS: r.requests.average,
  p50Ms: r.latency.p50,
  p99Ms: r.latency.p99,
  ok2xx: r['2xx'],
  non2xx: r.non2xx,
  errors: r.errors,
  timeouts: r.timeouts,
});

async function startBare() {
  const child = spawn(process.execPath, [resolve('tools/bench/bare-server.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((res, rej) => {
    child.stdout.on('data', (d) => {
      const m = /listening (\d+)/.exec(String(d));
      if (m) res(Number(m[1]));
    });
    child.on('exit', () => rej(new Error('bare server exited')));
  });
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, memoryOf(child.pid).hwmMiB)), 250);
  return {
    base: `http://127.0.0.1:${port}`,
    pid: child.pid,
    peakRssMiB: () => Math.max(peak, memoryOf(child.pid).hwmMiB),
    async stop() {
      clearInterval(sampler);
      peak = Math.max(peak, memoryOf(child.pid).hwmMiB);
      child.kill('SIGTERM');
      while (child.exitCode === null && child.signalCode === null) await sleep(50);
    },
  };
}

const trackBody = (tag) => {
  const events = Array.from({ length: 16 }, (_, i) => JSON.stringify({ ...sampleEvent(i), event_id: '__ID__' }).split('__ID__'));
  return (i) => {
    const id = `${tag}-${i}`;
    const [before, after] = events[i % events.length];
    return { id, text: before + id + after };
  };
};

/** A measured run: the load, the server's CPU over it (ms per request), the machine's load average around it. */
async function measured(pid, opts) {
  const load1Before = loadavg()[0];
  const cpu0 = cpuMsOf(pid);
  const run = await load(opts);
  const cpuMs = cpuMsOf(pid) - cpu0;
  return { ...run, cpuMs, cpuMsPerReq: cpuMs / Math.max(1, run.result['2xx'] + run.result.non2xx), load1Before, load1After: loadavg()[0] };
}

const phase = (r) => ({ ...summary(r.result), cpuMsPerReq: r.cpuMsPerReq, load1Before: r.load1Before, load1After: r.load1After });

/** RSS of a settled, idle server: after `ms` without load. */
async function idleRss(pid, ms = 3000) {
  await sleep(ms);
  return memoryOf(pid).rssMiB;
}

async function benchTrack() {
  const url = (base) => `${base}/v1/track`;
  const json = { 'content-type': 'application/json' };
  // Bare express first, then each server: all warmed up, same client, same bodies, same connection counts.
  const bare = await startBare();
  const bareRuns = {};
  for (const c of CONNECTIONS) {
    await load({ url: url(bare.base), connections: c, duration: WARMUP, headers: json, body: trackBody('warm'), okStatus: 202 });
    bareRuns[c] = phase(await measured(bare.pid, { url: url(bare.base), connections: c, duration: DURATION, headers: json, body: trackBody(`bare${c}`), okStatus: 202 }));
  }
  const bareRss = bare.peakRssMiB();
  await bare.stop();

  const servers = [];
  for (const dir of SERVER_DIRS) {
    const srv = await startService(UNLIMITED, { cwd: dir, nodeArgs: CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${resolve(CPU_PROF)}`] : undefined });
    const idleStartMiB = await idleRss(srv.pid);
    const project = await createProject(srv.base);
    const headers = { ...json, authorization: `Bearer ${project.sk}` };
    const runs = {};
    const acked = [];
    for (const c of CONNECTIONS) {
      const warm = await load({ url: url(srv.base), connections: c, duration: WARMUP, headers, body: trackBody(`warm${c}`), okStatus: 202 });
      const ours = await measured(srv.pid, { url: url(srv.base), connections: c, duration: DURATION, headers, body: trackBody(`run${c}`), okStatus: 202 });
      acked.push(...warm.acked, ...ours.acked);
      runs[c] = { ...phase(ours), ratio: ours.result.requests.average / bareRuns[c].reqPerS, cpuRatio: ours.cpuMsPerReq / bareRuns[c].cpuMsPerReq };
    }
    const idleAfterMiB = await idleRss(srv.pid);
    const peakRssMiB = srv.peakRssMiB();
    await srv.stop();

    // Every 202 is a stored row: count after the server stopped, and find every acknowledged id.
    const stored = new Set(queryStore(srv.dataDir, `SELECT event_id FROM analytics.events WHERE project_id = '${project.id}'`).map((r) => r.event_id));
    rmSync(srv.dataDir, { recursive: true, force: true });
    servers.push({
      dir,
      runs,
      idleStartMiB,
      idleAfterMiB,
      peakRssMiB,
      // autocannon drops the connections at the end of a run: requests then in flight were written but never counted.
      verify: { acked: acked.length, storedRows: stored.size, missingAcked: acked.filter((id) => !stored.has(id)).length, cutInFlight: stored.size - acked.length },
    });
  }
  return { bare: { runs: bareRuns, peakRssMiB: bareRss }, servers };
}

async function benchBatch(bundle) {
  const raw = JSON.parse(execFileSync(process.execPath, [resolve('tools/bench/raw-insert.mjs'), bundle, String(Math.max(5, DURATION / 2)), '1000', '20000'], { encoding: 'utf8' }).trim().split('\n').pop());
  const servers = [];
  for (const dir of SERVER_DIRS) {
    const srv = await startService(UNLIMITED, { cwd: dir, nodeArgs: CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${resolve(CPU_PROF)}`] : undefined });
    const project = await createProject(srv.base);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${project.sk}` };
    const bodies = batchBodies();
    const body = (tag) => (i) => {
      const id = `${tag}-${i}`;
      return { id, text: bodies[i % bodies.length].replace('__REQ__', id) };
    };
    const warm = await load({ url: `${srv.base}/v1/batch`, connections: BATCH_CONNECTIONS, duration: WARMUP, headers, body: body('warm'), okStatus: 202 });
    const ours = await measured(srv.pid, { url: `${srv.base}/v1/batch`, connections: BATCH_CONNECTIONS, duration: DURATION, headers, body: body('run'), okStatus: 202 });
    await sleep(500);
    const peakRssMiB = srv.peakRssMiB();
    await srv.stop();

    const [{ total }] = queryStore(srv.dataDir, `SELECT count() AS total FROM analytics.events WHERE project_id = '${project.id}'`);
    const present = new Set(queryStore(srv.dataDir, `SELECT event_id FROM analytics.events WHERE project_id = '${project.id}' AND (startsWith(event_id, 'run-') OR startsWith(event_id, 'warm-'))`).map((r) => r.event_id));
    rmSync(srv.dataDir, { recursive: true, force: true });
    const acked = [...warm.acked, ...ours.acked];
    const eventsPerS = (ours.result['2xx'] * 1000) / DURATION;
    servers.push({
      dir,
      ours: { eventsPerS, ...phase(ours), cpuUsPerEvent: (ours.cpuMsPerReq * 1000) / 1000, peakRssMiB },
      ratio1000: eventsPerS / raw.perBlock['1000'],
      ratio20000: eventsPerS / raw.perBlock['20000'],
      verify: {
        ackedRequests: acked.length,
        missingAcked: acked.filter((id) => !present.has(id)).length,
        storedRows: Number(total),
        requestsStored: present.size,
        // All-or-nothing: every stored request has its 1000 rows.
        rowsMatchRequests: Number(total) === present.size * 1000,
      },
    });
  }
  return { raw: { eventsPerS1000: raw.perBlock['1000'], eventsPerS20000: raw.perBlock['20000'], peakRssMiB: raw.peakRssMiB }, servers };
}

const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`;
console.log(`machine: ${machine}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
for (const dir of SERVER_DIRS) execFileSync(process.execPath, ['tools/build.mjs'], { cwd: dir, stdio: 'inherit' });
const { path: bundle } = await bundleFromSource('ingest-bench', [
  "export { EventStore } from './libs/event-store/src/index';",
  "export { createEnricher, loadGeo } from './libs/enrichment/src/index';",
  "export { eventInputSchema } from './libs/schema/src/index';",
]);

const out = { machine, duration: DURATION, connections: CONNECTIONS, batchConnections: BATCH_CONNECTIONS, serverDirs: SERVER_DIRS, at: new Date().toISOString() };
const row = (name, r, extra = '') =>
  `${name.padEnd(22)} ${fmt(r.reqPerS).padStart(7)}  ${String(r.p50Ms).padStart(6)}  ${String(r.p99Ms).padStart(6)}  ${fmt(r.cpuMsPerReq, 3).padStart(8)}  ${String(r.non2xx).padStart(7)}  ${r.load1Before.toFixed(2)} -> ${r.load1After.toFixed(2)}${extra}`;
let ok = true;
if (ONLY.includes('track')) {
  const t = await benchTrack();
  out.track = t;
  console.log(`\ntrack: POST /v1/track, ${DURATION} s per run (after ${WARMUP} s warm-up)`);
  console.log('server, connections       req/s  p50 ms  p99 ms  CPU ms/req  non-2xx  load1');
  for (const c of CONNECTIONS) {
    console.log(row(`bare express 5, ${c}`, t.bare.runs[c]));
    for (const s of t.servers) console.log(row(`${SERVER_DIRS.length > 1 ? s.dir.split('/').pop() : 'ours'}, ${c}`, s.runs[c], `   ratio ${s.runs[c].ratio.toFixed(2)}, CPU x${s.runs[c].cpuRatio.toFixed(1)}`));
  }
  console.log(`peak RSS MiB: bare ${fmt(t.bare.peakRssMiB)}`);
  for (const s of t.servers) {
    console.log(`${s.dir}: idle RSS ${fmt(s.idleStartMiB)} MiB after start-up, ${fmt(s.idleAfterMiB)} MiB after the runs; peak ${fmt(s.peakRssMiB)} MiB`);
    console.log(`  stored: ${s.verify.storedRows} rows for ${s.verify.acked} acknowledged + ${s.verify.cutInFlight} cut in flight at the ends of runs; acknowledged ids missing: ${s.verify.missingAcked}`);
    ok &&= s.verify.missingAcked === 0 && s.verify.cutInFlight >= 0 && Object.values(s.runs).every((r) => r.non2xx === 0);
  }
}
if (ONLY.includes('batch')) {
  const b = await benchBatch(bundle);
  out.batch = b;
  console.log(`\nbatch: POST /v1/batch, 1000 events per request, ${BATCH_CONNECTIONS} connections, ${DURATION} s`);
  console.log(`raw EventStore.insertRows: ${fmt(b.raw.eventsPerS1000)} events/s (1000 rows per INSERT), ${fmt(b.raw.eventsPerS20000)} events/s (20,000 rows per INSERT); peak RSS ${fmt(b.raw.peakRssMiB)} MiB`);
  for (const s of b.servers) {
    console.log(`${s.dir}: ${fmt(s.ours.eventsPerS)} events/s (${fmt(s.ours.reqPerS, 1)} req/s, p50 ${s.ours.p50Ms} ms, p99 ${s.ours.p99Ms} ms, non-2xx ${s.ours.non2xx}); CPU ${fmt(s.ours.cpuUsPerEvent, 1)} µs/event; load1 ${s.ours.load1Before.toFixed(2)} -> ${s.ours.load1After.toFixed(2)}; peak RSS ${fmt(s.ours.peakRssMiB)} MiB`);
    console.log(`  ours/raw: ${s.ratio1000.toFixed(2)} of 1000-row INSERTs, ${s.ratio20000.toFixed(2)} of 20,000-row INSERTs (target >= 0.8 of 20,000-row, and >= 100,000 events/s)`);
    console.log(`  stored: ${s.verify.storedRows} rows = ${s.verify.requestsStored} requests x 1000: ${s.verify.rowsMatchRequests}; acknowledged requests missing: ${s.verify.missingAcked}`);
    ok &&= s.verify.missingAcked === 0 && s.verify.rowsMatchRequests && s.ours.non2xx === 0;
  }
}
mkdirSync('dist/bench', { recursive: true });
writeFileSync(join('dist/bench', 'ingest-results.json'), JSON.stringify(out, null, 2));
console.log(`\nresults: dist/bench/ingest-results.json${ok ? '' : '\nVERIFY FAILED: an acknowledged event is missing, a 5xx was answered, or counts differ'}`);
process.exit(ok ? 0 : 1);
