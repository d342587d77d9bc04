// Shared pieces of the ingest benchmarks: start `npm start`'s server as the harness does, sample its memory,
// read the embedded store after it stopped (in a child process: chDB binds one data directory per process).
import { execFileSync, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { build } from 'esbuild';
import { nodeBundleOptions } from '../esbuild-options.mjs';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdefghij';
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The rate limits raised so the token buckets do not cap a measurement. */
export const UNLIMITED = { RATE_LIMIT_TRACK_PER_S: '1000000', RATE_LIMIT_TRACK_BURST: '1000000', RATE_LIMIT_BATCH_PER_S: '1000000', RATE_LIMIT_BATCH_BURST: '1000000' };

/** Bundles `exports` (lines like `export { X } from './libs/…/src/index';`) from source with the apps' esbuild options: the loaded module and its path. */
export async function bundleFromSource(name, exports) {
  const outfile = resolve(`dist/bench/${name}.cjs`);
  await build({ stdin: { contents: exports.join('\n'), resolveDir: process.cwd(), loader: 'ts' }, outfile, ...nodeBundleOptions });
  return { lib: createRequire(import.meta.url)(outfile), path: outfile };
}

export async function freePort() {
  return new Promise((res) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => res(p));
    });
  });
}

/** Pids of the process group `pgid` whose command line contains `needle`. */
function pidsInGroup(pgid, needle) {
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(needle)) out.push(Number(d));
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

const CLOCK_TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** CPU time (user + system, every thread: the embedded engine's too) a process has used so far, in ms. */
export function cpuMsOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}

/** VmHWM (peak resident set) and VmRSS of a process, in MiB. */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { hwmMiB: kb('VmHWM') / 1024, rssMiB: kb('VmRSS') / 1024 };
  } catch {
    return { hwmMiB: 0, rssMiB: 0 };
  }
}

/**
 * `npm start` on a fresh DATA_DIR (detached: its own process group, like shared/tools/harness.mjs), waiting for
 * /healthz. With `nodeArgs` (e.g. --cpu-prof, which NODE_OPTIONS refuses) it runs what `npm start` execs instead,
 * `node <nodeArgs> dist/apps/standalone/main.js`, after the same build.
 */
export async function startService(extraEnv = {}, { nodeArgs, dataDir: givenDir, cwd = process.cwd() } = {}) {
  const port = await freePort();
  const dataDir = givenDir ?? mkdtempSync(join(tmpdir(), 'bench-ingest-'));
  const env = {
    ...process.env,
    PORT: String(port),
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    INTERNAL_SECRET: 'bench-internal-secret-0123456789abcdef',
    IP_HASH_SECRET: 'bench-ip-hash-secret-0123456789abcdef',
    TRUST_PROXY: 'loopback',
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    ...extraEnv,
  };
  delete env.CLICKHOUSE_URL;
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  const child = nodeArgs
    ? spawn(process.execPath, [...nodeArgs, 'dist/apps/standalone/main.js'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    : spawn('npm', ['start'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline && child.exitCode === null) {
    if (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) break;
    await sleep(200);
  }
  if (!(await fetch(`${base}/healthz`).then((r) => r.ok, () => false))) {
    try { process.kill(-child.pid, 'SIGKILL'); } catch {}
    throw new Error(`server did not start:\n${log}`);
  }
  const [pid] = pidsInGroup(child.pid, 'dist/apps/standalone/main.js');
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, memoryOf(pid).hwmMiB);
  }, 250);
  return {
    base,
    dataDir,
    pid,
    get log() {
      return log;
    },
    /** Peak RSS so far (the kernel's VmHWM high-water mark, sampled every 250 ms and at stop). */
    peakRssMiB: () => Math.max(peak, memoryOf(pid).hwmMiB),
    async stop() {
      clearInterval(sampler);
      peak = Math.max(peak, memoryOf(pid).hwmMiB);
      if (child.exitCode !== null) return;
      try { process.kill(-child.pid, 'SIGTERM'); } catch {}
      const t = Date.now();
      while (child.exitCode === null && Date.now() - t < 30_000) await sleep(100);
      if (child.exitCode === null) {
        try { process.kill(-child.pid, 'SIGKILL'); } catch {}
      }
      // Let the server's own process (npm's child) finish writing a --cpu-prof profile.
      while (pid && pidsInGroup(child.pid, 'dist/apps/standalone/main.js').length > 0 && Date.now() - t < 40_000) await sleep(100);
    },
  };
}

