// Read-path benchmark: loads N synthetic events straight into the embedded event store (INSERT ... SELECT FROM
// numbers(), generated inside ClickHouse, through EventStore.insertWith so that the aggregate builder fills
// daily_rollup, daily_uniques and sessions as in production),
// waits for the background merges to settle, then measures GET /v1/stats, /v1/sources and /v1/query latency
// through the real HTTP app (listen + fetch). --optimize also runs OPTIMIZE TABLE ... FINAL before measuring.
// Reports the scale-curve figures too: load rate, disk bytes per event per table, RSS after the load and during the
// queries (the engine runs in this process), the time the background merges take to settle.
//
//   --layout=ordered (default): events arrive in time order (each INSERT covers a stretch of days, as live traffic
//     and a chronological import do); --layout=scattered: every INSERT touches every day (a shuffled bulk import: the
//     worst case for how many aggregate parts overlap one day, the layout of the first figures).
//   SOURCES_REFRESH_MS is one hour here: the sources_daily days are refreshed once after the load, and the last mix
//     ("sources, last 2 days live") adds events to the last day, whose days then stay stale and are read from
//     sessions, as today and yesterday are under live traffic.
//
//   npm run bench:read                      # 10,000,000 events
//   BENCH_EVENTS=1000000 npm run bench:read # or: npm run bench:read -- --events=1000000
//   BENCH_REQUESTS=200 (per mix), BENCH_DIR=<dir> (data directory, default a temp dir removed afterwards)
//   BENCH_MIX=<substring> (or --mix=...): run only the mixes whose label contains it, e.g. BENCH_MIX=uniques
//   --properties (BENCH_PROPERTIES=1): events carry properties {plan, step, variant} instead of {} (for the insights
//     prop:<key> mixes; a BENCH_DIR loaded without them is not reused with them, and the reverse).
//   Insights (POST /v1/insights, raw events): BENCH_MIX=insights npm run bench:read -- --properties
//   Conversions (POST /v1/funnel, /v1/retention, goals in /v1/insights; windowFunnel compared): BENCH_MIX=conversions
//   Time zones (issue 47: the same reads in UTC and in Europe/Berlin): BENCH_MIX=tz
//   --harness (BENCH_HARNESS=1): the production shape's read path instead: the events go to the ClickHouse HTTP test
//     harness (tools/topology: one chDB session behind ClickHouse's HTTP interface, in a process of its own, under
//     BENCH_DIR/harness) through a store in server mode, a second store in this process builds the aggregates (as
//     apps/aggregate-builder does), and the read API reads over HTTP as read-api does (by default without waiting on
//     the builder; AGGREGATE_WAIT_MS=<ms> measures the read-your-writes wait before each read of an aggregate). Needs
//     `npm run build` (dist/tools/clickhouse-harness). cpu then adds the harness's.
//
// The libs are bundled from source with esbuild (as tools/build.mjs does for the apps), so no build step is needed.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { bundleFromSource, cpuMsOf, memoryOf } from './lib.mjs';
import { syntheticEventsSql } from './synthetic-events.mjs';

const arg = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const EVENTS = Number(arg('events') ?? process.env.BENCH_EVENTS ?? 10_000_000);
const REQUESTS = Number(arg('requests') ?? process.env.BENCH_REQUESTS ?? 200);
const MIX_FILTER = arg('mix') ?? process.env.BENCH_MIX ?? '';
const LAYOUT = arg('layout') ?? process.env.BENCH_LAYOUT ?? 'ordered';
if (!['ordered', 'scattered'].includes(LAYOUT)) throw new Error('--layout=ordered|scattered');
const CHUNK = 1_000_000;
const DAY = 86_400_000;
const D0 = Date.UTC(2026, 2, 1);
const SPAN_DAYS = 30;
const EVENTS_PER_SESSION = 5;
const PROPERTIES = process.argv.includes('--properties') || process.env.BENCH_PROPERTIES === '1';
const HARNESS = process.argv.includes('--harness') || process.env.BENCH_HARNESS === '1';

