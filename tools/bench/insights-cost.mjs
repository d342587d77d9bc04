// What a whole-day POST /v1/insights read from the `visits` aggregate costs, statement by statement, run straight
// against the embedded store a read bench loaded (BENCH_DIR of `npm run bench:read`, that bench no longer running: one
// process opens a chDB directory at a time), each 7 times, median wall and CPU (getrusage: every engine thread), after
// one warm-up statement. Figures for BENCHMARKS.md ("Insights totals"), not a timed test.
//
//   BENCH_DIR=/tmp/b10 BENCH_REQUESTS=10 BENCH_MIX=insights npm run bench:read -- --properties   # loads BENCH_DIR once
//   git show <rev>:libs/event-store/src/queries/__golden__/insights.golden > /tmp/before.golden
//   node tools/bench/insights-cost.mjs /tmp/b10 [--before=/tmp/before.golden] [--build]
//
// The golden SQL of the whole-day cases read from the `visits` and `daily_rollup` aggregates (libs/event-store/src/queries/__golden__/
// insights.golden, and with --before an older copy of it), its parameters bound to the store's largest project over
// all its days, each beside its --before version, interleaved twice; it prints whether the two answers agree.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { timeStatement } from './lib.mjs';

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
const params = { project: p, from_day: first, lo_day: first, to_day: last, from: `${first} 00:00:00.000`, lo: `${first} 00:00:00.000`, to: `${last} 00:00:00.000`, shift: String(Date.parse(last) - Date.parse(first)) };

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

const time = (sql) => timeStatement(session, sql, `max_threads = ${THREADS}`);
const row = (label, [wall, cpu]) => console.log(`${label.padEnd(70)} ${wall.toFixed(1).padStart(8)} ${cpu.toFixed(1).padStart(8)}`);

const W = `project_id = '${p}' AND day >= '${first}' AND day < '${last}' AND bot = 0`;
const spans = one(`SELECT count() AS n, uniqExact(session_key) AS k FROM ${db}.visit_spans WHERE project_id = '${p}' AND day >= '${first}' AND day < '${last}'`);
console.log(`project ${p}, ${first} to ${last}: ${one(`SELECT count() AS n FROM ${db}.visits WHERE ${W}`).n} visit rows, ${spans.k} visits listed in visit_spans (${spans.n} rows); max_threads ${THREADS}; median of 7`);
console.log(`${'statement'.padEnd(70)} ${'wall ms'.padStart(8)} ${'cpu ms'.padStart(8)}`);
const loadBefore = loadavg()[0];

const GOLDEN = [
  'totals: every event and visit metric',
  'totals: visit metrics, whole days',
  'visits by source, whole days',
  'events by entry_path, exit_path, whole days',
  'bounce_rate by country, whole days (joined to visits)',
  'events by event_name',
  'visitors by country, device_type',
  'visitors by time:day',
  'visitors, pageviews by path, whole days (daily_dims)',
];
const current = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../../libs/event-store/src/queries/__golden__/insights.golden');
time(golden(current, GOLDEN[0])); // warm-up: the first statement of a process pays for loading the parts
for (let round = 0; round < 2; round++) {
  for (const name of GOLDEN) {
    const now = time(golden(current, name));
    row(`golden "${name}"`, now);
    if (before && !readFileSync(before, 'utf8').split('\n').some((l) => l.startsWith(`-- ${name}`))) console.log(`  before: no case "${name}" in ${before}`);
    else if (before) {
      const then = time(golden(before, name));
      row(`  before: the same case of ${before}${then[2] === now[2] ? '' : ' ANSWERS DIFFER'}`, then);
    }
  }
}

// --build: what the builder's visit_spans statement adds (migration 014), daily_dims' (016) and quarter_hours' (017): their SELECT over all
// the store's events beside daily_rollup's and the visits fold's grouping (the simpler of its columns), one thread each, the engine's query condition cache
// off (with it a repeat of the same filter skips the granules it found empty: 18 ms). The SQL is aggregates.ts's
// (OFF_HOME_DAY_SQL, VISIT_KEY_SQL) written out, as a bench script cannot import the TypeScript.
if (process.argv.includes('--build')) {
  const FOLDS = [
    ['visit_spans fold (all events)', `SELECT count() AS n FROM (SELECT project_id, toDate(timestamp) AS day, cityHash64(session_id, anonymous_id) AS session_key FROM ${db}.events WHERE toUInt32(toDate(timestamp)) != intDiv(toUInt64OrZero(substringIndex(session_id, '-', -1)), 48) GROUP BY project_id, day, session_key)`],
    ['daily_dims fold (all events; migration 016)', `SELECT count() AS n FROM (SELECT project_id, toDate(timestamp) AS day, dv.1 AS dim, dv.2 AS value, toUInt8(device_type = 'bot') AS bot, count(), countIf(event_name = '$pageview'), uniqCombinedStateIf(anonymous_id, anonymous_id != '') FROM ${db}.events ARRAY JOIN [('path', path), ('browser', toNullable(toString(browser))), ('os', toNullable(toString(os))), ('country', toNullable(toString(country))), ('device_type', toNullable(toString(device_type)))] AS dv GROUP BY project_id, day, dim, value, bot)`],
    ['quarter_hours fold (all events; migration 017)', `SELECT count() AS n FROM (SELECT project_id, toDate(timestamp) AS day, toUInt8(intDiv(toUnixTimestamp(timestamp) % 86400, 900)) AS slot, toUInt8(device_type = 'bot') AS bot, count(), countIf(event_name = '$pageview'), uniqCombinedStateIf(anonymous_id, anonymous_id != '') FROM ${db}.events GROUP BY project_id, day, slot, bot)`],
    ['daily_rollup fold (all events)', `SELECT count() AS n FROM (SELECT project_id, toDate(timestamp) AS day, event_name, source, medium, country, device_type, count(), uniqCombinedStateIf(anonymous_id, anonymous_id != '') FROM ${db}.events GROUP BY project_id, day, event_name, source, medium, country, device_type)`],
    ['visits fold, its simpler columns (all events)', `SELECT count() AS n FROM (SELECT project_id, toDate(timestamp) AS day, cityHash64(session_id, anonymous_id) AS session_key, toUInt8(device_type = 'bot') AS bot, any(anonymous_id), min(timestamp), max(timestamp), count(), countIf(event_name = '$pageview') FROM ${db}.events GROUP BY project_id, day, session_id, anonymous_id, bot)`],
  ];
  for (let round = 0; round < 2; round++) {
    for (const [label, sql] of FOLDS) {
      row(`${label}, median of 3`, timeStatement(session, sql, 'max_threads = 1, use_query_condition_cache = 0', 3));
    }
  }
}
console.log(`1-minute load average ${loadBefore.toFixed(2)} -> ${loadavg()[0].toFixed(2)}`);
session.cleanup?.();
