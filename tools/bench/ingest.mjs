// Write-path benchmarks (`npm run bench`): figures for BENCHMARKS.md, not a timed test.
//
//   track  POST /v1/track, 50 connections for 20 s against `npm start`'s server, next to a bare express 5 server
//          answering 202 with no work, same machine, same run. Every 202 must be a stored row.
//   batch  POST /v1/batch with 1000 realistic events per request, next to the raw insert rate of the same rows
//          straight into the embedded event store (EventStore.insertRows), same machine, same run.
//   memory peak RSS (VmHWM) of each server during its run.
//
//   npm run bench                         # both
//   npm run bench -- --only=track --duration=10 --connections=50
//   npm run bench -- --cpu-prof=/tmp/prof # also writes the server's V8 CPU profile (read with profile-summary.mjs)
//
// The server runs with RATE_LIMIT_*_PER_S/BURST raised to 1,000,000 so the token bucket does not cap the measurement.
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { build } from 'esbuild';
import { UAS, UNLIMITED, batchBodies, bundleFromSource, createProject, fmt, memoryOf, queryStore, sampleEvent, sleep, startService } from './lib.mjs';

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const ONLY = arg('only', 'track,batch').split(',');
const DURATION = Number(arg('duration', 20));
const CONNECTIONS = Number(arg('connections', 50));
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

