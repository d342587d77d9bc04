import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { type ProjectKeys, type Server, createProject, startServer } from './server';

/** Rate limits out of the way: only the attack shapes count. */
export const UNLIMITED = { RATE_LIMIT_TRACK_PER_S: '1000000', RATE_LIMIT_TRACK_BURST: '1000000', RATE_LIMIT_BATCH_PER_S: '1000000', RATE_LIMIT_BATCH_BURST: '1000000' };
/** The bystander's address; attackers send from others (X-Forwarded-For under TRUST_PROXY=loopback). */
export const LEGIT_IP = '203.0.113.10';
export const ATTACKER_IP = '198.51.100.66';

export const base62 = (n: number) => randomBytes(n * 2).toString('base64').replace(/[^0-9A-Za-z]/g, '').slice(0, n).padEnd(n, 'a');
export const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.max(0, Math.ceil((p / 100) * xs.length) - 1))]!;

export interface LoopResult {
  latencies: number[];
  statuses: Record<number, number>;
  perS: number;
}

/** `workers` closed loops of `send` for `ms`: latencies (ms) and statuses. */
export async function loops(workers: number, ms: number, send: (i: number) => Promise<number>): Promise<LoopResult> {
  const until = Date.now() + ms;
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let i = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (Date.now() < until) {
        const t = performance.now();
        const status = await send(i++).catch(() => 0);
        latencies.push(performance.now() - t);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  return { latencies, statuses, perS: latencies.length / (ms / 1000) };
}

/** A POST whose answer is read to the end; `body` strings and buffers go as they are. */
export const post = (base: string, path: string, key: string, body: unknown, ip = LEGIT_IP, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-forwarded-for': ip, ...headers },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  }).then(async (r) => {
    await r.arrayBuffer();
    return r;
  });

/** A server process's resident memory (VmRSS) or its peak since the last resetPeak (VmHWM), in MiB. */
export const rssMiB = (server: Server, field: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))![1]) / 1024;

/** Resets the kernel's peak (VmHWM counts from start-up otherwise: the key store's initdb, the engine's start). */
export const resetPeak = (server: Server) => writeFileSync(`/proc/${server.child.pid}/clear_refs`, '5');

/** The bystander's load: 10 connections of /v1/track from its own address. */
export const bystanderTrack = (server: Server, key: string, ms: number) =>
  loops(10, ms, async (i) => (await post(server.base, '/v1/track', key, { event: 'legit', anonymous_id: `a-${i % 50}` })).status);

/** The figures of a run, for the closing note and BENCHMARKS.md (jest prints them with the test's name). */
export function report(what: string, figures: Record<string, number | string>): void {
  console.log(`${what}: ${Object.entries(figures).map(([k, v]) => `${k} ${typeof v === 'number' ? Math.round(v * 10) / 10 : v}`).join(', ')}`);
}

/**
 * The issue's bound for a bystander under an attack: at least `minShare` (half) of its quiet throughput, p99 under
 * twice quiet + 100 ms.
 */
export const bystanderUnhurt = (quiet: LoopResult, busy: LoopResult, minShare = 0.5): boolean =>
  busy.perS >= minShare * quiet.perS && pct(busy.latencies, 99) < 2 * pct(quiet.latencies, 99) + 100;

/** That bound as assertions, the figures reported first. */
export function expectBystanderUnhurt(quiet: LoopResult, busy: LoopResult, minShare = 0.5): void {
  report('bystander track', { 'quiet req/s': quiet.perS, 'attacked req/s': busy.perS, 'quiet p99 ms': pct(quiet.latencies, 99), 'attacked p99 ms': pct(busy.latencies, 99) });
  expect(Object.keys(quiet.statuses)).toEqual(['202']);
  expect(Object.keys(busy.statuses)).toEqual(['202']);
  expect(busy.perS).toBeGreaterThanOrEqual(minShare * quiet.perS);
  expect(pct(busy.latencies, 99)).toBeLessThan(2 * pct(quiet.latencies, 99) + 100);
}

/** A 1000-event batch at every field limit: ~14 MB of JSON (that gzip shrinks below 200 KB). */
export function maxSizeBatch(): string {
  const url = `https://shop.example.com/${'u'.repeat(2048 - 25)}`;
  const events = Array.from({ length: 1000 }, (_, i) => ({
    event: 'maxsize'.padEnd(128, 'e'),
    event_id: `big-${i}`.padEnd(128, 'i'),
    anonymous_id: 'a'.repeat(128),
    user_id: 'u'.repeat(256),
    session_id: 's'.repeat(128),
    url,
    path: `/${'p'.repeat(2047)}`,
    referrer: url,
    properties: { blob: 'x'.repeat(8180) },
  }));
  return JSON.stringify({ events });
}

/**
 * A fresh server (rate limits out of the way) with one project named `name`, for the tests of the describe block that
 * calls it: started before all of them (or before each, with `each`) and removed after (`initdb`: StartOptions'). Read
 * `.server` and `.p` in a test.
 */
export function serverWithProject(name: string, { each = false, initdb = false } = {}): { server: Server; p: ProjectKeys } {
  const ctx = {} as { server: Server; p: ProjectKeys };
  (each ? beforeEach : beforeAll)(async () => {
    ctx.server = await startServer({ env: UNLIMITED, initdb });
    ctx.p = await createProject(ctx.server.base, name);
  });
  (each ? afterEach : afterAll)(() => ctx.server?.dispose());
  return ctx;
}
