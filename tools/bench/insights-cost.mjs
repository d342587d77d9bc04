// What a whole-day POST /v1/insights read from the `visits` aggregate costs, statement by statement, run straight
// against the embedded store a read bench loaded (BENCH_DIR of `npm run bench:read`, that bench no longer running: one
// process opens a chDB directory at a time), each 7 times, median wall and CPU (getrusage: every engine thread), after
// one warm-up statement. Figures for BENCHMARKS.md ("Insights totals"), not a timed test.
//
//   BENCH_DIR=/tmp/b10 BENCH_REQUESTS=10 BENCH_MIX=insights npm run bench:read -- --properties   # loads BENCH_DIR once
//   git show <rev>:libs/event-store/src/queries/__golden__/insights.golden > /tmp/before.golden
//   node tools/bench/insights-cost.mjs /tmp/b10 [--before=/tmp/before.golden]
//
// 1. The golden SQL of the totals cases (libs/event-store/src/queries/__golden__/insights.golden, and with --before an
//    older copy of it), its parameters bound to the store's largest project over all its days, interleaved twice.
// 2. A prototype of the next step (issue 49), not the code's SQL: it creates bench.visit_spans_proto (the visits with
//    rows on more than one day) in BENCH_DIR, then reads every other visit's day row with FINAL and groups per visit
//    only the listed ones, beside the same answers from the per-visit grouping (it prints whether they agree).
import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';

const dir = process.argv[2];
if (!dir || dir.startsWith('--')) throw new Error('usage: node tools/bench/insights-cost.mjs <BENCH_DIR> [--before=<golden file>]');
const before = process.argv.find((a) => a.startsWith('--before='))?.slice('--before='.length);
const THREADS = 4; // READ_MAX_THREADS' default

const { Session } = createRequire(import.meta.url)('chdb');
const session = new Session(join(dir, 'clickhouse'));
const db = 'bench';
const q = (sql) => session.query(sql, 'JSONEachRow').trim();
const one = (sql) => JSON.parse(q(sql).split('\n')[0]);
const { p, first, last } = one(`SELECT toString(project_id) AS p, toString(min(day)) AS first, toString(max(day) + 1) AS last FROM ${db}.visits GROUP BY project_id ORDER BY count() DESC LIMIT 1`);
const params = { project: p, from_day: first, lo_day: first, to_day: last };

/** A golden case's SQL ("-- <name>" up to the blank line), its parameters written in, on the bench database. */
function golden(file, name) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const at = lines.findIndex((l) => l.startsWith(`-- ${name}`));
  if (at === -1) throw new Error(`${file}: no case "${name}"`);
  const end = lines.indexOf('', at);
  return lines
    .slice(at + 2, end)
    .join('\n')
    .replaceAll('analytics.', `${db}.`)
    .replace(/\{(\w+):[^}]+\}/g, (_, n) => (n === 'limit' ? '100' : `'${params[n]}'`));
}

function time(sql) {
  const runs = [];
  let out = '';
  for (let i = 0; i < 7; i++) {
    const cpu = process.cpuUsage();
    const t = performance.now();
    out = session.query(`${sql} SETTINGS max_threads = ${THREADS}`, 'JSONEachRow');
    const used = process.cpuUsage(cpu);
    runs.push([performance.now() - t, (used.user + used.system) / 1000]);
  }
  runs.sort((a, b) => a[0] - b[0]);
  return [...runs[3], out];
}
const row = (label, [wall, cpu]) => console.log(`${label.padEnd(70)} ${wall.toFixed(1).padStart(8)} ${cpu.toFixed(1).padStart(8)}`);

const W = `project_id = '${p}' AND day >= '${first}' AND day < '${last}' AND bot = 0`;
console.log(`project ${p}, ${first} to ${last}: ${one(`SELECT count() AS n FROM ${db}.visits WHERE ${W}`).n} visit rows; max_threads ${THREADS}; median of 7`);
console.log(`${'statement'.padEnd(70)} ${'wall ms'.padStart(8)} ${'cpu ms'.padStart(8)}`);
const loadBefore = loadavg()[0];

const GOLDEN = ['totals: every event and visit metric', 'totals: visit metrics, whole days'];
const current = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../../libs/event-store/src/queries/__golden__/insights.golden');
time(golden(current, GOLDEN[0])); // warm-up: the first statement of a process pays for loading the parts
for (let round = 0; round < 2; round++) {
  for (const name of GOLDEN) {
    row(`golden "${name}"`, time(golden(current, name)));
    if (before) row(`  before: the same case of ${before}`, time(golden(before, name)));
  }
}