async function benchTrack() {
  const url = (base) => `${base}/v1/track`;
  // Bare express first, then ours: both warmed up, same client, same bodies.
  const bare = await startBare();
  await load({ url: url(bare.base), connections: CONNECTIONS, duration: WARMUP, headers: { 'content-type': 'application/json' }, body: trackBody('warm'), okStatus: 202 });
  const bareRun = await load({ url: url(bare.base), connections: CONNECTIONS, duration: DURATION, headers: { 'content-type': 'application/json' }, body: trackBody('bare'), okStatus: 202 });
  const bareRss = bare.peakRssMiB();
  await bare.stop();

  const srv = await startService(UNLIMITED, { nodeArgs: CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${resolve(CPU_PROF)}`] : undefined });
  const project = await createProject(srv.base);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${project.sk}` };
  const warm = await load({ url: url(srv.base), connections: CONNECTIONS, duration: WARMUP, headers, body: trackBody('warm'), okStatus: 202 });
  const ours = await load({ url: url(srv.base), connections: CONNECTIONS, duration: DURATION, headers, body: trackBody('run'), okStatus: 202 });
  await sleep(500);
  const oursRss = srv.peakRssMiB();
  await srv.stop();

  // Every 202 is a stored row: count after the server stopped, and find every acknowledged id.
  const [{ total }] = queryStore(srv.dataDir, `SELECT count() AS total FROM analytics.events WHERE project_id = '${project.id}'`);
  const stored = new Set(queryStore(srv.dataDir, `SELECT event_id FROM analytics.events WHERE project_id = '${project.id}' AND startsWith(event_id, 'run-')`).map((r) => r.event_id));
  const missing = ours.acked.filter((id) => !stored.has(id)).length;
  rmSync(srv.dataDir, { recursive: true, force: true });
  const ackedAll = warm.acked.length + ours.acked.length;
  return {
    bare: { ...summary(bareRun.result), peakRssMiB: bareRss },
    ours: { ...summary(ours.result), peakRssMiB: oursRss },
    ratio: ours.result.requests.average / bareRun.result.requests.average,
    verify: {
      acked: ackedAll,
      storedRows: Number(total),
      missingAcked: missing,
      // autocannon drops the connections at the end of the run: requests then in flight were written but never counted.
      cutInFlight: Number(total) - ackedAll,
      distinctIdsRun: stored.size,
    },
  };
}

async function benchBatch(bundle) {
  const raw = JSON.parse(execFileSync(process.execPath, [resolve('tools/bench/raw-insert.mjs'), bundle, String(Math.max(5, DURATION / 2)), '1000', '20000'], { encoding: 'utf8' }).trim().split('\n').pop());

  const srv = await startService(UNLIMITED, { nodeArgs: CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${resolve(CPU_PROF)}`] : undefined });
  const project = await createProject(srv.base);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${project.sk}` };
  const bodies = batchBodies();
  const body = (tag) => (i) => {
    const id = `${tag}-${i}`;
    return { id, text: bodies[i % bodies.length].replace('__REQ__', id) };
  };
  const warm = await load({ url: `${srv.base}/v1/batch`, connections: BATCH_CONNECTIONS, duration: WARMUP, headers, body: body('warm'), okStatus: 202 });
  const ours = await load({ url: `${srv.base}/v1/batch`, connections: BATCH_CONNECTIONS, duration: DURATION, headers, body: body('run'), okStatus: 202 });
  await sleep(500);
  const oursRss = srv.peakRssMiB();
  await srv.stop();

  const [{ total }] = queryStore(srv.dataDir, `SELECT count() AS total FROM analytics.events WHERE project_id = '${project.id}'`);
  const present = new Set(queryStore(srv.dataDir, `SELECT event_id FROM analytics.events WHERE project_id = '${project.id}' AND (startsWith(event_id, 'run-') OR startsWith(event_id, 'warm-'))`).map((r) => r.event_id));
  rmSync(srv.dataDir, { recursive: true, force: true });
  const acked = [...warm.acked, ...ours.acked];
  const eventsPerS = (ours.result['2xx'] * 1000) / DURATION;
  return {
    raw: { eventsPerS1000: raw.perBlock['1000'], eventsPerS20000: raw.perBlock['20000'], peakRssMiB: raw.peakRssMiB },
    ours: { eventsPerS, ...summary(ours.result), peakRssMiB: oursRss },
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
  };
}

const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`;
console.log(`machine: ${machine}`);
execFileSync(process.execPath, ['tools/build.mjs'], { stdio: 'inherit' });
const { path: bundle } = await bundleFromSource('ingest-bench', [
  "export { EventStore } from './libs/event-store/src/index';",
  "export { createEnricher, loadGeo } from './libs/enrichment/src/index';",
  "export { eventInputSchema } from './libs/schema/src/index';",
]);

const out = { machine, duration: DURATION, connections: CONNECTIONS, batchConnections: BATCH_CONNECTIONS, at: new Date().toISOString() };
let ok = true;
if (ONLY.includes('track')) {
  const t = await benchTrack();
  out.track = t;
  console.log(`\ntrack: POST /v1/track, ${CONNECTIONS} connections, ${DURATION} s (after ${WARMUP} s warm-up)`);
  console.log('server            req/s    p50 ms   p99 ms   2xx        non-2xx  errors  peak RSS MiB');
  for (const [name, r] of [['bare express 5', t.bare], ['ours (npm start)', t.ours]]) {
    console.log(`${name.padEnd(16)} ${fmt(r.reqPerS).padStart(7)}  ${String(r.p50Ms).padStart(7)}  ${String(r.p99Ms).padStart(7)}  ${String(r.ok2xx).padEnd(9)}  ${String(r.non2xx).padEnd(7)}  ${String(r.errors).padEnd(6)}  ${fmt(r.peakRssMiB)}`);
  }
  console.log(`ours/bare: ${t.ratio.toFixed(2)} (target >= 0.5)`);
  console.log(`stored: ${t.verify.storedRows} rows for ${t.verify.acked} acknowledged (warm-up + run) + ${t.verify.cutInFlight} cut in flight at the end; acknowledged ids missing: ${t.verify.missingAcked}`);
  ok &&= t.verify.missingAcked === 0 && t.verify.cutInFlight >= 0 && t.verify.cutInFlight <= 2 * CONNECTIONS && t.ours.non2xx === 0;
}
if (ONLY.includes('batch')) {
  const b = await benchBatch(bundle);
  out.batch = b;
  console.log(`\nbatch: POST /v1/batch, 1000 events per request, ${BATCH_CONNECTIONS} connections, ${DURATION} s`);
  console.log(`raw EventStore.insertRows: ${fmt(b.raw.eventsPerS1000)} events/s (1000 rows per INSERT), ${fmt(b.raw.eventsPerS20000)} events/s (20,000 rows per INSERT); peak RSS ${fmt(b.raw.peakRssMiB)} MiB`);
  console.log(`ours: ${fmt(b.ours.eventsPerS)} events/s (${fmt(b.ours.reqPerS, 1)} req/s, p50 ${b.ours.p50Ms} ms, p99 ${b.ours.p99Ms} ms, non-2xx ${b.ours.non2xx}, errors ${b.ours.errors}); peak RSS ${fmt(b.ours.peakRssMiB)} MiB`);
  console.log(`ours/raw: ${b.ratio1000.toFixed(2)} of 1000-row INSERTs, ${b.ratio20000.toFixed(2)} of 20,000-row INSERTs (target >= 0.5, and >= 100,000 events/s)`);
  console.log(`stored: ${b.verify.storedRows} rows = ${b.verify.requestsStored} requests x 1000: ${b.verify.rowsMatchRequests}; acknowledged requests missing: ${b.verify.missingAcked}`);
  ok &&= b.verify.missingAcked === 0 && b.verify.rowsMatchRequests && b.ours.non2xx === 0;
}
mkdirSync('dist/bench', { recursive: true });
writeFileSync(join('dist/bench', 'ingest-results.json'), JSON.stringify(out, null, 2));
console.log(`\nresults: dist/bench/ingest-results.json${ok ? '' : '\nVERIFY FAILED: an acknowledged event is missing, a 5xx was answered, or counts differ'}`);
process.exit(ok ? 0 : 1);
