// Dashboard benchmark: the time from navigation to every panel filled (headline numbers, chart, top lists, recent
// events), in Debian's Chromium against the standalone app on the embedded stores, for the last 7 and last 30 days.
// Loads N synthetic events over the 30 days ending today (INSERT ... SELECT inside ClickHouse, aggregates filled by
// the aggregate builder, through EventStore.insertWith), waits for the background merges, then opens the dashboard in a fresh browser context
// per sample (no cache) and reads the page's `dashboard-filled` performance mark (ms since navigation start).
//
//   npm run bench:dashboard                        # 1,000,000 events
//   BENCH_EVENTS=100000 npm run bench:dashboard    # or: npm run bench:dashboard -- --events=100000
//   BENCH_SAMPLES=10 (per range, after one warm-up), BENCH_DIR=<dir>, CHROMIUM_PATH=<chromium>
//   BENCH_LAYOUT=ordered (the default: events arrive in time order, as a live site's do, each INSERT a stretch of days)
//     or scattered (every INSERT touches every day, like an import of shuffled history: the aggregates' days then sit
//     in overlapping parts until the engine merges them, within the hour: migration 015)
//   BENCH_TZ=<IANA zone> (default UTC): the project's time zone; the dashboard's date-only ranges are its local days
//   BENCH_TRACE=1: one more 30-day load printed request by request (when each call was sent and answered);
//   BENCH_TRACE=filter: the same of the 30-day view with a filter and compare
//   BENCH_END=midnight (the default: the 30 days end at tonight's UTC midnight, today's later hours included, as
//     earlier figures were loaded) or now (they end at the load's time, as a live site's: nothing after now)
// Then each of the 30-day insights calls alone (wall and CPU per call): where a load's time goes; and the calls a goal
// and the funnel and retention views add when a site owner has them (not part of a default load).
//
// The apps and libs are bundled from source with esbuild and the dashboard is built first, so no build step is needed.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { chromium } from 'playwright-core';
import { bundleFromSource } from './lib.mjs';
import { syntheticEventsSql } from './synthetic-events.mjs';

const arg = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const EVENTS = Number(arg('events') ?? process.env.BENCH_EVENTS ?? 1_000_000);
const SAMPLES = Number(arg('samples') ?? process.env.BENCH_SAMPLES ?? 10);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const LAYOUT = arg('layout') ?? process.env.BENCH_LAYOUT ?? 'ordered';
if (!['ordered', 'scattered'].includes(LAYOUT)) throw new Error('--layout=ordered|scattered');
const CHUNK = 1_000_000;
const DAY = 86_400_000;
const SPAN_DAYS = 30;

