// Single API calls on a stored dashboard bench (issues 47 and 49, BENCHMARKS.md "The dashboard's calls that still read
// every event or every visit" and "/v1/stats buckets in any zone"): each call through the standalone app over HTTP,
// one at a time, p50 wall ms and this process's CPU ms per call (the app and the embedded chDB) over 5 runs after a
// warm-up, and what it answered (rows, their summed values), so two trees can be compared on the same store.
//   node tools/bench/api-calls.mjs <BENCH_DIR of tools/bench/dashboard.mjs> [stats|filtered|properties ...]
// Run it from each tree's root (a worktree for "before"); with no set named, all three.
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { bundleFromSource } from './lib.mjs';

const [dataDir, ...asked] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: node tools/bench/api-calls.mjs <BENCH_DIR> [stats|filtered|properties ...]');
const { lib } = await bundleFromSource('api-calls', [
  "export { buildApp } from './apps/standalone/src/app';",
  "export { envSchema, loadConfig, openStores } from './libs/runtime/src/index';",
  "export { createLogger } from './libs/service-kit/src/index';",
]);
const logger = lib.createLogger({ level: 'warn', name: 'bench', format: 'json' });
const env = lib.loadConfig(lib.envSchema, { ...process.env, DATA_DIR: dataDir, CLICKHOUSE_DATABASE: 'bench', READ_MAX_EXECUTION_S: '300', READ_MAX_MEMORY_BYTES: '4294967296' });
const stores = await lib.openStores(env, logger, dataDir);
const project = (await stores.keyStore.listProjects()).find((p) => p.name === 'bench-dashboard');
if (!project) throw new Error(`${dataDir} holds no bench-dashboard project: load it with tools/bench/dashboard.mjs first`);
const key = (await stores.keyStore.createKey(project.id, 'rk')).key;
const app = lib.buildApp({ stores, secrets: { ADMIN_TOKEN: 'bench-admin', IP_HASH_SECRET: 'bench-ip', INTERNAL_SECRET: 'bench-internal' }, logger, dashboardDir: dataDir });
const server = await new Promise((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s));
});
const base = `http://127.0.0.1:${server.address().port}`;

const DAY = 86_400_000;
const today = Date.now() - (Date.now() % DAY);
const day = (ms) => new Date(ms).toISOString().slice(0, 10);
const month = { from: day(today + DAY - 30 * DAY), to: day(today + DAY) };
const week = { from: day(today + DAY - 7 * DAY), to: day(today + DAY) };
const PAGEVIEWS = [['is', 'event_name', ['$pageview']]];

/** [label, method, path, query or body] per set. */
const SETS = {
  stats: [
    ['count by day, tz=Europe/Berlin', 'GET', '/v1/stats', { ...month, interval: 'day', tz: 'Europe/Berlin' }],
    ['uniques by day, tz=Asia/Kolkata', 'GET', '/v1/stats', { ...month, interval: 'day', metric: 'uniques', tz: 'Asia/Kolkata' }],
    ['$pageview count by UTC hour, 7 days', 'GET', '/v1/stats', { ...week, interval: 'hour', event: '$pageview' }],
    ['count by week, tz=America/Los_Angeles', 'GET', '/v1/stats', { ...month, interval: 'week', tz: 'America/Los_Angeles' }],
  ],
  filtered: [false, true].flatMap((compare) =>
    [
      ['sources (visitors)', { metrics: ['visitors'], dimensions: ['source'], limit: 1000 }],
      ['channels (visitors)', { metrics: ['visitors'], dimensions: ['channel'], limit: 10 }],
      ['entry pages (visits)', { metrics: ['visits'], dimensions: ['entry_path'], limit: 10 }],
      ['AI assistants', { metrics: ['visits'], dimensions: ['source'], filters: [['is', 'channel', ['ai_assistant']]], limit: 1000 }],
      ['headline', { metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration', 'events'] }],
    ].map(([label, body]) => [`${label}, event_name is $pageview${compare ? ', compare' : ''}`, 'POST', '/v1/insights', { ...month, ...body, filters: [...(body.filters ?? []), ...PAGEVIEWS], ...(compare ? { compare: 'previous_period' } : {}) }]),
  ),
  properties: [['property keys, 30 days', 'GET', '/v1/properties', month]],
};

async function call(method, path, args) {
  const res =
    method === 'GET'
      ? await fetch(`${base}${path}?${new URLSearchParams({ limit: '1000', ...args })}`, { headers: { authorization: `Bearer ${key}` } })
      : await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

const sets = asked.length > 0 ? asked : Object.keys(SETS);
console.log(`machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, load average (1 min) ${loadavg()[0].toFixed(2)} at the start`);
console.log(`${'call'.padEnd(58)} p50 ms   CPU ms/call   rows  summed`);
for (const set of sets) {
  if (!SETS[set]) throw new Error(`unknown set ${set}: ${Object.keys(SETS).join(', ')}`);
  for (const [label, method, path, args] of SETS[set]) {
    const answer = await call(method, path, args);
    const walls = [];
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await call(method, path, args);
      walls.push(performance.now() - t0);
    }
    const cpu = process.cpuUsage(cpu0);
    walls.sort((a, b) => a - b);
    const rows = answer.rows ?? [];
    const summed = rows.reduce((sum, r) => sum + Number(r.value ?? r.events ?? r.visitors ?? r.visits ?? 0), 0);
    console.log(`${label.padEnd(58)}${walls[2].toFixed(0).padStart(7)}  ${((cpu.user + cpu.system) / 5000).toFixed(0).padStart(12)}  ${String(rows.length).padStart(5)}  ${summed}`);
  }
}
console.log(`load average (1 min) at the end: ${loadavg()[0].toFixed(2)}`);
server.close();
await stores.close();
