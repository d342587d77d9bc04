import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ClickHouseClient, ClickHouseError, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { createHarness, type Harness } from './clickhouse-harness';

// The harness checked through @clickhouse/client itself (the client every app uses in CLICKHOUSE_URL mode): what
// it sends must work, and what it throws must be what a ClickHouse server makes it throw.

let harness: Harness;
let dir: string;
let url: string;
const clients: ClickHouseClient[] = [];
const client = (options: Parameters<typeof createClient>[0] = {}) => {
  // The client's own error log is off: the expected failures are asserted, not printed.
  const c = createClient({ url, request_timeout: 20_000, log: { level: ClickHouseLogLevel.OFF }, ...options });
  clients.push(c);
  return c;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ch-harness-'));
  harness = createHarness(dir);
  await new Promise<void>((r) => harness.server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(harness.server.address() as AddressInfo).port}`;
  await client().command({ query: 'CREATE DATABASE IF NOT EXISTS fidelity' });
  await client().command({ query: 'CREATE TABLE fidelity.t (id UInt32, name String, at DateTime64(3, \'UTC\'), tags Array(String)) ENGINE = MergeTree ORDER BY id' });
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await harness.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The error a call rejects with, as the caller's `catch` sees it. */
const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);

describe('ClickHouse HTTP harness, through @clickhouse/client', () => {
  it('answers ping', async () => {
    expect(await client().ping()).toEqual({ success: true });
  });

  it('binds query_params server-side, typed, with the characters the client escapes (tab, newline, quote, backslash)', async () => {
    const name = "it's\ta\\b\nc";
    const rs = await client().query({
      query: 'SELECT {name:String} AS name, {at:DateTime64(3)} AS at, {tags:Array(String)} AS tags, {id:UUID} AS id, {n:UInt8} AS n',
      query_params: { name, at: '2026-01-02 03:04:05.678', tags: ['x', "y'z"], id: '6a2f41a3-c54c-fce8-32d2-0324e1c32e22', n: 41 },
      format: 'JSONEachRow',
    });
    expect(await rs.json()).toEqual([{ name, at: '2026-01-02 03:04:05.678', tags: ['x', "y'z"], id: '6a2f41a3-c54c-fce8-32d2-0324e1c32e22', n: 41 }]);
  });

  it('inserts JSONCompactEachRow into the client database, gzip-compressed, and reports the written rows in the summary', async () => {
    const writer = client({ database: 'fidelity', compression: { request: true } });
    const result = await writer.insert({
      table: 't', format: 'JSONCompactEachRow', columns: ['id', 'name', 'at', 'tags'],
      values: [[1, 'one', '2026-01-01 00:00:00.001', ['a']], [2, 'two', '2026-01-01 00:00:00.002', []]],
    });
    expect(result.summary?.written_rows).toBe('2');
    const rs = await client({ compression: { response: true } }).query({ query: 'SELECT id, name, tags FROM fidelity.t ORDER BY id', format: 'JSONEachRow' });
    expect(await rs.json()).toEqual([{ id: 1, name: 'one', tags: ['a'] }, { id: 2, name: 'two', tags: [] }]);
  });

  it('keeps settings to the request that sent them', async () => {
    const c = client();
    const read = async (settings: Record<string, string | number> = {}) =>
      (await (await c.query({ query: "SELECT getSetting('max_threads') AS m", format: 'JSONEachRow', clickhouse_settings: settings })).json<{ m: number }>())[0]!.m;
    const before = await read();
    expect(await read({ max_threads: 1 })).toBe(1);
    expect(await read()).toBe(before);
  });

  it.each([
    ['an unknown table', () => client().query({ query: 'SELECT * FROM fidelity.nope', format: 'JSONEachRow' }), '60', 'UNKNOWN_TABLE'],
    ['a syntax error', () => client().command({ query: 'SELEC 1' }), '62', 'SYNTAX_ERROR'],
    ['an unknown database', () => client({ database: 'no_such_db' }).query({ query: 'SELECT 1', format: 'JSONEachRow' }), '81', 'UNKNOWN_DATABASE'],
    ['an unknown setting', () => client().query({ query: 'SELECT 1', format: 'JSONEachRow', clickhouse_settings: { no_such_setting: 1 } as never }), '115', 'UNKNOWN_SETTING'],
    ['a value the column cannot hold', () => client().insert({ table: 'fidelity.t', format: 'JSONEachRow', values: [{ id: 'not a number' }] }), '27', 'CANNOT_PARSE_INPUT_ASSERTION_FAILED'],
    ['a parameter that does not parse as its type', () => client().query({ query: 'SELECT {u:UUID}', query_params: { u: 'nope' }, format: 'JSONEachRow' }), '376', 'CANNOT_PARSE_UUID'],
    ['throwIf', () => client().command({ query: 'SELECT throwIf(1)' }), '395', 'FUNCTION_THROW_IF_VALUE_IS_NON_ZERO'],
  ])('rejects %s with the ClickHouseError code and type a server gives', async (_what, call, code, type) => {
    const e = await failure(call());
    expect(e).toBeInstanceOf(ClickHouseError);
    expect({ code: (e as ClickHouseError).code, type: (e as ClickHouseError).type }).toEqual({ code, type });
  });

  it.each([
    ['SELECT * FROM fidelity.nope', 404, '60'],
    ['SELEC 1', 400, '62'],
    ['SELECT throwIf(1)', 500, '395'],
  ])('answers %s over plain HTTP with the status and exception header of a server', async (sql, status, code) => {
    const r = await fetch(url, { method: 'POST', body: sql });
    expect({ status: r.status, code: r.headers.get('x-clickhouse-exception-code') }).toEqual({ status, code });
    expect(await r.text()).toMatch(new RegExp(`^Code: ${code}\\. DB::Exception: .*\\) \\(version \\d+\\.\\d+`, 's'));
  });

  it("answers the request after a failed one with its own rows only (chDB keeps a failed statement's output on the session)", async () => {
    const c = client();
    const fails = c.query({ query: "SELECT number AS n, throwIf(number = 5000, 'stop') AS x FROM numbers(10000) SETTINGS max_block_size = 10", format: 'JSONEachRow' });
    expect(await failure(fails)).toMatchObject({ code: '395' });
    expect(await (await c.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow' })).json()).toEqual([{ one: 1 }]);
  });

  it('takes the query from the URL and the INSERT data from the body, as the server does', async () => {
    const q = new URLSearchParams({ query: 'INSERT INTO fidelity.t (id, name) FORMAT JSONCompactEachRow', database: 'fidelity' });
    const r = await fetch(`${url}/?${q}`, { method: 'POST', body: '[3,"three"]\n' });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.headers.get('x-clickhouse-summary')!)).toMatchObject({ written_rows: '1' });
    const rs = await client().query({ query: 'SELECT name FROM fidelity.t WHERE id = {id:UInt32}', query_params: { id: 3 }, format: 'JSONEachRow' });
    expect(await rs.json()).toEqual([{ name: 'three' }]);
  });
});