if (!existsSync(CHROMIUM)) {
  console.error(`bench:dashboard needs chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
  process.exit(2);
}

await import('../../apps/dashboard/build.mjs');
const { lib } = await bundleFromSource('dashboard-bench', [
  "export { buildApp } from './apps/standalone/src/app';",
  "export { envSchema, loadConfig, openStores } from './libs/runtime/src/index';",
  "export { createLogger } from './libs/service-kit/src/index';",
]);

const dataDir = process.env.BENCH_DIR ?? mkdtempSync(join(tmpdir(), 'bench-dashboard-'));
const logger = lib.createLogger({ level: 'warn', name: 'bench', format: 'json' });
// The service's settings from the environment as `npm start` reads them (READ_MAX_EXECUTION_S, READ_QUEUE_WAIT_MS, ...).
const env = lib.loadConfig(lib.envSchema, { ...process.env, DATA_DIR: dataDir, CLICKHOUSE_DATABASE: 'bench' });
const opening = performance.now();
const stores = await lib.openStores(env, logger, dataDir);
// Opening a BENCH_DIR loaded by an older version applies the newer migrations (their backfills included).
const openedS = ((performance.now() - opening) / 1000).toFixed(1);
const db = stores.events.db;
const count = async (sql) => Number((await stores.events.select(sql, {}))[0].c);
// A BENCH_DIR this bench loaded before (the same UTC day: its 30 days end today) is measured again without a new load.
const loaded = (await stores.keyStore.listProjects()).find((p) => p.name === 'bench-dashboard');
const created = loaded ? undefined : await stores.keyStore.createProject({ name: 'bench-dashboard' });
const project = loaded ?? created.project;
const readKey = created ? created.keys.rk : (await stores.keyStore.createKey(project.id, 'rk')).key;
const TZ = process.env.BENCH_TZ ?? 'UTC';
await stores.keyStore.updateProject(project.id, { timezone: TZ });

const today = Date.now() - (Date.now() % DAY);
const END = process.env.BENCH_END ?? 'midnight';
if (!['midnight', 'now'].includes(END)) throw new Error('BENCH_END=midnight|now');
const from = (END === 'now' ? Date.now() : today + DAY) - SPAN_DAYS * DAY;
console.log(`machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM (${(freemem() / 2 ** 30).toFixed(1)} free), node ${process.version}`);
if (loaded) console.log(`reusing the events loaded into ${dataDir} before (stores opened, migrations included, in ${openedS} s)`);
else {
  console.log(`loading ${EVENTS.toLocaleString('en')} events over the ${SPAN_DAYS} days ending ${END === 'now' ? 'now' : 'at midnight tonight'} (layout ${LAYOUT}) into ${dataDir}`);
  const loadStart = performance.now();
  for (let offset = 0; offset < EVENTS; offset += CHUNK) {
    const rows = Math.min(CHUNK, EVENTS - offset);
    await stores.events.insertWith(rows, (seq) => stores.events.command(syntheticEventsSql({ db, projectId: project.id, fromMs: from, spanDays: SPAN_DAYS, eventsPerSession: 5, offset, rows, seq, totalRows: LAYOUT === 'ordered' ? EVENTS : undefined })));
  }
  await stores.events.aggregatesCaughtUp(); // the embedded store's aggregate builder (a server's views filled them in the load)
  console.log(`load: ${((performance.now() - loadStart) / 1000).toFixed(1)} s, aggregates included`);
  const parts = () => count(`SELECT count() AS c FROM system.parts WHERE database = '${db}' AND active`);
  for (let last = -1, now = await parts(); ; last = now, now = await parts()) {
    if ((await count(`SELECT count() AS c FROM system.merges WHERE database = '${db}'`)) === 0 && now === last) break;
    await new Promise((r) => setTimeout(r, 2000));
  }
}

// The builder's keeper recomputes the days sources_daily and visit_dims hold (8 a tick, each at most once a minute): a
// store that has served for a few minutes since its last write has every day fresh. Done here at once, and timed.
const refreshStart = performance.now();
const refreshed = await stores.events.refreshSources(true);
console.log(`the keeper's days (sources_daily, visit_dims) refreshed: ${refreshed} in ${((performance.now() - refreshStart) / 1000).toFixed(1)} s`);

const secrets = { ADMIN_TOKEN: 'bench-admin', IP_HASH_SECRET: 'bench-ip', INTERNAL_SECRET: 'bench-internal' };
const app = lib.buildApp({ stores, secrets, logger, dashboardDir: join(process.cwd(), 'dist/apps/dashboard') });
const server = await new Promise((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s));
});
const base = `http://127.0.0.1:${server.address().port}`;
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });

const day = (ms) => new Date(ms).toISOString().slice(0, 10);
/**
 * One cold navigation (fresh context: no cache, no storage): ms from navigation start to every panel filled.
 * `watch` sees the page before it navigates.
 */
