// What one small INSERT costs inside the embedded engine: the same enriched event rows, INSERTed through
// chDB's raw insert (as EventStore.insertRows does) into
//   Null / Memory            no part written: the parse and pipeline alone
//   MergeTree, 2 columns     the smallest part chDB writes
//   events (this tree)       the request's INSERT today: events alone (the aggregate builder works off the path)
//   events + 3 views         the request's INSERT before migration 004 (a server's schema: daily_rollup_mv,
//                            daily_uniques_mv, sessions_mv run inside the INSERT)
// and what the aggregate builder then pays to fold a second's worth of those INSERTs into the aggregates.
// Wall time and CPU time of the whole process (getrusage: every engine thread) per INSERT, after a warm-up.
// Figures for BENCHMARKS.md, not a timed test.
//
//   node tools/bench/insert-cost.mjs            # 50 and 1000 rows per INSERT, 40 INSERTs each
//   node tools/bench/insert-cost.mjs --n=100
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { UAS, batchBodies, bundleFromSource, fmt } from './lib.mjs';

const N = Number(process.argv.find((a) => a.startsWith('--n='))?.slice(4) ?? 40);
const { lib } = await bundleFromSource('insert-cost', [
  "export { AggregateBuilder, EVENT_INSERT_COLUMNS, connectClickHouse, insertEventRows, migrateEventStore } from './libs/event-store/src/index';",
  "export { createEnricher, loadGeo } from './libs/enrichment/src/index';",
  "export { eventInputSchema } from './libs/schema/src/index';",
]);
const dir = mkdtempSync(join(tmpdir(), 'bench-insert-cost-'));
const { client, rawInsert, close } = lib.connectClickHouse({ chdbPath: join(dir, 'clickhouse'), database: 'analytics' });
await lib.migrateEventStore(client, { db: 'analytics', builder: true }); // embedded: no views
await lib.migrateEventStore(client, { db: 'views' }); // a server's schema: the three views on events
await client.command({ query: 'CREATE DATABASE scratch' });
await client.command({ query: 'CREATE TABLE scratch.nul (a UInt64, b String) ENGINE = Null' });
await client.command({ query: 'CREATE TABLE scratch.mem (a UInt64, b String) ENGINE = Memory' });
await client.command({ query: 'CREATE TABLE scratch.plain (a UInt64, b String) ENGINE = MergeTree ORDER BY a' });

lib.loadGeo();
const rows = [];
batchBodies().forEach((body, b) => {
  const enrich = lib.createEnricher({ projectId: '7d1c6a2e-6a0e-4c1e-9a53-1f0d3c1b2a10', ip: '81.2.69.160', userAgent: UAS[b % UAS.length], host: 'shop.example.com', nowMs: Date.now(), ipHashSecret: 'bench' });
  for (const e of JSON.parse(body.replace('__REQ__', `cost-${b}`)).events) rows.push(enrich(lib.eventInputSchema.parse(e)));
});

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
let seq = 0;
async function measure(insert) {
  await insert();
  await insert();
  const wall0 = performance.now();
  const cpu0 = cpuMs();
  for (let i = 0; i < N; i++) await insert();
  return { wallMs: (performance.now() - wall0) / N, cpuMs: (cpuMs() - cpu0) / N };
}

const results = [];
for (const size of [50, 1000]) {
  const chunk = rows.slice(0, size);
  const pairs = Buffer.from(Array.from({ length: size }, (_, i) => JSON.stringify([i, 'x'])).join('\n'));
  const small = (table) => () => rawInsert({ table, values: pairs, format: 'JSONCompactEachRow', columns: ['a', 'b'] });
  const events = (db, withSeq) => () =>
    lib.insertEventRows({ client, rawInsert, table: `${db}.events`, columns: lib.EVENT_INSERT_COLUMNS, seq: withSeq ? ++seq : undefined }, chunk);
  for (const [name, insert] of [
    ['Null, 2 columns', small('scratch.nul')],
    ['Memory, 2 columns', small('scratch.mem')],
    ['MergeTree, 2 columns', small('scratch.plain')],
    ['events (this tree)', events('analytics', true)],
    ['events + 3 views (before 004)', events('views', false)],
  ]) {
    results.push({ size, name, ...(await measure(insert)) });
  }
}

// The builder's share: fold a second's worth of 50-row INSERTs (20 of them, ~1,000 events/s) into the aggregates.
const builder = new lib.AggregateBuilder({ db: 'analytics', client, committedSeq: () => seq });
await builder.init();
await builder.catchUp();
const before = seq;
const folds = [];
for (let r = 0; r < 10; r++) {
  for (let i = 0; i < 20; i++) await lib.insertEventRows({ client, rawInsert, table: 'analytics.events', columns: lib.EVENT_INSERT_COLUMNS, seq: ++seq }, rows.slice(0, 50));
  const wall0 = performance.now();
  const cpu0 = cpuMs();
  await builder.catchUp();
  folds.push({ wallMs: performance.now() - wall0, cpuMs: cpuMs() - cpu0 });
}
const avg = (k) => folds.reduce((s, f) => s + f[k], 0) / folds.length;

console.log(`one INSERT through chDB's raw insert, ${N} after a warm-up (whole-process CPU, every engine thread)`);
console.log('rows  table                           wall ms   CPU ms   CPU µs/row');
for (const r of results) console.log(`${String(r.size).padStart(4)}  ${r.name.padEnd(30)} ${fmt(r.wallMs, 1).padStart(8)} ${fmt(r.cpuMs, 1).padStart(8)} ${fmt((r.cpuMs * 1000) / r.size, 0).padStart(11)}`);
console.log(`aggregate builder: one range of 20 INSERTs x 50 rows (${seq - before} INSERTs in 10 ranges): ${fmt(avg('wallMs'), 1)} ms wall, ${fmt(avg('cpuMs'), 1)} ms CPU per range = ${fmt((avg('cpuMs') * 1000) / 1000, 0)} µs CPU per event`);
await client.close();
await close?.();
rmSync(dir, { recursive: true, force: true });
