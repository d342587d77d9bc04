// Where a whole-day GET /v1/sources read spends its time: the statements of that read and their parts, run straight
// against the embedded store a read bench loaded (BENCH_DIR of `npm run bench:read`, that bench no longer running: one
// process opens a chDB directory at a time), each 12 times, median wall and CPU (getrusage: every engine thread).
// Figures for BENCHMARKS.md ("/v1/sources"), not a timed test.
//
//   BENCH_DIR=/tmp/b10 BENCH_REQUESTS=50 BENCH_MIX=sources npm run bench:read   # loads BENCH_DIR once
//   node tools/bench/sources-cost.mjs /tmp/b10 [--days=30] [--threads=4]
// With migration 013 it adds the read as it is made since: the whole weeks from sources_weekly, the other days from
// sources_daily.
import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { loadavg } from 'node:os';

const dir = process.argv[2];
if (!dir || dir.startsWith('--')) throw new Error('usage: node tools/bench/sources-cost.mjs <BENCH_DIR> [--days=30] [--threads=4]');
const arg = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const DAYS = arg('days', 30);
const THREADS = arg('threads', 4); // READ_MAX_THREADS' default

const { Session } = createRequire(import.meta.url)('chdb');
const session = new Session(join(dir, 'clickhouse'));
const db = 'bench';
const one = (sql) => JSON.parse(session.query(sql, 'JSONEachRow').trim().split('\n')[0]);
const { p, first } = one(`SELECT toString(project_id) AS p, toString(min(day)) AS first FROM ${db}.sources_daily GROUP BY project_id ORDER BY count() DESC LIMIT 1`);
const to = one(`SELECT toString(toDate('${first}') + ${DAYS}) AS d`).d;
const range = `project_id = '${p}' AND day >= '${first}' AND day < '${to}'`;
const settings = ` SETTINGS max_threads = ${THREADS}`;

// Migration 013: the range's whole ISO weeks from sources_weekly (when the builder merged them), its other days from sources_daily.
const hasWeekly = Number(one(`SELECT count() AS n FROM system.tables WHERE database = '${db}' AND name = 'sources_weekly'`).n) > 0;
const mondays = JSON.parse(session.query(`SELECT groupArray(toString(d)) AS m FROM (SELECT toDate('${first}') + number AS d FROM numbers(${DAYS}) WHERE toDayOfWeek(d) = 1 AND d + 7 <= toDate('${to}'))`, 'JSONEachRow')).m;
const inWeeks = `(${mondays.map((m) => `day >= '${m}' AND day < toDate('${m}') + 7`).join(' OR ') || '0'})`;
const weekly = hasWeekly && mondays.length > 0
  ? [['the read with whole weeks: sources_weekly FINAL for the weeks, sources_daily FINAL for the other days', `SELECT source, medium, sum(n), uniqCombinedMerge(u) FROM (SELECT source, medium, events AS n, uniques AS u FROM ${db}.sources_weekly FINAL WHERE project_id = '${p}' AND day IN (${mondays.map((m) => `'${m}'`).join(', ')}) AND events > 0 UNION ALL SELECT source, medium, events AS n, uniques AS u FROM ${db}.sources_daily FINAL WHERE ${range} AND NOT ${inWeeks} AND events > 0) GROUP BY source, medium ORDER BY 3 DESC LIMIT 100`]]
  : [];
const STATEMENTS = [
  ['the read: which days are fresh (daily_uniques, sources_daily_days)', `SELECT day, max(built_seq) FROM ${db}.daily_uniques WHERE project_id = '${p}' AND day >= toDate('${first}') - 1 AND day <= '${to}' GROUP BY day UNION ALL SELECT day, max(built_seq) FROM ${db}.sources_daily_days WHERE ${range} GROUP BY day`],
  ['the read: sources_daily FINAL, events and sketches merged per (source, medium)', `SELECT source, medium, sum(events), uniqCombinedMerge(uniques) FROM ${db}.sources_daily FINAL WHERE ${range} AND events > 0 GROUP BY source, medium ORDER BY 3 DESC LIMIT 100`],
  ['  part: its rows, FINAL, no sketch', `SELECT source, medium, sum(events) FROM ${db}.sources_daily FINAL WHERE ${range} AND events > 0 GROUP BY source, medium`],
  ['  part: its sketches merged, without FINAL (every stored version)', `SELECT source, medium, uniqCombinedMerge(uniques) FROM ${db}.sources_daily WHERE ${range} GROUP BY source, medium`],
  ['  part: its sketches merged into one, FINAL', `SELECT uniqCombinedMerge(uniques) FROM ${db}.sources_daily FINAL WHERE ${range}`],
  ...weekly,
];

function time(sql) {
  const runs = [];
  for (let i = 0; i < 12; i++) {
    const cpu = process.cpuUsage();
    const t = performance.now();
    session.query(sql + settings, 'JSONEachRow');
    const used = process.cpuUsage(cpu);
    runs.push([performance.now() - t, (used.user + used.system) / 1000]);
  }
  runs.sort((a, b) => a[0] - b[0]);
  return runs[6];
}

const counts = one(`SELECT count() AS stored, uniqExact(day, source, medium) AS current, uniqExact(source, medium) AS groups, sum(length(toString(uniques))) AS bytes FROM ${db}.sources_daily WHERE ${range}`);
console.log(`project ${p}, ${DAYS} days from ${first}: sources_daily holds ${counts.stored} rows (${counts.current} current, ${counts.groups} groups),`);
console.log(`sketch states ${(Number(counts.bytes) / 1e6).toFixed(1)} MB (${(Number(counts.bytes) / Number(counts.stored) / 1024).toFixed(0)} KiB each); max_threads ${THREADS}; median of 12`);
if (hasWeekly) console.log(`whole weeks: ${mondays.join(', ') || 'none'} (${Number(one(`SELECT count() AS n FROM ${db}.sources_weekly FINAL WHERE project_id = '${p}' AND events > 0`).n)} sources_weekly rows)`);
console.log(`${'statement'.padEnd(78)} ${'wall ms'.padStart(8)} ${'cpu ms'.padStart(8)}`);
const loadBefore = loadavg()[0];
for (const [label, sql] of STATEMENTS) {
  const [wall, cpu] = time(sql);
  console.log(`${label.padEnd(78)} ${wall.toFixed(1).padStart(8)} ${cpu.toFixed(1).padStart(8)}`);
}
console.log(`1-minute load average ${loadBefore.toFixed(2)} -> ${loadavg()[0].toFixed(2)}`);
session.cleanup?.();