const { lib } = await bundleFromSource('read-bench', [
  "export { buildApp } from './apps/read-api/src/app';",
  "export { envSchema, loadConfig, openStores } from './libs/runtime/src/index';",
  "export { createLogger } from './libs/service-kit/src/index';",
  "export * from './libs/event-store/src/index';",
  "export { insightsBodySchema, sourcesParamsSchema, statsParamsSchema } from './libs/schema/src/index';",
]);

const dataDir = process.env.BENCH_DIR ?? mkdtempSync(join(tmpdir(), 'bench-read-'));
const logger = lib.createLogger({ level: 'warn', name: 'bench' });
// READ_* (read limits) pass through: READ_MAX_EXECUTION_S=120 lets a slow shape be measured instead of refused.
const readLimits = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('READ_')));
/** --harness: the ClickHouse HTTP test harness on BENCH_DIR/harness, in a process of its own; its URL. */
async function startHarness() {
  if (!existsSync('dist/tools/clickhouse-harness/main.js')) execFileSync(process.execPath, ['tools/build.mjs'], { stdio: 'inherit' });
  const child = spawn(process.execPath, ['dist/tools/clickhouse-harness/main.js', '--path', join(dataDir, 'harness')], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_OPTIONS: '' } });
  const port = await new Promise((done, fail) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c.toString();
      const m = /"port":(\d+)/.exec(out);
      if (m) done(Number(m[1]));
    });
    child.once('exit', (code) => fail(new Error(`harness exited with ${code}`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}
const harness = HARNESS ? await startHarness() : undefined;
const env = lib.loadConfig(lib.envSchema, { DATA_DIR: dataDir, CLICKHOUSE_DATABASE: 'bench', SOURCES_REFRESH_MS: '3600000', ...(harness ? { CLICKHOUSE_URL: harness.url, ...(process.env.AGGREGATE_WAIT_MS ? { AGGREGATE_WAIT_MS: process.env.AGGREGATE_WAIT_MS } : {}) } : {}), ...readLimits });
const stores = await lib.openStores(env, logger, dataDir);
// --harness: the builder, as apps/aggregate-builder runs it (this store holds no lease: nothing else builds here).
const builder = harness ? await lib.EventStore.open({ url: harness.url, database: 'bench', aggregateIntervalMs: 1000, sourcesRefreshMs: 3_600_000 }) : stores.events;
if (harness) await builder.startBuilding();
const db = stores.events.db;
const count = async (sql) => Number((await stores.events.select(sql, {}))[0].c);
// BENCH_DIR holding a finished load of the same size is reused (iterating on queries without reloading). The events
// the "sources (last 2 days live)" mix adds (ids live-<n>) are not the load's: without leaving them out, every later
// run found 10 more than EVENTS and loaded another EVENTS beside the first (a store of 20M, 30M ... events).
const reuse =
  (await count(`SELECT count() AS c FROM ${db}.events WHERE NOT startsWith(event_id, 'live-')`)) === EVENTS &&
  (await count(`SELECT count() AS c FROM (SELECT properties FROM ${db}.events LIMIT 1) WHERE properties != '{}'`)) === (PROPERTIES ? 1 : 0);
const projectId = reuse
  ? (await stores.events.select(`SELECT toString(project_id) AS id FROM ${db}.events LIMIT 1`, {}))[0].id
  : (await stores.keyStore.createProject({ name: 'bench' })).project.id;
const readKey = (await stores.keyStore.createKey(projectId, 'rk')).key;

console.log(`machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM (${(freemem() / 2 ** 30).toFixed(1)} free), node ${process.version}`);
console.log(`loading ${EVENTS.toLocaleString('en')} events (${SPAN_DAYS} days, ${EVENTS_PER_SESSION} events per session, layout ${LAYOUT}${PROPERTIES ? ', with properties' : ''}) into ${dataDir}`);
const MiB = 2 ** 20;
const rssMiB = () => Math.round(process.memoryUsage().rss / MiB);
const rssBefore = rssMiB();

const insertChunk = (offset, rows) =>
  stores.events.insertWith(rows, (seq, stamp) => stores.events.command(syntheticEventsSql({ db, projectId, fromMs: D0, spanDays: SPAN_DAYS, eventsPerSession: EVENTS_PER_SESSION, offset, rows, seq, stamp, totalRows: LAYOUT === 'ordered' ? EVENTS : undefined, withProperties: PROPERTIES })));

const loadStart = performance.now();
for (let offset = 0; !reuse && offset < EVENTS; offset += CHUNK) {
  await insertChunk(offset, Math.min(CHUNK, EVENTS - offset));
}
const loadMs = performance.now() - loadStart;
// The aggregates: built by the embedded store's aggregate builder (a server's views built them during the load).
const buildStart = performance.now();
await builder.aggregatesCaughtUp();
const buildMs = performance.now() - buildStart;
if (reuse) console.log('reusing the events already loaded in BENCH_DIR');
else console.log(`load: ${(loadMs / 1000).toFixed(1)} s (${Math.round(EVENTS / (loadMs / 1000)).toLocaleString('en')} events/s into events), then the aggregates caught up in ${(buildMs / 1000).toFixed(1)} s`);
// sources_daily (embedded store): every day the load touched, recomputed from sessions.
const refreshStart = performance.now();
const refreshedDays = (await builder.refreshSources?.(true)) ?? 0;
const refreshMs = performance.now() - refreshStart;
if (builder.refreshSources) console.log(`sources_daily: ${refreshedDays} project-days refreshed in ${(refreshMs / 1000).toFixed(1)} s`);
const loadRate = reuse ? null : Math.round(EVENTS / ((loadMs + buildMs + refreshMs) / 1000));
const rssAfterLoad = rssMiB();

// Measure the steady state, not the load: wait for the background merges the inserts started.
const settleStart = performance.now();
// aggregate_progress left out: a server's idle builder writes a row there every tick (what reads wait on).
const parts = () => count(`SELECT count() AS c FROM system.parts WHERE database = '${db}' AND active AND table != 'aggregate_progress'`);
for (let last = -1, now = await parts(); ; last = now, now = await parts()) {
  const merging = await count(`SELECT count() AS c FROM system.merges WHERE database = '${db}' AND table != 'aggregate_progress'`);
  if (merging === 0 && now === last) break;
  await new Promise((r) => setTimeout(r, 2000));
}
const settleS = +((performance.now() - settleStart) / 1000).toFixed(1);
console.log(`background merges settled after ${settleS} s; active parts: ${await parts()}`);
if (process.argv.includes('--optimize')) {
  const t = performance.now();
  for (const table of ['events', 'daily_rollup', 'daily_uniques', 'sessions']) await stores.events.command(`OPTIMIZE TABLE ${db}.${table} FINAL`);
  console.log(`OPTIMIZE FINAL: ${((performance.now() - t) / 1000).toFixed(1)} s; active parts: ${await parts()}`);
}
const sizes = {
  events: await count(`SELECT count() AS c FROM ${db}.events`),
  daily_rollup: await count(`SELECT count() AS c FROM ${db}.daily_rollup`),
  daily_uniques: await count(`SELECT count() AS c FROM ${db}.daily_uniques`),
  sessions: await count(`SELECT count() AS c FROM ${db}.sessions`),
};
console.log(`rows: ${JSON.stringify(sizes)}`);
const disk = {};
for (const r of await stores.events.select(
  `SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS disk, sum(data_uncompressed_bytes) AS raw, count() AS parts FROM system.parts WHERE database = '${db}' AND active GROUP BY table ORDER BY table`,
  {},
)) {
  disk[r.table] = { rows: Number(r.rows), parts: Number(r.parts), bytes: Number(r.disk), bytes_per_event: +(Number(r.disk) / EVENTS).toFixed(2), uncompressed_per_event: +(Number(r.raw) / EVENTS).toFixed(2) };
}
const totalDisk = Object.values(disk).reduce((a, t) => a + t.bytes, 0);
console.log('disk (active parts, compressed): table, rows, parts, bytes per event (uncompressed)');
for (const [t, d] of Object.entries(disk)) console.log(`  ${t.padEnd(20)} ${String(d.rows).padStart(11)} ${String(d.parts).padStart(4)} ${String(d.bytes_per_event).padStart(8)} (${d.uncompressed_per_event})`);
console.log(`  total ${(totalDisk / MiB).toFixed(0)} MiB, ${(totalDisk / EVENTS).toFixed(1)} bytes per event; RSS ${rssBefore} MiB before the load, ${rssAfterLoad} MiB after it, ${rssMiB()} MiB settled`);
let rssPeakQueries = 0;

const app = lib.buildApp({ logger, authenticator: stores.authenticator, events: stores.events });
const server = await new Promise((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s));
});
const base = `http://127.0.0.1:${server.address().port}`;
const iso = (ms) => new Date(ms).toISOString();
const FROM = iso(D0);
const TO = iso(D0 + SPAN_DAYS * DAY);
// Shifting `from` by one second keeps the same question but forces the raw-events path (not at UTC midnight).
const FROM_RAW = iso(D0 + 1000);

