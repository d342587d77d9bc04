// Export benchmark (issue 32): loads N synthetic events into the embedded store (INSERT ... SELECT FROM numbers(), as
// the read benchmark does), then downloads GET /v1/export of the whole range in each format through the real HTTP app
// (listen + fetch, the body read and dropped as it arrives) and reports per format: rows/s, bytes, wall clock, CPU
// time of the server process (HTTP and in-process ClickHouse) and of the downloading client (another process, as a real
// client is), and the server's peak RSS above its RSS just before the export (sampled every 10 ms): what it added.
// While the ndjson export runs, another project's /v1/stats is timed too (one export never starves other reads).
//
//   npm run bench:export                        # 500,000 events
//   BENCH_EVENTS=1000000 npm run bench:export   # or: node tools/bench/export.mjs --events=1000000
//   BENCH_FORMATS=csv,parquet (or --formats=...): only these formats
//
// The libs are bundled from source with esbuild (as tools/build.mjs does for the apps), so no build step is needed.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { bundleFromSource } from './lib.mjs';
import { syntheticEventsSql } from './synthetic-events.mjs';

const arg = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const EVENTS = Number(arg('events') ?? process.env.BENCH_EVENTS ?? 500_000);
const FORMATS = (arg('formats') ?? process.env.BENCH_FORMATS ?? 'ndjson,csv,parquet').split(',');
const CHUNK = 1_000_000;
const DAY = 86_400_000;
const D0 = Date.UTC(2026, 2, 1);
const SPAN_DAYS = 30;

const { lib } = await bundleFromSource('export-bench', [
  "export { buildApp } from './apps/read-api/src/app';",
  "export { envSchema, loadConfig, openStores } from './libs/runtime/src/index';",
  "export { createLogger } from './libs/service-kit/src/index';",
]);

const dataDir = mkdtempSync(join(tmpdir(), 'bench-export-'));
const logger = lib.createLogger({ level: 'warn', name: 'bench' });
const env = lib.loadConfig(lib.envSchema, { DATA_DIR: dataDir, CLICKHOUSE_DATABASE: 'bench', SOURCES_REFRESH_MS: '3600000' });
const stores = await lib.openStores(env, logger, dataDir);
const db = stores.events.db;
const project = (await stores.keyStore.createProject({ name: 'bench' })).project.id;
const readKey = (await stores.keyStore.createKey(project, 'rk')).key;
const other = (await stores.keyStore.createProject({ name: 'other' })).project.id;
const otherKey = (await stores.keyStore.createKey(other, 'rk')).key;

const MiB = 2 ** 20;
const rssMiB = () => process.memoryUsage().rss / MiB;
console.log(`machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM (${(freemem() / 2 ** 30).toFixed(1)} free), load ${loadavg().map((l) => l.toFixed(2)).join(' ')}, node ${process.version}`);
console.log(`loading ${EVENTS.toLocaleString('en')} events (${SPAN_DAYS} days) into ${dataDir}`);
for (let offset = 0; offset < EVENTS; offset += CHUNK) {
  const rows = Math.min(CHUNK, EVENTS - offset);
  await stores.events.insertWith(rows, (seq) => stores.events.command(syntheticEventsSql({ db, projectId: project, fromMs: D0, spanDays: SPAN_DAYS, eventsPerSession: 5, offset, rows, seq, totalRows: EVENTS })));
}
await stores.events.insertWith(10, (seq) => stores.events.command(syntheticEventsSql({ db, projectId: other, fromMs: D0, spanDays: SPAN_DAYS, eventsPerSession: 5, offset: 0, rows: 10, seq, totalRows: 10 })));
await stores.events.aggregatesCaughtUp();
await stores.events.command(`OPTIMIZE TABLE ${db}.events FINAL`);

