// Sizing figure of the production shape (`npm run bench:topology`): the ingest replica's own CPU per tracked and per
// batched event, measured on `npm run topology` (two ingest-api replicas behind nginx, the aggregate builder, the
// ClickHouse HTTP test harness, real PostgreSQL and Redis). CPU is read from /proc/<pid>/stat (utime + stime) of the
// two replica processes before and after each load, divided by the events they acknowledged (202). Beside it, the
// aggregate builder's own CPU per event and the store's (the harness process: the INSERTs, the builder's folds and the
// merges), each from before the load until the builder has gone idle after it. Then the latency of reads of an
// aggregate while a smaller batch load runs (readsDuringIngest). Figures for BENCHMARKS.md and docker/README.md's
// sizing section, not a timed test.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379 npm run bench:topology
//   npm run bench:topology -- --duration=15 --connections=10 --batch-size=20 --read-load-connections=2
//   AGGREGATE_WAIT_MS=5000 npm run bench:topology   # the reads phase with read-your-writes on
//
// The harness serialises every query on one chDB session, so throughput here says nothing about a ClickHouse
// server; the replica's CPU per event does not depend on how fast the store answers. Rate limits are raised so the
// token bucket does not cap the measurement.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { ADMIN_TOKEN, UAS, UNLIMITED, cpuMsOf, createProject, fmt, sampleEvent } from './lib.mjs';

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const DURATION = Number(arg('duration', 15));
const CONNECTIONS = Number(arg('connections', 10));
const BATCH_SIZE = Number(arg('batch-size', 20));
const ROOT = resolve(new URL('../..', import.meta.url).pathname);

if (!process.env.DATABASE_URL || !process.env.REDIS_URL) {
  console.error('bench:topology: set DATABASE_URL and REDIS_URL (the PostgreSQL and Redis the topology shares)');
  process.exit(1);
}

const cpuSeconds = (pid) => cpuMsOf(pid) / 1000;

/** `node dist/tools/topology/main.js` (built by the npm script), resolved with the proxy URL and the pids it printed. */
function startTopology(dataDir) {
  const env = {
    ...process.env, DATA_DIR: dataDir, PROXY_PORT: '0', ADMIN_TOKEN, LOG_LEVEL: 'info', NODE_OPTIONS: '',
    ...UNLIMITED,
  };
  const cli = spawn(process.execPath, ['dist/tools/topology/main.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((done, fail) => {
    cli.stdout.on('data', (c) => {
      out += c.toString();
      const ready = /Ready: (http:\S+)/.exec(out);
      if (!ready) return;
      const pids = Object.fromEntries([...out.matchAll(/^(\S+)\s+pid (\d+)/gm)].map((m) => [m[1], Number(m[2])]));
      done({ cli, url: ready[1], replicas: [pids['ingest-api-1'], pids['ingest-api-2']], builder: pids['aggregate-builder'], store: pids['clickhouse-harness'], readApi: pids['read-api'] });
    });
    cli.once('exit', (code) => fail(new Error(`topology exited with ${code}:\n${out}`)));
  });
}

/** One load through nginx; the replicas' CPU seconds and the acknowledged events during it. */
async function measure(topology, { path, body, eventsPerRequest, key }) {
  const before = topology.replicas.map(cpuSeconds);
  const [builderBefore, storeBefore] = [cpuSeconds(topology.builder), cpuSeconds(topology.store)];
  let i = 0;
  const result = await autocannon({
    url: `${topology.url}${path}`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: DURATION,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    requests: [{ setupRequest: (req) => ({ ...req, body: body(i++), headers: { ...req.headers, 'user-agent': UAS[i % UAS.length] } }) }],
  });
  const after = topology.replicas.map(cpuSeconds);
  const perReplica = after.map((a, r) => a - before[r]);
  const cpu = perReplica.reduce((a, b) => a + b, 0);
  const events = result['2xx'] * eventsPerRequest;
  // The builder folds what the load left: until its CPU stands still for 3 s (it only checks, every second, then).
  const settleStart = Date.now();
  for (let last = -1, now = cpuSeconds(topology.builder); now - last > 0.02 && Date.now() - settleStart < 120_000; ) {
    await new Promise((r) => setTimeout(r, 3000));
    last = now;
    now = cpuSeconds(topology.builder);
  }
  const builder = cpuSeconds(topology.builder) - builderBefore;
  const store = cpuSeconds(topology.store) - storeBefore;
  return { cpu, perReplica, events, builder, store, non2xx: result.non2xx, errors: result.errors, seconds: result.duration };
}

/**
 * Reads of an aggregate (stats from daily_rollup, whole UTC days) through nginx to read-api, one after another, while
 * a batch load of READ_LOAD_CONNECTIONS connections keeps the ingest replicas writing: what a dashboard waits under
 * live traffic. With AGGREGATE_WAIT_MS set (read-your-writes), each read first waits for the builder to build what
 * was acknowledged before it; by default it answers from what is built.
 */