const statsMix = (from) => [
  { from, to: TO, group_by: 'source,medium' },
  { from, to: TO, group_by: 'country' },
  { from, to: TO, interval: 'day' },
  { from, to: TO, metric: 'uniques' },
];
// metric=uniques over 30 whole days: without grouping, by event_name, by day (daily_uniques), by country (daily_rollup).
const uniquesMix = [
  { from: FROM, to: TO, metric: 'uniques' },
  { from: FROM, to: TO, metric: 'uniques', group_by: 'event_name' },
  { from: FROM, to: TO, metric: 'uniques', interval: 'day' },
  { from: FROM, to: TO, metric: 'uniques', group_by: 'country' },
  { from: FROM, to: TO, metric: 'uniques', group_by: 'source,medium' },
];
// `inprocess:<source>`: the same shapes planned with that source forced and run in-process (no HTTP; ~1 ms less),
// so the old daily_rollup path and daily_uniques are measured side by side under the same machine load.
const ALL_MIXES = [
  ['stats (rollup)', '/v1/stats', statsMix(FROM)],
  ['stats (raw events)', '/v1/stats', statsMix(FROM_RAW)],
  ['stats uniques (planner)', '/v1/stats', uniquesMix],
  ['stats uniques forced daily_rollup (in-process)', 'inprocess:rollup', uniquesMix],
  ['stats uniques forced daily_uniques (in-process)', 'inprocess:uniques', uniquesMix.slice(0, 3)],
  ['sources', '/v1/sources', [{ from: FROM, to: TO }, { from: FROM, to: TO, breakdown: 'source' }, { from: iso(D0 + 7 * DAY), to: iso(D0 + 14 * DAY) }]],
  ['query', '/v1/query', [{ from: FROM, to: TO }, { from: FROM, to: TO, source: 'facebook', medium: 'paid', limit: 1000 }]],
  // "The last 30 days" from 09:00: 29 whole days and a part of a day at each end (issue 49).
  ['sources (range off whole days)', '/v1/sources', [{ from: iso(D0 + 9 * 3_600_000), to: iso(D0 + SPAN_DAYS * DAY + 9 * 3_600_000) }, { from: iso(D0 + 9 * 3_600_000), to: iso(D0 + SPAN_DAYS * DAY + 9 * 3_600_000), breakdown: 'source' }]],
];
// POST /v1/insights over the 30 days (whole days: totals and visit dimensions from the visits aggregate): the issue's cases. Compare: the last 15 days with and without
// compare=previous_period (the 15 days before hold data too; before the 30 days there is none).
const VISIT_METRICS = ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration', 'views_per_visit'];
const insight = (body) => ({ from: FROM, to: TO, ...body });
const HALF = iso(D0 + (SPAN_DAYS / 2) * DAY);
const lastHalf = (shapes, compare) => shapes.map((s) => ({ ...s, from: HALF, ...(compare ? { compare: 'previous_period' } : {}) }));
const INSIGHTS = {
  totals: [insight({ metrics: VISIT_METRICS })],
  visitDim: [insight({ metrics: ['visitors', 'visits', 'bounce_rate'], dimensions: ['source'] })],
  eventDim: [insight({ metrics: ['visitors', 'visits', 'bounce_rate'], dimensions: ['country'] })],
  eventOnly: [insight({ metrics: ['visitors', 'pageviews'], dimensions: ['country'] })],
  prop: [insight({ metrics: ['visitors', 'events'], dimensions: ['prop:plan'] }), insight({ metrics: ['visitors', 'visits'], filters: [['is', 'prop:plan', ['pro']]] })],
};
ALL_MIXES.push(
  ['insights totals of all visit metrics', 'POST /v1/insights', INSIGHTS.totals],
  ['insights one visit dimension (source)', 'POST /v1/insights', INSIGHTS.visitDim],
  ['insights one event dimension (country)', 'POST /v1/insights', INSIGHTS.eventDim],
  ['insights event dimension, event metrics only', 'POST /v1/insights', INSIGHTS.eventOnly],
  ['insights prop:plan dimension / filter', 'POST /v1/insights', INSIGHTS.prop],
  // The same two shapes from an hour after the first midnight: not whole days, so read from the raw events (the
  // visits aggregate answers whole days only): the two paths back to back on the same data.
  ['insights totals, raw events (range off whole days)', 'POST /v1/insights', INSIGHTS.totals.map((s) => ({ ...s, from: iso(D0 + 3_600_000) }))],
  ['insights one visit dimension (source), raw events (range off whole days)', 'POST /v1/insights', INSIGHTS.visitDim.map((s) => ({ ...s, from: iso(D0 + 3_600_000) }))],
  ['insights entry and exit pages (visits)', 'POST /v1/insights', [insight({ metrics: ['visits', 'bounce_rate'], dimensions: ['entry_path'] }), insight({ metrics: ['visits'], dimensions: ['exit_path'] })]],
  // The same two shapes on a LowCardinality column (a quarter of the countries, as `pro` is a quarter of the plans).
  ['insights prop:plan shapes on country instead', 'POST /v1/insights', [
    insight({ metrics: ['visitors', 'events'], dimensions: ['country'] }),
    insight({ metrics: ['visitors', 'visits'], filters: [['is', 'country', ['US', 'GB', 'DE', 'FR', 'JP']]] }),
  ]],
  ['insights properties: keys / values of plan', '/v1/properties', [{ from: FROM, to: TO }, { from: FROM, to: TO, key: 'plan' }]],
  ['insights compare: 15 days, totals and source', 'POST /v1/insights', lastHalf([...INSIGHTS.totals, ...INSIGHTS.visitDim], false)],
  ['insights compare: 15 days + previous_period', 'POST /v1/insights', lastHalf([...INSIGHTS.totals, ...INSIGHTS.visitDim], true)],
);
// Time zones (issue 47): the same reads counted in UTC and in Europe/Berlin. /v1/stats with `tz` over HTTP (UTC: the
// daily aggregates; Berlin: local days off UTC midnights, from the raw events); insights by day over date-only ranges
// in-process, the project's zone given as the capability layer gives it (UTC: the date-only range is whole UTC days;
// Berlin: local midnights, raw events either way for time:day). BENCH_MIX=tz.
const DAYS_RANGE = { from: FROM.slice(0, 10), to: TO.slice(0, 10) };
const byDay = { ...DAYS_RANGE, metrics: ['visitors', 'pageviews'], dimensions: ['time:day'], limit: 1000 };
ALL_MIXES.push(
  ['tz stats count by day, UTC', '/v1/stats', [{ ...DAYS_RANGE, interval: 'day' }, { ...DAYS_RANGE, interval: 'day', group_by: 'source' }]],
  // Local days off UTC midnights: counts from quarter_hours (migration 017), a group_by from the raw events.
  ['tz stats count by day, tz=Europe/Berlin (quarter_hours)', '/v1/stats', [{ ...DAYS_RANGE, interval: 'day', tz: 'Europe/Berlin' }]],
  ['tz stats count by day and source, tz=Europe/Berlin (raw events)', '/v1/stats', [{ ...DAYS_RANGE, interval: 'day', group_by: 'source', tz: 'Europe/Berlin' }]],
  ['tz stats count by day, UTC from raw events (forced)', 'inprocess:events', [{ ...DAYS_RANGE, interval: 'day' }, { ...DAYS_RANGE, interval: 'day', group_by: 'source' }]],
  ['tz insights by day, project in UTC', 'inprocess:insights:UTC', [byDay, { ...byDay, metrics: ['visits', 'bounce_rate'] }]],
  ['tz insights by day, project in Europe/Berlin', 'inprocess:insights:Europe/Berlin', [byDay, { ...byDay, metrics: ['visits', 'bounce_rate'] }]],
  ['tz insights totals, project in UTC (visits aggregate)', 'inprocess:insights:UTC', [{ ...DAYS_RANGE, metrics: ['visitors', 'visits', 'bounce_rate'] }]],
  ['tz insights totals, project in Europe/Berlin (raw events)', 'inprocess:insights:Europe/Berlin', [{ ...DAYS_RANGE, metrics: ['visitors', 'visits', 'bounce_rate'] }]],
);
// Conversions (issue 31) over the 30 days (no user_id in the synthetic data: retention counts visitors, which are not
// daily ids here; 30 days hold 5 weekly cohorts, so 8 weekly cohorts are not reachable: daily cohorts are the heavier
// case). The funnel is compared with ClickHouse's windowFunnel on the same steps, run in-process (no HTTP, no times,
// no breakdown): with and without pre-filtering the rows to the OR of the steps; both group by anon_key, as the funnel.
const FUNNEL4 = [{ event: '$pageview', path: '/pricing' }, { event: 'clicked_pricing' }, { event: 'signup' }, { event: 'purchase' }];
const funnel = (body) => ({ from: FROM, to: TO, steps: FUNNEL4, ...body });
const windowFunnelSql = (prefilter) => {
  const steps = ["event_name = '$pageview' AND path = '/pricing'", "event_name = 'clicked_pricing'", "event_name = 'signup'", "event_name = 'purchase'"];
  return [
    'SELECT level, count() AS n FROM (',
    `  SELECT anon_key AS ent, windowFunnel(86400000)(toUInt64(toUnixTimestamp64Milli(timestamp)), ${steps.join(', ')}) AS level`,
    `  FROM ${db}.events WHERE project_id = {project:UUID} AND timestamp >= {from:DateTime64(3, 'UTC')} AND timestamp < {to:DateTime64(3, 'UTC')}`,
    `    AND device_type != 'bot' AND anon_key != reinterpretAsUInt128(sipHash128(''))${prefilter ? ` AND (${steps.map((x) => `(${x})`).join(' OR ')})` : ''}`,
    '  GROUP BY ent) GROUP BY level ORDER BY level',
  ].join('\n');
};
const chTime = (iso) => iso.replace('T', ' ').replace('Z', '');
ALL_MIXES.push(
  ['conversions funnel, 4 steps', 'POST /v1/funnel', [funnel({})]],
  ['conversions funnel, 4 steps, breakdown (source)', 'POST /v1/funnel', [funnel({ breakdown: 'source' })]],
  ['conversions funnel, 4 steps, breakdown (country)', 'POST /v1/funnel', [funnel({ breakdown: 'country' })]],
  ['conversions windowFunnel, OR pre-filter (in-process)', 'inprocess:sql', [{ from: FROM, to: TO, sql: windowFunnelSql(true) }]],
  ['conversions windowFunnel, no pre-filter (in-process)', 'inprocess:sql', [{ from: FROM, to: TO, sql: windowFunnelSql(false) }]],
  ['conversions retention, weekly cohorts (5)', 'POST /v1/retention', [{ from: FROM, to: TO, period: 'week', count_by: 'visitor' }]],
  // The same weekly cohorts ending an hour before the last midnight: not whole days, so read from the raw events (the
  // visits aggregate answers any-event retention by visitor over whole days only): both paths on the same data.
  ['conversions retention, weekly cohorts (5), raw events (range off whole days)', 'POST /v1/retention', [{ from: FROM, to: iso(Date.parse(TO) - 3_600_000), period: 'week', count_by: 'visitor' }]],
  ['conversions retention, daily cohorts (30)', 'POST /v1/retention', [{ from: FROM, to: TO, period: 'day', count_by: 'visitor', start: { event: 'signup' } }]],
  ['conversions goal by an event dimension (country)', 'POST /v1/insights', [insight({ metrics: ['visitors', 'conversions', 'conversion_rate'], dimensions: ['country'], goal: { event: 'signup' } })]],
  ['conversions goal by a visit dimension (source)', 'POST /v1/insights', [insight({ metrics: ['visitors', 'conversions', 'conversion_rate'], dimensions: ['source'], goal: { event: 'signup' } })]],
);
const MIXES = ALL_MIXES.filter(([label]) => label.includes(MIX_FILTER));

