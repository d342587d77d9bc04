// Where a 4-step POST /v1/funnel read spends its time: the statement buildFunnel makes (the read bench's FUNNEL4, by
// visitor, the store's 30 days) and its parts, each a statement of its own, run straight against the embedded store a
// read bench loaded (BENCH_DIR of `npm run bench:read`, that bench no longer running: one process opens a chDB
// directory at a time), each 7 times, median wall and CPU (getrusage: every engine thread). Figures for BENCHMARKS.md
// ("Issue 49's targets"), not a timed test. Run from the repository root (the query builder is bundled from source).
//
//   MALLOC_ARENA_MAX=2 BENCH_DIR=/tmp/b10 BENCH_EVENTS=10000000 npm run bench:read -- --properties   # loads BENCH_DIR once
//   node tools/bench/funnel-cost.mjs /tmp/b10 [--threads=4]
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { bundleFromSource, timeStatement } from './lib.mjs';

const dir = process.argv[2];
if (!dir || dir.startsWith('--')) throw new Error('usage: node tools/bench/funnel-cost.mjs <BENCH_DIR> [--threads=4]');
const THREADS = Number(process.argv.find((a) => a.startsWith('--threads='))?.split('=')[1] ?? 4); // READ_MAX_THREADS' default

const { lib } = await bundleFromSource('funnel-cost', [
  "export { buildFunnel } from './libs/event-store/src/queries/funnel.query';",
  "export { readTablesOf } from './libs/event-store/src/tables/read-tables';",
  "export { funnelBodySchema } from './libs/schema/src/index';",
]);
const { Session } = createRequire(import.meta.url)('chdb');
const session = new Session(join(dir, 'clickhouse'));
const db = 'bench';
const one = (sql) => JSON.parse(session.query(sql, 'JSONEachRow').trim().split('\n')[0]);
const { p, first, last } = one(`SELECT toString(project_id) AS p, toString(min(day)) AS first, toString(max(day) + 1) AS last FROM ${db}.visits GROUP BY project_id ORDER BY count() DESC LIMIT 1`);

// The read bench's 4-step funnel (tools/bench/read.mjs, "conversions funnel, 4 steps"), its parameters written in.
const FUNNEL4 = [{ event: '$pageview', path: '/pricing' }, { event: 'clicked_pricing' }, { event: 'signup' }, { event: 'purchase' }];
const tables = lib.readTablesOf({ db, eventsTable: `${db}.events`, buildsAggregates: true });
const { sql, params } = lib.buildFunnel(tables, p, lib.funnelBodySchema.parse({ from: first, to: last, steps: FUNNEL4 }));
const full = sql.replace(/\{(\w+):[^}]+\}/g, (_, n) => (typeof params[n] === 'number' ? String(params[n]) : `'${String(params[n]).replaceAll("'", "\\'")}'`));
// Its innermost SELECT (the matching events: visitor key, time, step bits) and the grouping per visitor around it.
const matching = full.match(/SELECT anon_key[\s\S]*?sipHash128\(''\)\)/)[0];
const grouped = full.match(/SELECT ent,\s*max\(dly\)[\s\S]*?FUNNEL_MAX_EVENTS_PER_ENTITY'\) = 0/)[0];
const range = `project_id = '${p}' AND timestamp >= '${first} 00:00:00.000' AND timestamp < '${last} 00:00:00.000'`;

const STATEMENTS = [
  ['the funnel statement', full],
  ['  part: the matching events, counted (visitors, times, step bits)', `SELECT count(), uniqExact(ent) FROM (${matching})`],
  ['  part: those grouped into sorted arrays per visitor', `SELECT count() FROM (${grouped})`],
  ["  column: event_name of the range's events", `SELECT count() FROM ${db}.events WHERE ${range} AND event_name IN ('$pageview', 'clicked_pricing', 'signup', 'purchase')`],
  ['  column: path (the first step)', `SELECT count() FROM ${db}.events WHERE ${range} AND ifNull(path = '/pricing', 0)`],
  ['  columns: the visitor keys and times', `SELECT count(), sum(cityHash64(anon_key, anon_daily, timestamp)) FROM ${db}.events WHERE ${range}`],
];

console.log(`project ${p}, ${first} to ${last}, max_threads ${THREADS}; load ${loadavg()[0].toFixed(2)}`);
console.log(`${'statement'.padEnd(70)} ${'wall ms'.padStart(8)} ${'CPU ms'.padStart(8)}  answer`);
for (const [label, statement] of STATEMENTS) {
  timeStatement(session, statement, `max_threads = ${THREADS}`, 1); // a warm-up run: the first read of a part pays for loading it
  const [wall, cpu, out] = timeStatement(session, statement, `max_threads = ${THREADS}`);
  console.log(`${label.padEnd(70)} ${wall.toFixed(1).padStart(8)} ${cpu.toFixed(1).padStart(8)}  ${out.trim().split('\n')[0].slice(0, 120)}`);
}
console.log(`load ${loadavg()[0].toFixed(2)}`);
session.close();