// The events the range holds (a few of the last sessions' events fall after its end).
const EXPECTED = Number((await stores.events.select(`SELECT count() AS c FROM ${db}.events WHERE project_id = {p:UUID} AND timestamp < {to:DateTime64(3, 'UTC')}`, { p: project, to: new Date(D0 + SPAN_DAYS * DAY).toISOString().replace('T', ' ').replace('Z', '') }))[0].c);

const app = lib.buildApp({ logger, authenticator: stores.authenticator, events: stores.events });
const server = await new Promise((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s));
});
const base = `http://127.0.0.1:${server.address().port}`;
const range = { from: new Date(D0).toISOString(), to: new Date(D0 + SPAN_DAYS * DAY).toISOString() };

// The downloading client: reads the body as it comes, counts bytes and newlines, reports its own CPU time.
const CLIENT = `
const [url, key] = process.argv.slice(1);
const res = await fetch(url, { headers: { authorization: 'Bearer ' + key } });
if (res.status !== 200) { console.error(res.status, await res.text()); process.exit(1); }
let bytes = 0, newlines = 0;
for await (const chunk of res.body) { bytes += chunk.length; for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) newlines++; }
const u = process.cpuUsage();
console.log(JSON.stringify({ bytes, newlines, cpuMs: (u.user + u.system) / 1000 }));
`;

const settle = async () => {
  await stores.events.command('SYSTEM JEMALLOC PURGE').catch(() => undefined);
  global.gc?.();
  await new Promise((r) => setTimeout(r, 1000));
};

console.log(`\nGET /v1/export of the whole range: ${EXPECTED.toLocaleString('en')} events (server cpu = the server process: HTTP and in-process ClickHouse; the client downloads in another process)`);
console.log('format   rows       MiB     wall s   rows/s     server cpu s  client cpu s  RSS before  peak added  other project\'s /v1/stats during it');
for (const format of FORMATS) {
  await settle();
  const before = rssMiB();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB())), 10);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  // The client is another process (as a real one is): this process's RSS and CPU are the server's and the engine's.
  const client = spawn(process.execPath, ['--input-type=module', '-e', CLIENT, `${base}/v1/export?${new URLSearchParams({ ...range, format })}`, readKey], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  client.stdout.on('data', (d) => (out += d));
  let statsMs;
  if (format === 'ndjson') {
    // Another project's read while this export is under way.
    await new Promise((r) => setTimeout(r, 300));
    const s0 = performance.now();
    const r = await fetch(`${base}/v1/stats?${new URLSearchParams(range)}`, { headers: { authorization: `Bearer ${otherKey}` } });
    if (r.status !== 200) throw new Error(`stats ${r.status}`);
    await r.text();
    statsMs = performance.now() - s0;
  }
  const [code] = await once(client, 'close');
  if (code !== 0) throw new Error(`export ${format}: client exited ${code}`);
  const { bytes, newlines, cpuMs: clientCpuMs } = JSON.parse(out);
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  peak = Math.max(peak, rssMiB());
  const rows = format === 'parquet' ? EXPECTED : format === 'csv' ? newlines - 1 : newlines;
  if (rows !== EXPECTED) throw new Error(`export ${format}: ${rows} rows, expected ${EXPECTED}`);
  const statsNote = format === 'ndjson' ? `${statsMs.toFixed(0)} ms` : '';
  console.log(
    `${format.padEnd(8)} ${String(rows).padEnd(10)} ${(bytes / MiB).toFixed(1).padStart(6)}  ${wall.toFixed(2).padStart(7)}  ${Math.round(rows / wall).toLocaleString('en').padStart(9)}  ${((cpu.user + cpu.system) / 1e6).toFixed(2).padStart(9)}  ${(clientCpuMs / 1000).toFixed(2).padStart(11)}  ${before.toFixed(0).padStart(8)} MiB  ${(peak - before).toFixed(0).padStart(6)} MiB  ${statsNote}`,
  );
}

server.close();
await stores.close();
rmSync(dataDir, { recursive: true, force: true });