// Sanity: the planner takes the paths the labels claim (the source of each stats shape is printed with it).
const tables = lib.readTablesOf(stores.events);
const planned = (params, force) => {
  const p = lib.statsParamsSchema.parse(params);
  return lib.planStats(tables, projectId, p, p.group_by ?? [], force);
};
for (const [label, path, shapes] of MIXES) {
  if (path !== '/v1/stats') continue;
  const sources = shapes.map((s) => planned(s).source);
  if (label.includes('raw') !== sources.every((s) => s === 'events')) throw new Error(`${label}: planner chose ${sources}`);
}

const get = async (path, params) => {
  if (path === 'inprocess:sql') return stores.events.read(projectId, params.sql, { project: projectId, from: chTime(params.from), to: chTime(params.to) });
  if (path.startsWith('inprocess:insights:')) return lib.queryInsights(stores.events, projectId, lib.insightsBodySchema.parse(params), { timezone: path.slice('inprocess:insights:'.length) });
  if (path.startsWith('inprocess:')) return lib.runStatsPlan(stores.events, planned(params, path.slice('inprocess:'.length)));
  if (path.startsWith('POST ')) {
    const res = await fetch(`${base}${path.slice(5)}`, { method: 'POST', headers: { authorization: `Bearer ${readKey}`, 'content-type': 'application/json' }, body: JSON.stringify(params) });
    const body = await res.json();
    if (res.status !== 200) throw new Error(`${path} ${res.status} ${JSON.stringify(body)}`);
    return body;
  }
  const res = await fetch(`${base}${path}?${new URLSearchParams(params)}`, { headers: { authorization: `Bearer ${readKey}` } });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`${path} ${res.status} ${JSON.stringify(body)}`);
  return body;
};
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

