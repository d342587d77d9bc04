// The parts of the dashboard's visit reads at a stored bench's size (issue 49, "Insights: visits summed per day" in
// BENCHMARKS.md): the freshness pre-read, the statement of visitors by source with visit_dims, its sketch merge, the
// listed visits' grouping, the headline with and without visit_dims; wall ms of each statement alone (median of 5
// after a warm-up, the fastest three printed).
//   node tools/bench/visit-dims-cost.mjs <BENCH_DIR of tools/bench/dashboard.mjs>
import { bundleFromSource } from './lib.mjs';
const { lib } = await bundleFromSource('inspect', [
  "export { envSchema, loadConfig, openStores } from './libs/runtime/src/index';",
  "export { createLogger } from './libs/service-kit/src/index';",
  "export { freshVisitDays, buildInsights, readTablesOf } from './libs/event-store/src/index';",
  "export { insightsBodySchema } from './libs/schema/src/index';",
]);
const dataDir = process.argv[2];
const logger = lib.createLogger({ level: 'warn', name: 'x', format: 'json' });
const env = lib.loadConfig(lib.envSchema, { ...process.env, DATA_DIR: dataDir, CLICKHOUSE_DATABASE: 'bench', READ_MAX_MEMORY_BYTES: '4294967296' });
const stores = await lib.openStores(env, logger, dataDir);
const db = stores.events.db;
const project = (await stores.keyStore.listProjects()).find((p) => p.name === 'bench-dashboard');
const DAY = 86400000; const today = Date.now() - (Date.now() % DAY);
const day = (ms) => new Date(ms).toISOString().slice(0, 10);
const month = { from: day(today + DAY - 30 * DAY), to: day(today + DAY) };
const tables = lib.readTablesOf(stores.events);
const time = async (label, sql, params) => {
  const times = []; let rows;
  for (let i = 0; i < 5; i++) { const t = performance.now(); rows = await stores.events.select(sql, params); times.push(performance.now() - t); }
  times.sort((a, c) => a - c);
  console.log(label.padEnd(60), times.slice(0, 3).map((t) => t.toFixed(0)).join(' '), JSON.stringify(rows[0]).slice(0, 60));
};
const body = lib.insightsBodySchema.parse({ ...month, metrics: ['visitors'], dimensions: ['source'], limit: 10 });
const vd = await lib.freshVisitDays(stores.events, project.id, body);
console.log('fresh', vd.length, vd.at(0), vd.at(-1));
let t = performance.now(); await lib.freshVisitDays(stores.events, project.id, body); console.log('pre-read ms', (performance.now() - t).toFixed(1));
{ const ts = []; for (let i = 0; i < 9; i++) { const t0 = performance.now(); await lib.freshVisitDays(stores.events, project.id, body); ts.push(performance.now() - t0); } ts.sort((a, b) => a - b); console.log('pre-read x9', ts.map((x) => x.toFixed(0)).join(' ')); }
{ const ts = []; for (let i = 0; i < 9; i++) { const t0 = performance.now(); await stores.events.read(project.id, 'SELECT 1 AS x FROM ' + db + '.visit_dims_days LIMIT 1', {}); ts.push(performance.now() - t0); } ts.sort((a, b) => a - b); console.log('trivial read x9', ts.map((x) => x.toFixed(0)).join(' ')); }
const q = lib.buildInsights(tables, project.id, body, { visitDays: vd });
await time('source visitors, full statement', q.sql, q.params);
const P = { ...q.params, p: project.id };
await time('summary part only (merge sketches)', `SELECT value, uniqCombinedMerge(uniques) u FROM ${db}.visit_dims FINAL WHERE project_id = {p:UUID} AND dim = 'source' AND day IN {visit_days:Array(Date)} AND visits > 0 GROUP BY value ORDER BY u DESC LIMIT 10`, P);
await time('summary rows count', `SELECT count() c, uniqExact(value) v FROM ${db}.visit_dims FINAL WHERE project_id = {p:UUID} AND dim = 'source' AND day IN {visit_days:Array(Date)} AND visits > 0`, P);
await time('all days FINAL, NOT IN fresh', `SELECT count() c FROM ${db}.visits FINAL WHERE project_id = {p:UUID} AND day >= {lo_day:Date} AND day < {to_day:Date} AND day NOT IN {visit_days:Array(Date)} AND bot = 0`, P);
await time('all days FINAL count', `SELECT count() c FROM ${db}.visits FINAL WHERE project_id = {p:UUID} AND day >= {lo_day:Date} AND day < {to_day:Date} AND bot = 0`, P);
await time('raw days FINAL count', `SELECT count() c FROM ${db}.visits FINAL WHERE project_id = {p:UUID} AND day IN {raw_days:Array(Date)} AND bot = 0`, P);
await time('listed keys (widened)', `SELECT count() c FROM ${db}.visit_spans WHERE project_id = {p:UUID} AND day >= {spans_from:Date} AND day <= {spans_to:Date}`, P);
await time('listed rows grouped', `SELECT count() c FROM (SELECT session_key FROM ${db}.visits WHERE project_id = {p:UUID} AND day >= {lo_day:Date} AND day < {to_day:Date} AND bot = 0 AND session_key IN (SELECT session_key FROM ${db}.visit_spans WHERE project_id = {p:UUID} AND day >= {spans_from:Date} AND day <= {spans_to:Date}) GROUP BY session_key)`, P);
const h = lib.insightsBodySchema.parse({ ...month, metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration', 'events'], compare: 'previous_period' });
const hq = lib.buildInsights(tables, project.id, h, { visitDays: await lib.freshVisitDays(stores.events, project.id, h) });
await time('headline statement', hq.sql, hq.params);
const hq0 = lib.buildInsights(tables, project.id, h, {});
await time('headline statement, no visit_dims', hq0.sql, hq0.params);
await time('channel summary sketches', `SELECT uniqCombinedMerge(uniques) u, count() FROM ${db}.visit_dims FINAL WHERE project_id = {p:UUID} AND dim = 'channel' AND day IN {visit_days:Array(Date)} AND visits > 0`, P);
const seqSql = (table, range) => `SELECT toString(day) AS d, max(built_seq) AS seq FROM ${table} WHERE project_id = {p:UUID} AND ${range} GROUP BY day`;
await time('seqs: daily_uniques', seqSql(`${db}.daily_uniques`, 'day >= {lo_day:Date} AND day <= {to_day:Date}'), P);
await time('seqs: visit_dims_days', seqSql(`${db}.visit_dims_days`, 'day >= {lo_day:Date} AND day <= {to_day:Date}'), P);
await stores.close();
