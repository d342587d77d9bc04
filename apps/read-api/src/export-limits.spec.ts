import { type Server, get as httpGet } from 'node:http';
import { Writable } from 'node:stream';
import { type EventRow, toClickHouseTime } from '@analytics/schema';
import { createLogger } from '@analytics/service-kit';
import { openTestStores } from '@analytics/testing';
import { buildApp } from './app';
import { listenOnLoopback } from './test-support/listen';

// GET /v1/export stopped by its own time limit (EXPORT_MAX_EXECUTION_S=3 here) after its first byte: the connection is
// cut (the client never gets a file that looks whole) and the failure is logged, since no status can say it any more.
// The limit is the export's wall time, waits on its client included: a slow reader is cut at it too.
type Stores = Awaited<ReturnType<typeof openTestStores>>;
const D0 = Date.UTC(2026, 0, 5);
const ROWS = 150_000;

let stores: Stores;
let server: Server;
let base: string;
let rk: string;
const logged: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  stores = await openTestStores({ EXPORT_MAX_EXECUTION_S: '3' });
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logged.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ level: 'error', format: 'json', destination: sink });
  const created = await stores.keyStore.createProject({ name: 'limits', allowed_origins: [] });
  rk = created.keys.rk;
  const rows: EventRow[] = [];
  for (let j = 0; j < ROWS; j++) {
    rows.push({
      project_id: created.project.id, timestamp: toClickHouseTime(D0 + j), event_id: `e-${String(j).padStart(7, '0')}`, event_name: 'bulk', anonymous_id: `v-${j % 97}`,
      user_id: null, session_id: 's', source: 'direct', medium: 'direct', campaign: null, source_confidence: 'high', source_rule_id: 'direct', channel: 'direct',
      referrer: null, url: null, path: '/', country: 'GB', device_type: 'desktop', browser: 'Chrome', os: 'Linux', ip_hash_hex: 'ab'.repeat(16), properties: JSON.stringify({ pad: 'x'.repeat(200) }),
    });
  }
  await stores.events.insertRows(rows);
  ({ server, base } = await listenOnLoopback(buildApp({ logger, authenticator: stores.authenticator, events: stores.events })));
}, 120_000);

afterAll(async () => {
  server?.close();
  await stores?.close();
});

it('an export past EXPORT_MAX_EXECUTION_S after its first byte: the connection is cut and the failure logged', async () => {
  const qs = new URLSearchParams({ from: new Date(D0).toISOString(), to: new Date(D0 + 86_400_000).toISOString() });
  const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
    httpGet(`${base}/v1/export?${qs}`, { headers: { authorization: `Bearer ${rk}` } }, (r) => {
      r.pause();
      resolve(r);
    }).on('error', reject);
  });
  expect(res.statusCode).toBe(200);
  // Unread for longer than the limit: the export is stopped at it.
  await new Promise((r) => setTimeout(r, 4_000));
  let lines = 0;
  const ended = await new Promise<'complete' | 'cut'>((resolve) => {
    res.on('data', (c: Buffer) => {
      for (let i = c.indexOf(0x0a); i !== -1; i = c.indexOf(0x0a, i + 1)) lines++;
    });
    res.on('end', () => resolve(res.complete ? 'complete' : 'cut'));
    res.on('error', () => resolve('cut'));
    res.on('aborted', () => resolve('cut'));
    res.resume();
  });
  expect(ended).toBe('cut');
  expect(lines).toBeLessThan(ROWS);
  const deadline = Date.now() + 5_000;
  while (logged.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(logged).toEqual([expect.objectContaining({ msg: 'export failed after its first byte: connection cut', path: '/v1/export' })]);
  // Stopped by the limit (the engine's TIMEOUT_EXCEEDED, as the read limits name it), not by anything else.
  expect(JSON.stringify(logged[0]!['err'])).toContain('query_too_expensive');
  // The project's next export starts at once: the failed one gave its turn back.
  const again = await fetch(`${base}/v1/export?${new URLSearchParams({ from: new Date(D0).toISOString(), to: new Date(D0 + 1000).toISOString() })}`, { headers: { authorization: `Bearer ${rk}` } });
  expect(again.status).toBe(200);
  expect((await again.text()).trim().split('\n')).toHaveLength(1000);
}, 180_000);

const runningExports = () => stores.events.select<{ n: string }>("SELECT count() AS n FROM system.processes WHERE Settings['log_comment'] != '' AND query LIKE '%AS timestamp%'", {}).then((r) => Number(r[0]!.n));

it('a slow reader is cut at EXPORT_MAX_EXECUTION_S: the time its export waits on the socket counts', async () => {
  logged.length = 0;
  const qs = new URLSearchParams({ from: new Date(D0).toISOString(), to: new Date(D0 + 86_400_000).toISOString() });
  const t0 = Date.now();
  const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
    httpGet(`${base}/v1/export?${qs}`, { headers: { authorization: `Bearer ${rk}` } }, resolve).on('error', reject);
  });
  expect(res.statusCode).toBe(200);
  // Takes a socket read every 15 s: never idle for EXPORT_IDLE_TIMEOUT_S (30 s), but far too slow to ever finish. The
  // engine's own max_execution_time is only checked when the next block is pulled, which this pace delays for long.
  let lines = 0;
  let ended: 'complete' | 'cut' | undefined;
  res.on('data', (c: Buffer) => {
    for (let i = c.indexOf(0x0a); i !== -1; i = c.indexOf(0x0a, i + 1)) lines++;
    res.pause();
    setTimeout(() => res.resume(), 15_000).unref();
  });
  res.on('end', () => (ended = res.complete ? 'complete' : 'cut'));
  res.on('error', () => (ended = 'cut'));
  res.on('aborted', () => (ended = 'cut'));
  // The statement leaves the engine about EXPORT_MAX_EXECUTION_S (3 s) after the export began, with the reader still at it.
  while ((await runningExports()) > 0 && Date.now() - t0 < 12_000) await new Promise((r) => setTimeout(r, 100));
  expect(await runningExports()).toBe(0);
  expect(ended).not.toBe('complete');
  // The project's next export is admitted at once: the turn is free.
  const t1 = Date.now();
  const again = await fetch(`${base}/v1/export?${new URLSearchParams({ from: new Date(D0).toISOString(), to: new Date(D0 + 1000).toISOString() })}`, { headers: { authorization: `Bearer ${rk}` } });
  expect(again.status).toBe(200);
  expect((await again.text()).trim().split('\n')).toHaveLength(1000);
  expect(Date.now() - t1).toBeLessThan(5_000);
  res.destroy();
  expect(lines).toBeLessThan(ROWS);
  expect(logged).toEqual([expect.objectContaining({ msg: 'export failed after its first byte: connection cut', path: '/v1/export' })]);
  expect(JSON.stringify(logged[0]!['err'])).toContain('query_too_expensive');
}, 180_000);