console.log(`\n${REQUESTS} sequential requests per mix (after ${Math.min(20, REQUESTS)} warm-up), keep-alive HTTP on 127.0.0.1.`);
console.log('cpu = CPU time of this process (HTTP server + in-process ClickHouse) per request: unlike wall time, it does not');
console.log('grow when other processes compete for the 2 cores; the 1-minute load average before/after each mix says how busy it was.');
const f = (v) => v.toFixed(1).padStart(8);
console.log(`${'mix / request'.padEnd(44)}  p50 ms   p95 ms   p99 ms   max ms   cpu p50`);
const summarize = (samples) => {
  const wall = samples.map((x) => x.wall).sort((a, b) => a - b);
  const cpu = samples.map((x) => x.cpu).sort((a, b) => a - b);
  return { p50: pct(wall, 50), p95: pct(wall, 95), p99: pct(wall, 99), max: wall.at(-1), cpu_p50: pct(cpu, 50) };
};
const line = (label, r) => `${label.padEnd(44)}${f(r.p50)} ${f(r.p95)} ${f(r.p99)} ${f(r.max)} ${f(r.cpu_p50)}`;
const results = {};
const measure = async (label, path, shapes) => {
  for (let i = 0; i < Math.min(20, REQUESTS); i++) await get(path, shapes[i % shapes.length]);
  const loadBefore = loadavg()[0];
  const samples = [];
  for (let i = 0; i < REQUESTS; i++) {
    const shape = i % shapes.length;
    const t = performance.now();
    const c = process.cpuUsage();
    const engineBefore = harness ? cpuMsOf(harness.child.pid) : 0;
    await get(path, shapes[shape]);
    const used = process.cpuUsage(c);
    // --harness: the engine's CPU is the harness process's (read from /proc: 10 ms ticks, so per request it is coarse;
    // the p50 over a mix is what to read).
    const engineMs = harness ? cpuMsOf(harness.child.pid) - engineBefore : 0;
    if (i % 10 === 0) rssPeakQueries = Math.max(rssPeakQueries, rssMiB());
    samples.push({ shape, wall: performance.now() - t, cpu: (used.user + used.system) / 1000 + engineMs });
  }
  const load = [loadBefore, loadavg()[0]].map((l) => +l.toFixed(2));
  results[label] = { ...summarize(samples), load, shapes: {} };
  console.log(`${line(`${label} (load ${load.join(' -> ')})`, results[label])}`);
  shapes.forEach((params, i) => {
    const days = (Date.parse(params.to) - Date.parse(params.from)) / DAY;
    const others = Object.entries(params).filter(([k]) => k !== 'from' && k !== 'to' && k !== 'sql');
    const rest = path.startsWith('POST ') ? JSON.stringify(Object.fromEntries(others)) : new URLSearchParams(others).toString();
    const via = path === '/v1/stats' ? ` [${planned(params).source}]` : '';
    const shapeLabel = `${Number.isInteger(days) ? days : days.toFixed(5)} days${rest ? ` ${rest}` : ''}${via}`;
    results[label].shapes[shapeLabel] = summarize(samples.filter((x) => x.shape === i));
    console.log(line(`  ${shapeLabel}`, results[label].shapes[shapeLabel]));
  });
};
for (const [label, path, shapes] of MIXES) await measure(label, path, shapes);

