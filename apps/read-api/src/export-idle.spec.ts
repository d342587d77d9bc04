import { type IncomingMessage, type Server, get as httpGet } from 'node:http';
import { Writable } from 'node:stream';
import { type EventRow, toClickHouseTime } from '@analytics/schema';
import { createLogger } from '@analytics/service-kit';
import { openTestStores } from '@analytics/testing';
import { buildApp } from './app';
import { listenOnLoopback } from './test-support/listen';

// Issue 43, export deadlines: a client that opens an export and reads nothing. Two such clients held both export
// turns (EXPORT_CONCURRENCY 2) for as long as they liked, and every other project's export was 429 after its queue
// wait. Now each is disconnected after EXPORT_IDLE_TIMEOUT_S (2 here), its statement killed and its turn freed.
type Stores = Awaited<ReturnType<typeof openTestStores>>;
const D0 = Date.UTC(2026, 0, 5);
const DAY = 86_400_000;
// About 45 MB of NDJSON each: far more than the socket buffers of a client that reads nothing can hold.
const ROWS = 150_000;
const IDLE_S = 2;

let stores: Stores;
let server: Server;
let base: string;
const keys: Record<'a' | 'c' | 'bystander', string> = { a: '', c: '', bystander: '' };
const logged: Array<Record<string, unknown>> = [];

function row(projectId: string, j: number): EventRow {
  return {
    project_id: projectId, timestamp: toClickHouseTime(D0 + j), event_id: `e-${String(j).padStart(7, '0')}`, event_name: 'bulk', anonymous_id: `v-${j % 97}`,
    user_id: null, session_id: 's', source: 'direct', medium: 'direct', campaign: null, source_confidence: 'high', source_rule_id: 'direct', channel: 'direct',
    referrer: null, url: null, path: '/', country: 'GB', device_type: 'desktop', browser: 'Chrome', os: 'Linux', ip_hash_hex: 'ab'.repeat(16), properties: JSON.stringify({ pad: 'x'.repeat(200) }),
  };
}

beforeAll(async () => {
  stores = await openTestStores({ EXPORT_IDLE_TIMEOUT_S: String(IDLE_S), EXPORT_MAX_EXECUTION_S: '120' });
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logged.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ level: 'warn', format: 'json', destination: sink });
  for (const name of ['a', 'c', 'bystander'] as const) {
    const created = await stores.keyStore.createProject({ name, allowed_origins: [] });
    keys[name] = created.keys.rk;
    const rows = Array.from({ length: name === 'bystander' ? 10 : ROWS }, (_, j) => row(created.project.id, j));
    await stores.events.insertRows(rows);
  }
  ({ server, base } = await listenOnLoopback(buildApp({ logger, authenticator: stores.authenticator, events: stores.events })));
}, 180_000);

afterAll(async () => {
  server?.close();
  await stores?.close();
});

const range = { from: new Date(D0).toISOString(), to: new Date(D0 + DAY).toISOString() };

/** A raw GET of an export whose body is never read (until the test says so). */
function openUnread(key: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    httpGet(`${base}/v1/export?${new URLSearchParams(range)}`, { headers: { authorization: `Bearer ${key}` } }, (res) => {
      res.pause();
      resolve(res);
    }).on('error', reject);
  });
}

/** Reads what is left of a response: whether it ended whole or was cut, and its lines. */
function drain(res: IncomingMessage): Promise<{ ended: 'complete' | 'cut'; lines: number }> {
  let lines = 0;
  return new Promise((resolve) => {
    res.on('data', (c: Buffer) => {
      for (let i = c.indexOf(0x0a); i !== -1; i = c.indexOf(0x0a, i + 1)) lines++;
    });
    res.on('end', () => resolve({ ended: res.complete ? 'complete' : 'cut', lines }));
    res.on('error', () => resolve({ ended: 'cut', lines }));
    res.on('aborted', () => resolve({ ended: 'cut', lines }));
    res.resume();
  });
}

const runningExports = () => stores.events.select<{ n: string }>("SELECT count() AS n FROM system.processes WHERE Settings['log_comment'] != '' AND query LIKE '%AS timestamp%'", {}).then((r) => Number(r[0]!.n));

it('two clients that read nothing are disconnected after EXPORT_IDLE_TIMEOUT_S: statements killed, turns freed, another project exports meanwhile', async () => {
  const [heldA, heldC] = await Promise.all([openUnread(keys.a), openUnread(keys.c)]);
  const opened = Date.now();
  expect([heldA.statusCode, heldC.statusCode]).toEqual([200, 200]);
  // Both export turns are held (EXPORT_CONCURRENCY 2), each by a statement waiting on its unread socket.
  expect(await runningExports()).toBe(2);

  // A third project's export waits for a turn: one is freed when the first idle client is cut, within its queue wait.
  const bystander = fetch(`${base}/v1/export?${new URLSearchParams(range)}`, { headers: { authorization: `Bearer ${keys.bystander}` } }).then(async (r) => ({
    status: r.status,
    lines: (await r.text()).split('\n').filter(Boolean).length,
    at: Date.now() - opened,
  }));

  // Both statements leave the engine about EXPORT_IDLE_TIMEOUT_S after the clients stopped taking bytes.
  while ((await runningExports()) > 0 && Date.now() - opened < IDLE_S * 1000 + 10_000) await new Promise((r) => setTimeout(r, 100));
  expect(await runningExports()).toBe(0);
  const { status, lines, at } = await bystander;
  expect(status).toBe(200);
  expect(lines).toBe(10);
  expect(at).toBeLessThan(IDLE_S * 1000 + 10_000);

  // Each project's next export is admitted at once: the cut ones gave their turns back.
  for (const key of [keys.a, keys.c]) {
    const t = Date.now();
    const again = await fetch(`${base}/v1/export?${new URLSearchParams({ from: range.from, to: new Date(D0 + 1000).toISOString() })}`, { headers: { authorization: `Bearer ${key}` } });
    expect(again.status).toBe(200);
    expect((await again.text()).trim().split('\n')).toHaveLength(1000);
    expect(Date.now() - t).toBeLessThan(5_000);
  }

  // The idle clients' connections were closed: what they read now ends cut, short of the file.
  for (const held of [heldA, heldC]) {
    const { ended, lines: got } = await drain(held);
    expect(ended).toBe('cut');
    expect(got).toBeLessThan(ROWS);
  }
  // A client's doing, not a failure of the service: a warning each, no error.
  expect(logged.filter((l) => l['msg'] === 'export client took nothing: disconnected')).toHaveLength(2);
  expect(logged.filter((l) => (l['level'] as number) >= 50)).toEqual([]);
}, 90_000);