async function sample(range, extra = '', watch = (_page) => undefined) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    // Signed in before the page runs (the dashboard takes keys from its form only), as the old #key= link was.
    await context.addInitScript(([origin, key]) => {
      if (location.origin === origin) sessionStorage.setItem('analytics.readKey', key);
    }, [base, readKey]);
    const page = await context.newPage();
    watch(page);
    await page.goto(`${base}/?from=${range.from}&to=${range.to}${extra}`);
    await page.waitForSelector('body[data-state="loaded"]', { timeout: 60_000 });
    if (await page.isVisible('#load-error')) throw new Error(`dashboard error: ${await page.textContent('#load-error')}`);
    return await page.evaluate(() => performance.getEntriesByName('dashboard-filled')[0].startTime);
  } finally {
    await context.close();
  }
}

/**
 * BENCH_TRACE=1: one more cold 30-day load, printed request by request (ms from navigation start to its request and
 * to its response's end, what it asked): where a load's time goes beside its calls.
 */
async function trace(range, extra = '') {
  const rows = [];
  let origin;
  const filled = await sample(range, extra, (page) => {
    page.on('requestfinished', (r) => {
      const t = r.timing();
      rows.push({ start: t.startTime, sent: t.requestStart, end: t.responseEnd, what: `${r.method()} ${new URL(r.url()).pathname} ${(r.postData() ?? '').slice(0, 110)}` });
    });
    page.on('load', () => void page.evaluate(() => performance.timeOrigin).then((o) => (origin = o), () => undefined));
  });
  console.log(`\ntrace of one cold 30-day load${extra ? ` (${extra})` : ''} (ms from navigation start): filled at ${filled.toFixed(0)}`);
  console.log(`${'request'.padStart(8)} ${'sent'.padStart(8)} ${'done'.padStart(8)}  call`);
  for (const r of rows.sort((a, b) => a.start - b.start)) {
    const at = r.start - (origin ?? rows[0].start);
    console.log(`${at.toFixed(0).padStart(8)} ${(at + Math.max(0, r.sent)).toFixed(0).padStart(8)} ${(at + r.end).toFixed(0).padStart(8)}  ${r.what}`);
  }
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
console.log(`\nthe project's time zone: ${TZ}`);
console.log(`\nnavigation to every panel filled, ${SAMPLES} cold samples per range after one warm-up (Chromium and the service share this machine)`);
// Service CPU: this process's CPU time (user + system, every thread: the HTTP server and the embedded chDB) per
// load, beside the wall clock; Chromium's own CPU is not in it.
console.log(`${'range'.padEnd(34)} p50 ms   p95 ms   min ms   max ms   service CPU ms/load   load avg before/after`);
const VIEWS = [
  ['last 7 days', 7, ''],
  ['last 30 days', 30, ''],
  ['last 30 days, a filter + compare', 30, '&f=event_name:is:%24pageview&compare=1'],
];
for (const [label, days, extra] of VIEWS) {
  const range = { from: day(today + DAY - days * DAY), to: day(today + DAY) };
  await sample(range, extra);
  const before = loadavg()[0];
  const times = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < SAMPLES; i++) times.push(await sample(range, extra));
  const cpu = process.cpuUsage(cpu0);
  times.sort((a, b) => a - b);
  const f = (v) => v.toFixed(0).padStart(7);
  const cpuPerLoad = ((cpu.user + cpu.system) / 1000 / SAMPLES).toFixed(0).padStart(20);
  console.log(`${label.padEnd(34)}${f(pct(times, 50))}  ${f(pct(times, 95))}  ${f(times[0])}  ${f(times.at(-1))}  ${cpuPerLoad}   ${before.toFixed(2)} / ${loadavg()[0].toFixed(2)}`);
}

if (process.env.BENCH_TRACE) await trace({ from: day(today + DAY - 30 * DAY), to: day(today + DAY) }, process.env.BENCH_TRACE === 'filter' ? VIEWS[2][2] : '');

