// Backup and restore of the embedded stores, and the cost of the metrics on the request path.
//   npm run bench:backup                         # 1,000,000 events
//   npm run bench:backup -- --events=100000
// 1. Loads N synthetic events into a DATA_DIR (through EventStore.insertWith: the aggregate builder builds them),
//    serves the standalone app on it, and runs `node tools/backup.mjs` against it while a client keeps POSTing
//    /v1/track: wall clock and this process's CPU (the BACKUP runs in the embedded engine's threads here), the size
//    written, and the track latency before and during the backup (new INSERTs wait for the BACKUP).
// 2. Closes the stores and runs `node tools/restore.mjs` into a new DATA_DIR: wall clock and CPU (user + sys).
// 3. Metrics on the request path: a bare express app answering GET /x with and without ServiceMetrics.observe,
//    interleaved rounds over one keep-alive connection; CPU per request of each, and one scrape of /metrics.
// The libs are bundled from source with esbuild (as tools/build.mjs does for the apps), so no build step is needed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { bundleFromSource } from './lib.mjs';
import { syntheticEventsSql } from './synthetic-events.mjs';

const arg = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const EVENTS = Number(arg('events') ?? process.env.BENCH_EVENTS ?? 1_000_000);
const CHUNK = 500_000;

const { lib } = await bundleFromSource('backup-bench', [
  "export { buildApp } from './apps/standalone/src/app';",
  "export { resolveSecrets } from './apps/standalone/src/secrets';",
  "export { envSchema, loadConfig, openStores } from './libs/runtime/src/index';",
  "export { createLogger, ServiceMetrics } from './libs/service-kit/src/index';",
]);
const express = (await import('express')).default;

const work = mkdtempSync(join(tmpdir(), 'bench-backup-'));
const dataDir = join(work, 'data');
const logger = lib.createLogger({ level: 'warn', name: 'bench' });
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const du = (path) => Number(execFileSync('du', ['-sb', path], { encoding: 'utf8' }).split('\t')[0]);
const MiB = 2 ** 20;

console.log(`machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, load ${loadavg().map((l) => l.toFixed(1)).join(' ')}, node ${process.version}`);
const env = lib.loadConfig(lib.envSchema, { DATA_DIR: dataDir, SOURCES_REFRESH_MS: '3600000' });
const { secrets } = lib.resolveSecrets(dataDir, {});
const stores = await lib.openStores(env, logger, dataDir);
const { project, keys } = await stores.keyStore.createProject({ name: 'bench' });
const db = stores.events.db;
const loadStart = performance.now();
for (let offset = 0; offset < EVENTS; offset += CHUNK) {
  const rows = Math.min(CHUNK, EVENTS - offset);
  await stores.events.insertWith(rows, (seq) => stores.events.command(syntheticEventsSql({ db, projectId: project.id, fromMs: Date.UTC(2026, 9, 1), spanDays: 30, eventsPerSession: 5, offset, rows, seq, totalRows: EVENTS })));
}
await stores.events.aggregatesCaughtUp();
console.log(`loaded ${EVENTS.toLocaleString('en')} events and built the aggregates in ${((performance.now() - loadStart) / 1000).toFixed(1)} s; DATA_DIR ${(du(dataDir) / MiB).toFixed(0)} MiB`);

const app = lib.buildApp({ stores, secrets, logger, dataDir, rateRules: { track: { ratePerS: 1e6, burst: 1e6 }, batch: { ratePerS: 1e6, burst: 1e6 } } });
const server = await new Promise((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s));
});
const base = `http://127.0.0.1:${server.address().port}`;