export async function createProject(base, name = 'bench') {
  const res = await fetch(`${base}/admin/projects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, allowed_origins: ['https://shop.example.com'] }),
  });
  if (res.status !== 201) throw new Error(`create project: ${res.status} ${await res.text()}`);
  const body = await res.json();
  return { id: body.project.id, ...body.keys };
}

/**
 * Runs a query on a stopped server's embedded store in a child process and returns its JSON rows.
 */
export function queryStore(dataDir, sql) {
  const script = `
    const { Session } = require('chdb');
    const s = new Session(process.argv[1]);
    process.stdout.write(s.query(process.argv[2], 'JSONEachRow'));
    s.close?.();`;
  const out = execFileSync(process.execPath, ['-e', script, join(dataDir, 'clickhouse'), sql], { maxBuffer: 1 << 30, encoding: 'utf8' });
  return out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** Latency percentile (ms) from a sorted array. */
export const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

export const fmt = (n, digits = 0) => Number(n).toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });

// A realistic mix: a few pages, referrers (search, social, newsletter, none) and user agents.
export const URLS = [
  'https://shop.example.com/',
  'https://shop.example.com/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=spring',
  'https://shop.example.com/docs/getting-started',
  'https://shop.example.com/blog/launch?gclid=abc123',
  'https://shop.example.com/product/42?fbclid=xyz',
  'https://shop.example.com/signup',
];
export const REFERRERS = [undefined, 'https://www.google.com/', 'https://t.co/abc', 'https://news.ycombinator.com/', 'https://shop.example.com/', 'https://l.facebook.com/'];
export const UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
];
const NAMES = ['$pageview', '$pageview', '$pageview', 'clicked_pricing', 'signup', 'feature_used', 'purchase'];

/** One event input as a browser or server SDK sends it (no timestamp: the server's clock). */
export function sampleEvent(i) {
  const e = {
    event: NAMES[i % NAMES.length],
    anonymous_id: `anon-${(i * 7919) % 5000}`,
    url: URLS[i % URLS.length],
    properties: { plan: i % 3 ? 'free' : 'pro', price: (i % 50) * 1.5, items: [`sku-${i % 17}`, `sku-${i % 23}`], viewport: '1440x900', language: 'en-US', timezone: 'Europe/Berlin' },
  };
  const referrer = REFERRERS[i % REFERRERS.length];
  if (referrer) e.referrer = referrer;
  if (i % 5 === 0) e.user_id = `user-${i % 1000}`;
  return e;
}

/** Distinct 1000-event batch bodies; the first event's event_id is `__REQ__`, replaced per request to track it. */
export function batchBodies(count = 8, size = 1000) {
  return Array.from({ length: count }, (_, b) => {
    const events = Array.from({ length: size }, (_, i) => sampleEvent(b * size + i));
    events[0] = { ...events[0], event_id: '__REQ__' };
    return JSON.stringify({ events });
  });
}

/**
 * One statement run `runs` times straight on a chDB session with `settings` (e.g. `max_threads = 4`; the cost tools:
 * insights-cost, funnel-cost): the median run's wall and CPU ms (process.cpuUsage: every engine thread) and the last answer.
 */
export function timeStatement(session, sql, settings, runs = 7) {
  const measured = [];
  let out = '';
  for (let i = 0; i < runs; i++) {
    const cpu = process.cpuUsage();
    const t = performance.now();
    out = session.query(`${sql} SETTINGS ${settings}`, 'JSONEachRow');
    const used = process.cpuUsage(cpu);
    measured.push([performance.now() - t, (used.user + used.system) / 1000]);
  }
  measured.sort((a, b) => a[0] - b[0]);
  return [...measured[Math.floor(runs / 2)], out];
}
