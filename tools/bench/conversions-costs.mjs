// Where the CPU of POST /v1/funnel and goals in /v1/insights goes, and what migration 011 changed: each building block
// run alone with chDB on a data directory loaded by read.mjs (BENCH_DIR=<dir> npm run bench:read -- --properties),
// CPU time of this process per query (3 runs after 1 warm-up, max_threads 4). Numbers for BENCHMARKS.md,
// "Conversions". The String event_name of before 011 is measured on a temporary copy of `events` (dropped at the end).
//
//   node tools/bench/conversions-costs.mjs /tmp/b31/d10m
import { createRequire } from 'node:module';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir) throw new Error('usage: node tools/bench/conversions-costs.mjs <BENCH_DIR of read.mjs>');
const { Session } = createRequire(import.meta.url)('chdb');
const session = new Session(join(dir, 'clickhouse'));
const events = Number(session.query('SELECT count() FROM bench.events', 'CSV'));
console.log(`${events.toLocaleString('en')} events in ${dir}; CPU ms per query`);

const run = (label, sql) => {
  session.query(sql, 'CSV');
  const before = process.cpuUsage();
  for (let k = 0; k < 3; k++) session.query(`${sql} SETTINGS max_threads = 4`, 'CSV');
  const used = process.cpuUsage(before);
  console.log(`${label.padEnd(72)} ${String(Math.round((used.user + used.system) / 1000 / 3)).padStart(6)}`);
};

// The bench's 4-step funnel: $pageview on /pricing -> clicked_pricing -> signup -> purchase.
const STEPS = ["(event_name = '$pageview' AND ifNull(path = '/pricing', 0))", "(event_name = 'clicked_pricing')", "(event_name = 'signup')", "(event_name = 'purchase')"];
const OR = `(${STEPS.join(' OR ')})`;
const NOBOT = "device_type != 'bot'";
const MASK = STEPS.map((s, i) => `bitShiftLeft(toUInt64(${s}), ${i})`).join(' + ');
const packed = (t, ent) => `SELECT sum(length(a)) FROM (SELECT ${ent} AS ent, arraySort(groupArray(bitOr(bitShiftLeft(toUInt64(toUnixTimestamp64Milli(timestamp)), 10), ${MASK}))) AS a FROM ${t} WHERE ${NOBOT} AND ${OR} GROUP BY ent)`;
const perStep = (t) =>
  `SELECT sum(length(a1) + length(a2) + length(a3) + length(a4)) FROM (SELECT anonymous_id AS ent, ${STEPS.map((s, i) => `arraySort(groupArrayIf(toUnixTimestamp64Milli(timestamp), ${s})) AS a${i + 1}`).join(', ')} FROM ${t} WHERE ${NOBOT} AND ${OR} GROUP BY ent)`;

session.query('DROP TABLE IF EXISTS bench.events_string_names');
session.query('CREATE TABLE bench.events_string_names AS bench.events');
session.query('ALTER TABLE bench.events_string_names MODIFY COLUMN event_name String');
session.query('INSERT INTO bench.events_string_names SELECT * FROM bench.events');
try {
  run('funnel OR prefilter, event_name String (before 011)', `SELECT count() FROM bench.events_string_names WHERE ${NOBOT} AND ${OR}`);
  run('funnel OR prefilter, event_name LowCardinality (011)', `SELECT count() FROM bench.events WHERE ${NOBOT} AND ${OR}`);
  run('per-entity arrays: one per step, by anonymous_id, String names', perStep('bench.events_string_names'));
  run('per-entity arrays: one packed array, by anonymous_id, LowCardinality', packed('bench.events', 'anonymous_id'));
  run('per-entity arrays: one packed array, by anon_key (011)', packed('bench.events', 'anon_key'));
  run('windowFunnel by anon_key, OR prefilter', `SELECT level, count() FROM (SELECT anon_key, windowFunnel(86400000)(toUInt64(toUnixTimestamp64Milli(timestamp)), ${STEPS.join(', ')}) AS level FROM bench.events WHERE ${NOBOT} AND ${OR} GROUP BY anon_key) GROUP BY level`);
  run('visitors by country: uniqExact(anonymous_id)', `SELECT country, uniqExact(anonymous_id) FROM bench.events WHERE ${NOBOT} GROUP BY country FORMAT Null`);
  run('visitors by country: uniqExact(anon_key) (011)', `SELECT country, uniqExact(anon_key) FROM bench.events WHERE ${NOBOT} GROUP BY country FORMAT Null`);
  run('visitors by country: uniqExact(cityHash64(anonymous_id)) (64-bit, not kept)', `SELECT country, uniqExact(cityHash64(anonymous_id)) FROM bench.events WHERE ${NOBOT} GROUP BY country FORMAT Null`);
  run('visitors by country: uniqCombined(anonymous_id) (the estimate)', `SELECT country, uniqCombinedIf(anonymous_id, anonymous_id != '') FROM bench.events WHERE ${NOBOT} GROUP BY country FORMAT Null`);
  run('goal by country: both exact counts by anon_key', `SELECT country, uniqExactIf(anon_key, event_name = 'signup'), uniqExact(anon_key) FROM bench.events WHERE ${NOBOT} GROUP BY country FORMAT Null`);
  // A funnel breakdown by a visit dimension keys each kept event's visit (read for its step-1 events).
  const keyed = (key) => `SELECT sum(if(${STEPS[0]}, ${key}, 0)) FROM bench.events WHERE ${NOBOT} AND ${OR} FORMAT Null`;
  run('kept events\' visit keys: hashing both ids', keyed('cityHash64(session_id, anonymous_id)'));
  run('kept events\' visit keys: visit_key (011)', keyed('visit_key'));
  run('visits rows in an IN set of the step-1 visits (not kept)', `SELECT count() FROM bench.visits WHERE bot = 0 AND session_key IN (SELECT visit_key FROM bench.events WHERE ${NOBOT} AND ${STEPS[0]})`);
} finally {
  session.query('DROP TABLE IF EXISTS bench.events_string_names');
  session.cleanup?.();
}