// A client tracking one event at a time, recording each acknowledgement's latency.
let phase = 'before';
const latencies = { before: [], during: [] };
let tracking = true;
const tracker = (async () => {
  while (tracking) {
    const t = performance.now();
    const res = await fetch(`${base}/v1/track`, { method: 'POST', headers: { authorization: `Bearer ${keys.sk}`, 'content-type': 'application/json' }, body: JSON.stringify({ event: 'bench', anonymous_id: 'a-1' }) });
    await res.arrayBuffer();
    if (res.status !== 202) throw new Error(`track ${res.status}`);
    if (phase !== 'after') latencies[phase].push(performance.now() - t);
  }
})();
await new Promise((r) => setTimeout(r, 3000));
phase = 'during';
const backupDir = join(work, 'backup');
const cpu0 = cpuMs();
const t0 = performance.now();
const out = await new Promise((resolve, reject) => {
  import('node:child_process').then(({ execFile }) =>
    execFile(process.execPath, ['tools/backup.mjs', backupDir, '--url', base, `--token=${secrets.ADMIN_TOKEN}`], (e, stdout, stderr) => (e ? reject(new Error(stderr || e.message)) : resolve(stdout))),
  );
});
const backupMs = performance.now() - t0;
const backupCpu = cpuMs() - cpu0;
phase = 'after';
tracking = false;
await tracker;
process.stdout.write(out);
console.log(`backup: ${(backupMs / 1000).toFixed(2)} s wall, ${(backupCpu / 1000).toFixed(2)} s CPU of the serving process (engine threads included); ${(du(backupDir) / MiB).toFixed(0)} MiB written`);
const fmt = (xs) => `n=${xs.length} p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`;
console.log(`track while idle:      ${fmt(latencies.before)}`);
console.log(`track during backup:   ${fmt(latencies.during)}`);

const scrape0 = cpuMs();
const s0 = performance.now();
const text = await (await fetch(`${base}/metrics`)).text();
console.log(`one /metrics scrape after the run: ${(performance.now() - s0).toFixed(1)} ms wall, ${(cpuMs() - scrape0).toFixed(1)} ms CPU, ${text.length} bytes, ${text.split('\n').filter((l) => l && !l.startsWith('#')).length} samples`);
await new Promise((r) => server.close(r));
server.closeAllConnections?.();
await stores.close();

const restoreDir = join(work, 'restored');
const timed = execFileSync('bash', ['-c', `TIMEFORMAT='%R %U %S'; { time ${JSON.stringify(process.execPath)} tools/restore.mjs ${JSON.stringify(backupDir)} ${JSON.stringify(restoreDir)} >/dev/null; } 2>&1`], { encoding: 'utf8' }).trim().split('\n').pop();
const [real, user, sys] = timed.split(' ').map(Number);
console.log(`restore: ${real.toFixed(2)} s wall, ${(user + sys).toFixed(2)} s CPU (user ${user.toFixed(2)} + sys ${sys.toFixed(2)}); new DATA_DIR ${(du(restoreDir) / MiB).toFixed(0)} MiB`);
rmSync(work, { recursive: true, force: true });

// Metrics on the request path: the same bare app with and without the observer, interleaved.
const serve = (withMetrics) => {
  const a = express();
  if (withMetrics) a.use(new lib.ServiceMetrics().observe);
  a.get('/x', (_req, res) => res.json({ ok: true }));
  return new Promise((resolve) => {
    const s = a.listen(0, '127.0.0.1', () => resolve(s));
  });
};
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const hit = (port) =>
  new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/x', agent }, (res) => res.resume().on('end', resolve)).on('error', reject);
  });
const servers = { without: await serve(false), with: await serve(true) };
const perRequest = { without: [], with: [] };
const N = 3000;
for (let round = 0; round < 6; round++) {
  for (const k of round % 2 ? ['with', 'without'] : ['without', 'with']) {
    const port = servers[k].address().port;
    for (let i = 0; i < 200; i++) await hit(port); // warm
    const c = cpuMs();
    for (let i = 0; i < N; i++) await hit(port);
    perRequest[k].push(((cpuMs() - c) * 1000) / N);
  }
}
for (const s of Object.values(servers)) s.close();
agent.destroy();
const med = (xs) => pct(xs, 50);
console.log(`request path CPU (client and server in this process), median of 6 rounds of ${N}: without metrics ${med(perRequest.without).toFixed(1)} µs, with ${med(perRequest.with).toFixed(1)} µs per request (+${(med(perRequest.with) - med(perRequest.without)).toFixed(1)} µs)`);
