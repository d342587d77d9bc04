// CPU per event of visits by inactivity (issue 47) on the write path: a 1000-event batch enriched as before (clock
// buckets: createEnricher only) and enriched then placed in visits (assignVisits) with the memory state and, when
// REDIS_URL is set, the Redis state (one script call per batch; this process's CPU, and Redis's own CPU from
// INFO commandstats). Two shapes: one browser's batch (1000 events of one visitor) and a server's (1000 visitors).
// Bundled from source with esbuild, one process, warmed up; median of the rounds, rounds interleaved.
// Usage: node tools/bench/visits.mjs [--rounds=7] [--batches=40]   (REDIS_URL=redis://127.0.0.1:6379 for the Redis rows)
import { bundleFromSource } from './lib.mjs';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const rounds = Number(arg('rounds', 7));
const batches = Number(arg('batches', 40));

const { lib } = await bundleFromSource('visits', [
  "export { createEnricher } from './libs/enrichment/src/index';",
  "export { assignVisits, MemoryVisitState, RedisVisitState, VISIT_CAP_MS } from './libs/ingest/src/index';",
  "export { createRedis, redisReady, createLogger } from './libs/service-kit/src/index';",
]);
const { createEnricher, assignVisits, MemoryVisitState, RedisVisitState, VISIT_CAP_MS, createRedis, redisReady, createLogger } = lib;

const RULES = { idleMs: 30 * 60_000, capMs: VISIT_CAP_MS };
const NOW = Date.now();
const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const ctx = { projectId: '11111111-1111-4111-8111-111111111111', ip: '81.2.69.160', userAgent: UA, host: 'shop.example.com', nowMs: NOW, ipHashSecret: 'bench' };
let seq = 0;
/** 1000 events over the last hour; `visitors` distinct anonymous ids. */
function batch(visitors) {
  const run = seq++;
  return Array.from({ length: 1000 }, (_, i) => ({
    event: i % 3 ? 'click' : '$pageview',
    timestamp: NOW - 3_600_000 + i * 3_000,
    anonymous_id: `v-${run}-${i % visitors}`,
    url: `https://shop.example.com/p/${i % 17}?utm_source=newsletter`,
    referrer: i % 5 ? 'https://shop.example.com/' : 'https://www.google.com/',
    properties: { i },
  }));
}

const logger = createLogger({ level: 'silent' });
const redis = process.env.REDIS_URL ? createRedis(process.env.REDIS_URL, logger) : undefined;
if (redis && !(await redisReady(redis, 5_000))) throw new Error('REDIS_URL does not answer');
const states = { memory: new MemoryVisitState(RULES), ...(redis ? { redis: new RedisVisitState(redis, RULES, logger, `analytics:bench-visit:${process.pid}:`) } : {}) };

async function redisCpuUs() {
  if (!redis) return 0;
  const info = await redis.info('commandstats');
  const m = /cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(info);
  return m ? Number(m[1]) : 0;
}

/** CPU µs per event of this process (and of Redis's script) over `batches` batches. */
async function measure(kind, visitors) {
  const inputs = Array.from({ length: batches }, () => batch(visitors));
  const redisBefore = await redisCpuUs();
  const start = process.cpuUsage();
  for (const events of inputs) {
    const rows = events.map(createEnricher(ctx));
    if (kind !== 'before') await assignVisits(states[kind], ctx, events, rows, RULES);
  }
  const used = process.cpuUsage(start);
  const redisUs = kind === 'redis' ? (await redisCpuUs()) - redisBefore : 0;
  return { cpu: (used.user + used.system) / (batches * 1000), redis: redisUs / (batches * 1000) };
}

const kinds = ['before', ...Object.keys(states)];
const shapes = [['1 visitor', 1], ['1000 visitors', 1000]];
for (const [, v] of shapes) for (const k of kinds) await measure(k, v); // warm-up
const results = {};
for (let r = 0; r < rounds; r++) {
  for (const [shape, v] of shapes) {
    for (const k of kinds) ((results[`${shape}|${k}`] ??= []).push(await measure(k, v)));
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`1000-event batches, ${batches} per round, median of ${rounds} rounds; CPU µs per event`);
for (const [shape] of shapes) {
  const base = median(results[`${shape}|before`].map((x) => x.cpu));
  for (const k of kinds) {
    const xs = results[`${shape}|${k}`];
    const cpu = median(xs.map((x) => x.cpu));
    const extra = k === 'redis' ? `, Redis script ${median(xs.map((x) => x.redis)).toFixed(2)} µs` : '';
    console.log(`${shape.padEnd(14)} ${k.padEnd(7)} ${cpu.toFixed(2).padStart(7)} µs${k === 'before' ? '' : ` (+${(cpu - base).toFixed(2)})`}${extra}`);
  }
}
if (redis) {
  // The bench's own keys (its prefix), so Redis is left as it was.
  const stream = redis.scanStream({ match: `analytics:bench-visit:${process.pid}:*`, count: 1000 });
  for await (const keys of stream) if (keys.length) await redis.unlink(...keys);
  redis.disconnect();
}
