import net from 'node:net';
import { ClickHouseLogLevel } from '@clickhouse/client';
import { type EventRow, LIMITS, UpstreamUnavailableError, toClickHouseTime } from '@analytics/schema';
import { EVENT_INSERT_COLUMNS, EventStore } from '../../event-store';
import { useTestStore } from '../../test-support/test-store';
import { MAX_PARTITIONS_PER_INSERT } from '../../primitives/lanes';
import { insertEventRows } from './insert-rows';

let store: EventStore;
useTestStore((opened) => ({ store } = opened));

const PROJECT = '0b9d4c1e-2f3a-4b5c-8d7e-6f5a4b3c2d1e';
const hostile = 'quote " backslash \\ tab \t newline \n NUL \u0000 emoji 😀 sql \'; DROP TABLE events; --';
const row = (id: string, o: Partial<EventRow> = {}): EventRow => ({
  project_id: PROJECT, timestamp: '2026-03-01 10:00:00.123', event_id: id, event_name: '$pageview', anonymous_id: 'anon-1', user_id: null,
  session_id: 's-1', source: 'direct', medium: 'direct', campaign: null, source_confidence: 'high', source_rule_id: 'direct', channel: 'direct', referrer: null,
  url: 'https://shop.example.com/?a=1', path: '/', country: 'GB', device_type: 'desktop', browser: 'Chrome', os: 'Linux',
  ip_hash_hex: '00112233445566778899aabbccddeeff', properties: JSON.stringify({ s: hostile, n: 1.5, a: [1, null] }), ...o,
});
const stored = (prefix: string) =>
  store.select<Record<string, unknown>>(
    `SELECT * EXCEPT ip_hash, lower(hex(ip_hash)) AS ip_hash_hex FROM ${store.eventsTable} WHERE startsWith(event_id, {p:String}) ORDER BY event_id`,
    { p: prefix },
  );

describe('insertEventRows (JSONCompactEachRow)', () => {
  it('stores the same values through chDB raw insert and through the client, nulls and hostile strings included', async () => {
    const rows = (prefix: string) => [row(`${prefix}-1`), row(`${prefix}-2`, { user_id: hostile, campaign: 'c', referrer: hostile, event_name: hostile, path: null })];
    await store.insertRows(rows('raw')); // the embedded store's path: raw insert of one Buffer
    await insertEventRows({ client: store.client, table: store.eventsTable, columns: EVENT_INSERT_COLUMNS }, rows('cli')); // a server's path
    const raw = await stored('raw-');
    const cli = await stored('cli-');
    expect(raw).toHaveLength(2);
    expect(raw.map((r) => ({ ...r, event_id: '' }))).toEqual(cli.map((r) => ({ ...r, event_id: '' })));
    expect(raw[1]).toMatchObject({ user_id: hostile, referrer: hostile, event_name: hostile, path: null, campaign: 'c', ip_hash_hex: '00112233445566778899aabbccddeeff' });
    expect(JSON.parse(raw[0]!.properties as string)).toEqual({ s: hostile, n: 1.5, a: [1, null] });
  });
});

describe('one INSERT over many month partitions', () => {
  const first = new Date(LIMITS.timestamp.min);
  const monthly = (prefix: string, months: number) =>
    Array.from({ length: months }, (_, i) => row(`${prefix}-${String(i).padStart(4, '0')}`, { timestamp: toClickHouseTime(Date.UTC(first.getUTCFullYear(), i, 15)) }));
  const summary = async (prefix: string) => {
    const [r] = await store.select<{ n: number; months: number; last: string }>(
      `SELECT count() AS n, uniqExact(toYYYYMM(timestamp)) AS months, max(timestamp) AS last FROM ${store.eventsTable} WHERE startsWith(event_id, {p:String})`,
      { p: prefix },
    );
    return { n: Number(r!.n), months: Number(r!.months), last: r!.last };
  };

  // 101 months, past ClickHouse's default of 100; every month of the range (1200) costs ~4800 parts, too slow for a unit test.
  it('lets one INSERT span more than the default 100 month partitions (up to the 1200 of the accepted range), raw insert and client', async () => {
    expect(MAX_PARTITIONS_PER_INSERT).toBe(1200);
    await store.insertRows(monthly('months-raw', 101)); // chDB's raw insert
    await insertEventRows({ client: store.client, table: store.eventsTable, columns: EVENT_INSERT_COLUMNS }, monthly('months-cli', 101)); // a server's path
    for (const prefix of ['months-raw-', 'months-cli-']) expect(await summary(prefix)).toEqual({ n: 101, months: 101, last: '2008-05-15 00:00:00.000' });
  });
});

describe('EventStore.connect to an unreachable ClickHouse', () => {
  it('fails an insert with UpstreamUnavailableError within the request timeout, refused or silent', async () => {
    // A port nobody listens on, and a server that accepts and never answers (a blackhole).
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as net.AddressInfo;
        s.close(() => resolve(port));
      });
    });
    const sockets: net.Socket[] = [];
    const hole = net.createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => hole.listen(0, '127.0.0.1', resolve));
    const holePort = (hole.address() as net.AddressInfo).port;
    try {
      for (const port of [closed, holePort]) {
        // The client would log each expected failure with its stack; the rejection is what this test reads.
        const remote = EventStore.connect({ url: `http://127.0.0.1:${port}`, database: 'analytics', requestTimeoutMs: 500, clientLog: { level: ClickHouseLogLevel.OFF } });
        const started = Date.now();
        const error = await remote.insertRows([row('x')]).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(UpstreamUnavailableError);
        expect(Date.now() - started).toBeLessThan(3_000);
        await remote.close();
      }
    } finally {
      sockets.forEach((s) => s.destroy());
      hole.close();
    }
  });
});