// Live traffic keeps today and yesterday stale in sources_daily (refreshed at most every SOURCES_REFRESH_MS): a few
// events on the last day make the last two days of the range (and the day after it) stale, read from sessions.
if (stores.events.sourcesDaily && 'sources (last 2 days live)'.includes(MIX_FILTER)) {
  const last = D0 + (SPAN_DAYS - 1) * DAY + 12 * 3_600_000;
  const row = (i) => ({
    project_id: projectId, timestamp: iso(last + i * 1000).replace('T', ' ').replace('Z', ''), event_id: `live-${i}`, event_name: '$pageview', anonymous_id: `live-${i}`,
    user_id: null, session_id: `live-${i}`, source: 'google', medium: 'organic', campaign: null, source_confidence: 'high', source_rule_id: 'bench',
    referrer: null, url: null, path: '/', country: 'GB', device_type: 'desktop', browser: 'Chrome', os: 'Linux', ip_hash_hex: '00'.repeat(16), properties: '{}',
  });
  // Once per BENCH_DIR: a reused store has them already.
  if ((await count(`SELECT count() AS c FROM ${db}.events WHERE startsWith(event_id, 'live-')`)) === 0) {
    await stores.events.insertRows(Array.from({ length: 10 }, (_, i) => row(i)));
  }
  await stores.events.aggregatesCaughtUp();
  const days = await lib.planSourceDays(stores.events, tables, projectId, lib.sourcesParamsSchema.parse({ from: FROM, to: TO }));
  console.log(`10 events added on the last day: ${days.fresh.length} days from sources_daily, ${days.stale.length} from sessions (${days.stale.join(', ')})`);
  await measure('sources (last 2 days live)', '/v1/sources', [{ from: FROM, to: TO }, { from: FROM, to: TO, breakdown: 'source' }]);
}
console.log(`RSS during the queries: peak ${rssPeakQueries} MiB (sampled every 10th request)`);
// What the process keeps once the reads are over (issue 49's "RSS after the 10M load and the read bench"): the RSS
// 15 s after the last request, the engine's freed pages returned by its allocator meanwhile, and the peak (VmHWM).
await new Promise((done) => setTimeout(done, 15_000));
const rssSettledQueries = rssMiB();
const hwmMiB = Math.round(memoryOf(process.pid).hwmMiB);
console.log(`RSS after the queries: ${rssSettledQueries} MiB 15 s after the last request; peak of the whole run (VmHWM) ${hwmMiB} MiB`);

server.close();
if (harness) await builder.close();
await stores.close();
harness?.child.kill('SIGTERM');
if (!process.env.BENCH_DIR) rmSync(dataDir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    events: EVENTS,
    layout: LAYOUT,
    load_s: reuse ? null : +(loadMs / 1000).toFixed(1),
    build_s: +(buildMs / 1000).toFixed(1),
    sources_refresh_s: +(refreshMs / 1000).toFixed(1),
    load_rate_events_per_s: loadRate,
    merges_settle_s: settleS,
    rss_mib: { before_load: rssBefore, after_load: rssAfterLoad, peak_queries: rssPeakQueries, after_queries: rssSettledQueries, peak: hwmMiB },
    disk,
    rows: sizes,
    latency_ms: results,
  }),
);
