// Where the CPU of POST /v1/insights goes (raw events, then the visits aggregate): each building block of its SQL run alone with chDB on a data
// directory loaded by read.mjs (BENCH_DIR=<dir> npm run bench:read -- --properties, then this on the same dir), CPU
// time of this process per query (5 runs after 2 warm-up). Numbers for BENCHMARKS.md, "Insights".
//
//   node tools/bench/insights-costs.mjs /tmp/i30bench/d1m
import { createRequire } from 'node:module';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir) throw new Error('usage: node tools/bench/insights-costs.mjs <BENCH_DIR of read.mjs>');
const { Session } = createRequire(import.meta.url)('chdb');
const session = new Session(join(dir, 'clickhouse'));
const events = Number(session.query('SELECT count() FROM bench.events', 'CSV'));
console.log(`${events.toLocaleString('en')} events in ${dir}; CPU ms per query (and per 1M events)`);

const run = (label, sql) => {
  for (let k = 0; k < 2; k++) session.query(sql, 'CSV');
  const before = process.cpuUsage();
  const n = 5;
  for (let k = 0; k < n; k++) session.query(`${sql} SETTINGS max_threads = 4`, 'CSV');
  const used = process.cpuUsage(before);
  const ms = (used.user + used.system) / 1000 / n;
  console.log(`${label.padEnd(58)} ${String(Math.round(ms)).padStart(6)} (${(ms / (events / 1e6)).toFixed(0)})`);
};
const byVisit = "FROM bench.events WHERE device_type != 'bot' GROUP BY cityHash64(session_id, anonymous_id)";
run('group the events by visit (count)', `SELECT count() FROM (SELECT count() ${byVisit})`);
run('  + the totals columns (anon, events, pageviews, duration)', `SELECT count() FROM (SELECT any(anonymous_id), count(), countIf(event_name = '$pageview'), max(timestamp) - min(timestamp) ${byVisit})`);
run('  + entry source in the /v1/sources order (tuple key)', `SELECT count(DISTINCT x) FROM (SELECT argMin(source, (timestamp, length(source), source, medium)) AS x ${byVisit})`);
run('  + entry source by timestamp alone', `SELECT count(DISTINCT x) FROM (SELECT argMin(source, timestamp) AS x ${byVisit})`);
run('a LowCardinality column per event (country)', 'SELECT count(DISTINCT x) FROM (SELECT country AS x FROM bench.events)');
run('a property per event (JSONExtractRaw)', "SELECT count(DISTINCT x) FROM (SELECT JSONExtractRaw(properties, 'plan') AS x FROM bench.events)");
// The visits aggregate (migration 010): what its whole-days path costs, part by part.
const W = 'FROM bench.visits WHERE bot = 0';
run('visits: scan the rows (count)', `SELECT count() ${W}`);
run('visits: sums and visitor sketch over the rows, no grouping', `SELECT sum(events), sum(pageviews), uniqCombined(anonymous_id) ${W}`);
run('visits: GROUP BY visit, a count', `SELECT count() FROM (SELECT session_key, count() ${W} GROUP BY session_key)`);
run('visits:   + event and pageview sums', `SELECT count(), sum(n), sum(pv) FROM (SELECT session_key, sum(events) n, sum(pageviews) pv ${W} GROUP BY session_key)`);
run('visits:   + any(anonymous_id)', `SELECT count(), sum(n), sum(pv), uniqCombined(a) FROM (SELECT session_key, any(anonymous_id) a, sum(events) n, sum(pageviews) pv ${W} GROUP BY session_key)`);
run('visits:   min(entry) instead', `SELECT count(DISTINCT substring(e, 21, 5)) FROM (SELECT session_key, min(entry) e ${W} GROUP BY session_key)`);
run('visits: visits with rows on several days', `SELECT count() FROM (SELECT session_key ${W} GROUP BY session_key HAVING count() > 1)`);
// Migration 009: the same property from the map column, and GET /v1/properties' key list (keys per event, grouped).
if (Number(session.query("SELECT count() FROM system.columns WHERE database = 'bench' AND table = 'events' AND name = 'properties_map'", 'CSV')) > 0) {
  run('a property per event (properties_map, as prop:<key>)', "SELECT count(DISTINCT x) FROM (SELECT arrayElementOrNull(properties_map, 'plan') AS x FROM bench.events)");
  run('a property per event (properties_map, has(mapKeys) + m[k])', "SELECT count(DISTINCT x) FROM (SELECT if(has(mapKeys(properties_map), 'plan'), properties_map['plan'], NULL) AS x FROM bench.events)");
  run('a property per event grouped: JSONExtractRaw', "SELECT x, count() FROM (SELECT JSONExtractRaw(properties, 'plan') AS x FROM bench.events) GROUP BY x");
  run('a property per event grouped: properties_map (as prop:<key>)', "SELECT x, count() FROM (SELECT arrayElementOrNull(properties_map, 'plan') AS x FROM bench.events) GROUP BY x");
  run('a LowCardinality column grouped (country)', 'SELECT country, count() FROM bench.events GROUP BY country');
  run('the keys grouped: JSONExtractKeys', 'SELECT arrayJoin(JSONExtractKeys(properties)) AS k, count() FROM bench.events GROUP BY k');
  run('the keys grouped: mapKeys alone (no null-valued keys)', 'SELECT arrayJoin(mapKeys(properties_map)) AS k, count() FROM bench.events GROUP BY k');
  run(
    'the keys grouped: mapKeys + null-valued keys (as served)',
    "SELECT arrayJoin(arrayConcat(mapKeys(properties_map), if(position(properties, 'null') > 0, arrayFilter(k -> NOT has(mapKeys(properties_map), k), JSONExtractKeys(properties)), []))) AS k, count() FROM bench.events GROUP BY k",
  );
}
session.cleanup?.();