async function readsDuringIngest(topology, project) {
  const day = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  const query = new URLSearchParams({ from: new Date(day).toISOString(), to: new Date(day + 86_400_000).toISOString(), group_by: 'source' });
  let i = 0;
  const load = autocannon({
    url: `${topology.url}/v1/batch`, method: 'POST', connections: READ_LOAD_CONNECTIONS, duration: DURATION,
    headers: { authorization: `Bearer ${project.sk}`, 'content-type': 'application/json' },
    requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ events: Array.from({ length: BATCH_SIZE }, (_, k) => sampleEvent((i++) * BATCH_SIZE + k)) }) }) }],
  });
  let done = false;
  void load.then(() => (done = true));
  await new Promise((r) => setTimeout(r, 1000));
  const wall = [];
  // read-api's own CPU over the reads (it serves nothing else here): per read, beside the wall-clock figures.
  const readApiBefore = cpuSeconds(topology.readApi);
  while (!done) {
    const t = performance.now();
    const res = await fetch(`${topology.url}/v1/stats?${query}`, { headers: { authorization: `Bearer ${project.rk}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`stats ${res.status}`);
    wall.push(performance.now() - t);
  }
  const readApiCpu = cpuSeconds(topology.readApi) - readApiBefore;
  const result = await load;
  wall.sort((a, b) => a - b);
  const pct = (p) => wall[Math.min(wall.length - 1, Math.ceil((p / 100) * wall.length) - 1)];
  return { reads: wall.length, p50: pct(50), p95: pct(95), max: wall.at(-1), cpuPerRead: (readApiCpu / wall.length) * 1000, events: result['2xx'] * BATCH_SIZE, seconds: result.duration };
}

const READ_LOAD_CONNECTIONS = Number(arg('read-load-connections', 2));
const dataDir = mkdtempSync(join(tmpdir(), 'bench-topology-'));
const topology = await startTopology(dataDir);
try {
  const project = await createProject(topology.url);
  const track = await measure(topology, { path: '/v1/track', body: (n) => JSON.stringify(sampleEvent(n)), eventsPerRequest: 1, key: project.sk });
  const batch = await measure(topology, {
    path: '/v1/batch', eventsPerRequest: BATCH_SIZE, key: project.sk,
    body: (n) => JSON.stringify({ events: Array.from({ length: BATCH_SIZE }, (_, k) => sampleEvent(n * BATCH_SIZE + k)) }),
  });
  const reads = await readsDuringIngest(topology, project);
  const uptime = execFileSync('uptime', { encoding: 'utf8' }).trim();
  console.log(`\nProduction shape (npm run topology), ${CONNECTIONS} connections for ${DURATION} s per load, through nginx to two ingest-api replicas`);
  console.log(`uptime: ${uptime}   (loadavg ${loadavg().map((l) => l.toFixed(2)).join(' ')})`);
  for (const [name, m] of [['track (1 event per request)', track], [`batch (${BATCH_SIZE} events per request)`, batch]]) {
    const perEvent = m.cpu / m.events;
    console.log(
      `${name}: ${fmt(m.events)} events acknowledged (${fmt(m.events / m.seconds)}/s), ${m.non2xx} non-2xx, ${m.errors} errors; ` +
        `replica CPU ${m.perReplica.map((c) => c.toFixed(2)).join(' s + ')} s = ${fmt(perEvent * 1e6, 1)} µs per event ` +
        `-> one fully busy replica core ~${fmt(1 / perEvent)} events/s; 10k events/s needs ${fmt((10_000 * perEvent) / 0.7, 1)} replica cores at 70%`,
    );
    console.log(
      `  aggregate builder process: ${m.builder.toFixed(2)} s = ${fmt((m.builder / m.events) * 1e6, 1)} µs per event; ` +
        `store (harness: INSERTs, folds, merges, until the builder was idle): ${m.store.toFixed(2)} s = ${fmt((m.store / m.events) * 1e6, 1)} µs per event`,
    );
  }
  console.log(
    `reads during live ingest (AGGREGATE_WAIT_MS=${process.env.AGGREGATE_WAIT_MS || '0'}): ${reads.reads} sequential GET /v1/stats (today, group_by=source, ` +
      `daily_rollup) while ${READ_LOAD_CONNECTIONS} connections sent ${fmt(reads.events / reads.seconds)} events/s in batches of ${BATCH_SIZE}: ` +
      `p50 ${reads.p50.toFixed(1)} ms, p95 ${reads.p95.toFixed(1)} ms, max ${reads.max.toFixed(1)} ms; read-api CPU ${reads.cpuPerRead.toFixed(2)} ms per read`,
  );
} finally {
  topology.cli.kill('SIGTERM');
  await new Promise((r) => topology.cli.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