// Where a 30-day load's time goes: each insights call the dashboard makes (the bodies of apps/dashboard/src/main.ts,
// keep them in step), alone, one at a time: p50 wall ms and this process's CPU ms per call, 5 runs after a warm-up.
const BREAKDOWN_RUNS = 5;
const month = { from: day(today + DAY - 30 * DAY), to: day(today + DAY) };
const headline = { metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration', 'events'], compare: 'previous_period' };
const FUNNEL_STEPS = [{ event: '$pageview', path: '/pricing' }, { event: 'signup' }, { event: 'purchase' }];
const list = (dimension, metric) => [`list ${dimension} (${metric})`, { metrics: [metric], dimensions: [dimension], limit: 10 }];
const CALLS = [
  ['headline + compare', headline],
  ['chart time:day', { metrics: ['visitors', 'pageviews'], dimensions: ['time:day'], limit: 10_000 }],
  ['chart time:day + compare', { metrics: ['visitors', 'pageviews'], dimensions: ['time:day'], compare: 'previous_period', limit: 10_000 }],
  list('source', 'visitors'),
  list('channel', 'visitors'),
  list('path', 'visitors'),
  list('entry_path', 'visits'),
  list('exit_path', 'visits'),
  list('country', 'visitors'),
  list('device_type', 'visitors'),
  list('browser', 'visitors'),
  list('os', 'visitors'),
  list('event_name', 'events'),
  ['AI assistants', { metrics: ['visits'], dimensions: ['source'], filters: [['is', 'channel', ['ai_assistant']]], limit: 1000 }],
  ['AI crawlers (include_bots)', { metrics: ['events'], dimensions: ['browser'], filters: [['is', 'device_type', ['bot']]], include_bots: true, limit: 1000 }],
  ['headline + compare, event_name filter', { ...headline, filters: [['is', 'event_name', ['$pageview']]] }],
  // Not in a default load: one call per goal of the Goals panel, and the open view's call (apps/dashboard/src/conversions.ts).
  ['goal signup (conversions, rate)', { metrics: ['conversions', 'conversion_rate'], goal: { event: 'signup' } }],
  ['funnel view, 3 steps', { steps: FUNNEL_STEPS, window_s: 86_400, count_by: 'visitor' }, '/v1/funnel'],
  ['funnel view, 3 steps by channel', { steps: FUNNEL_STEPS, window_s: 86_400, count_by: 'visitor', breakdown: 'channel' }, '/v1/funnel'],
  ['retention view, weeks by visitor', { period: 'week', count_by: 'visitor' }, '/v1/retention'],
];
// The sum is a default load's calls: no compare, no filter, no goal, no view open.
const NOT_IN_A_DEFAULT_LOAD = new Set(['chart time:day + compare', 'headline + compare, event_name filter', ...CALLS.slice(-4).map(([label]) => label)]);
const insights = async (body, path = '/v1/insights') => {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${readKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...month, ...body }) });
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  await res.json();
};
console.log(`\nthe last 30 days' calls, alone and one at a time (${BREAKDOWN_RUNS} runs after a warm-up); the sum is a default load's`);
console.log(`${'call'.padEnd(40)} p50 ms   CPU ms/call`);
let sumWall = 0;
let sumCpu = 0;
for (const [label, body, path] of CALLS) {
  await insights(body, path);
  const walls = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < BREAKDOWN_RUNS; i++) {
    const t0 = performance.now();
    await insights(body, path);
    walls.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  walls.sort((a, b) => a - b);
  const cpuMs = (cpu.user + cpu.system) / 1000 / BREAKDOWN_RUNS;
  if (!NOT_IN_A_DEFAULT_LOAD.has(label)) {
    sumWall += pct(walls, 50);
    sumCpu += cpuMs;
  }
  console.log(`${label.padEnd(40)}${pct(walls, 50).toFixed(0).padStart(7)}  ${cpuMs.toFixed(0).padStart(12)}`);
}
console.log(`${'sum'.padEnd(40)}${sumWall.toFixed(0).padStart(7)}  ${sumCpu.toFixed(0).padStart(12)}`);

await browser.close();
server.close();
await stores.close();
if (!process.env.BENCH_DIR) rmSync(dataDir, { recursive: true, force: true });