q(`CREATE TABLE IF NOT EXISTS ${db}.visit_spans_proto ENGINE = MergeTree ORDER BY (project_id, session_key) AS SELECT project_id, session_key FROM ${db}.visits GROUP BY project_id, session_key HAVING uniqExact(day) > 1`);
console.log(`prototype: ${one(`SELECT count() AS n FROM ${db}.visit_spans_proto WHERE project_id = '${p}'`).n} multi-day visits of ${one(`SELECT uniqExact(session_key) AS n FROM ${db}.visits WHERE project_id = '${p}'`).n}`);
const SPANS = `(SELECT session_key FROM ${db}.visit_spans_proto WHERE project_id = '${p}')`;
const VISITORS = `(SELECT uniqCombinedIf(anonymous_id, anonymous_id != '' AND day >= '${first}') FROM ${db}.visits WHERE ${W})`;
const TOTALS = `countIf(cur = 1) AS visits, countIf(cur = 1 AND vn = 1 AND vpv = 1) AS bounces, sumIf(vdur, cur = 1) AS duration, sumIf(vpv, cur = 1) AS pageviews, any(${VISITORS}) AS visitors`;
const BY_SOURCE = `SELECT vd0, countIf(cur = 1) AS visits, uniqCombinedIf(anon, anon != '' AND cur = 1) AS visitors, countIf(cur = 1 AND vn = 1 AND vpv = 1) AS bounces`;
const PAIRS = [
  [
    'totals',
    `SELECT ${TOTALS} FROM (SELECT session_key AS visit, toUInt8(day >= '${first}') AS cur, sum(events) AS vn, sum(pageviews) AS vpv, toUnixTimestamp64Milli(max(last_ts)) - toUnixTimestamp64Milli(min(first_ts)) AS vdur FROM ${db}.visits WHERE ${W} GROUP BY visit, cur)`,
    `SELECT ${TOTALS} FROM (SELECT toUInt8(day >= '${first}') AS cur, events AS vn, pageviews AS vpv, toUnixTimestamp64Milli(last_ts) - toUnixTimestamp64Milli(first_ts) AS vdur FROM ${db}.visits FINAL WHERE ${W} AND session_key NOT IN ${SPANS} UNION ALL SELECT toUInt8(day >= '${first}') AS cur, sum(events), sum(pageviews), toUnixTimestamp64Milli(max(last_ts)) - toUnixTimestamp64Milli(min(first_ts)) FROM ${db}.visits WHERE ${W} AND session_key IN ${SPANS} GROUP BY session_key, cur)`,
  ],
  [
    'visitors, visits, bounces by source',
    `${BY_SOURCE} FROM (SELECT session_key AS visit, toUInt8(day >= '${first}') AS cur, any(anonymous_id) AS anon, sum(events) AS vn, sum(pageviews) AS vpv, min(entry) AS ent, substring(ent, 21, toUInt32(substring(ent, 16, 5))) AS vd0 FROM ${db}.visits WHERE ${W} GROUP BY visit, cur) GROUP BY vd0 ORDER BY vd0`,
    `${BY_SOURCE} FROM (SELECT toUInt8(day >= '${first}') AS cur, anonymous_id AS anon, events AS vn, pageviews AS vpv, substring(entry, 21, toUInt32(substring(entry, 16, 5))) AS vd0 FROM ${db}.visits FINAL WHERE ${W} AND session_key NOT IN ${SPANS} UNION ALL SELECT toUInt8(day >= '${first}') AS cur, any(anonymous_id), sum(events), sum(pageviews), substring(min(entry), 21, toUInt32(substring(min(entry), 16, 5))) FROM ${db}.visits WHERE ${W} AND session_key IN ${SPANS} GROUP BY session_key, cur) GROUP BY vd0 ORDER BY vd0`,
  ],
];
for (let round = 0; round < 2; round++) {
  for (const [label, grouped, spans] of PAIRS) {
    const now = time(grouped);
    const next = time(spans);
    row(`${label}: grouped per visit (now)`, now);
    row(`${label}: FINAL rows + the multi-day visits grouped (prototype)${now[2] === next[2] ? '' : ' ANSWERS DIFFER'}`, next);
  }
}
console.log(`1-minute load average ${loadBefore.toFixed(2)} -> ${loadavg()[0].toFixed(2)}`);
session.cleanup?.();
