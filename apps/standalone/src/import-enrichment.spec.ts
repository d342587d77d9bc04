import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import type { Express } from 'express';
import { openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from './app';
import { closeServer, listen, urlOf } from './test-service';

// Issue 50, item 3: an export (NDJSON or CSV) imported into a fresh project through POST /admin/projects/{id}/import
// (tools/import.mjs --project, as `npm run import` runs it) comes back as it was stored: countries, devices, browsers,
// bots and sources, so insights without bots count the same visitors. The public ingest routes keep ignoring those
// columns (the spec), and through /v1/batch (--key) they are computed again, as before.

type Stores = Awaited<ReturnType<typeof openTestStores>>;
type Keys = { pk: string; sk: string; rk: string };
type Row = Record<string, string | null>;
const run = promisify(execFile);
const ROOT = join(__dirname, '../../..');
const ADMIN_TOKEN = 'admin-token-import-spec';
const SITE = 'https://shop.example.com';
const D0 = Date.UTC(2026, 2, 2);
const FROM = new Date(D0).toISOString();
const TO = new Date(D0 + 3 * 86_400_000).toISOString();
// Visitors from several countries and devices, and a crawler: [address, User-Agent].
const CALLERS = [
  ['81.2.69.160', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'],
  ['133.242.0.1', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1'],
  ['200.160.2.3', 'Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1'],
  ['193.51.224.1', 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'],
  ['8.8.8.8', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'],
] as const;
const ENTRIES = [{ referrer: 'https://www.google.com/' }, { url: `${SITE}/?utm_source=newsletter&utm_medium=email&utm_campaign=spring` }, { url: `${SITE}/?gclid=abc` }, {}, { referrer: 'https://t.co/x' }];

let stores: Stores;
let app: Express;
let server: Server;
let base: string;
let dir: string;
let origin: Keys & { id: string };
let sent = 0;

async function project(name: string): Promise<Keys & { id: string }> {
  const created = await stores.keyStore.createProject({ name, allowed_origins: [SITE] });
  return { ...created.keys, id: created.project.id };
}

beforeAll(async () => {
  stores = await openTestStores();
  app = buildApp({
    stores, logger: silentLogger, trustProxy: ['loopback'], rateRules: { track: { ratePerS: 1e6, burst: 1e6 }, batch: { ratePerS: 1e6, burst: 1e6 } },
    secrets: { ADMIN_TOKEN, IP_HASH_SECRET: 'ip-secret-test', INTERNAL_SECRET: 'internal-secret-test' },
  });
  server = await listen(app);
  base = urlOf(server);
  dir = mkdtempSync(join(tmpdir(), 'import-enrichment-'));
  origin = await project('origin');
  // 60 visitors, one caller each, one to four events a visit, over two days.
  for (let v = 0; v < 60; v++) {
    const [ip, ua] = CALLERS[v % CALLERS.length]!;
    const entry = ENTRIES[v % ENTRIES.length]!;
    const t0 = D0 + v * 50 * 60_000;
    const events = Array.from({ length: 1 + (v % 4) }, (_, i) => ({
      event: i === 0 ? '$pageview' : i === 3 ? 'signup' : '$pageview',
      event_id: `ev-${v}-${i}`,
      timestamp: new Date(t0 + i * 60_000).toISOString(),
      anonymous_id: `anon-${v}`,
      ...(i === 0 ? { url: `${SITE}/p/${v % 7}`, ...entry } : { url: `${SITE}/p/${(v + i) % 7}`, referrer: `${SITE}/p/${v % 7}` }),
      properties: v % 2 ? { n: v, note: 'comma, "quote"\nline' } : {},
    }));
    const res = await request(app).post('/v1/batch').set('authorization', `Bearer ${origin.sk}`).set('x-forwarded-for', ip).set('user-agent', ua).send({ events });
    expect(res.status).toBe(202);
    sent += events.length;
  }
  // A server-side event: a user id only (empty anonymous_id), no url.
  await request(app).post('/v1/track').set('authorization', `Bearer ${origin.sk}`).send({ event: 'purchase', event_id: 'ev-server', timestamp: new Date(D0 + 3_600_000).toISOString(), user_id: 'u-1' }).expect(202);
  sent++;
}, 120_000);

afterAll(async () => {
  if (server) await closeServer(server);
  await stores?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function exportTo(key: string, format: 'ndjson' | 'csv'): Promise<string> {
  const res = await request(app).get('/v1/export').set('authorization', `Bearer ${key}`).query({ from: FROM, to: TO, format }).buffer(true).parse((r, done) => {
    const chunks: Buffer[] = [];
    r.on('data', (c: Buffer) => chunks.push(c));
    r.on('end', () => done(null, Buffer.concat(chunks)));
  });
  expect(res.status).toBe(200);
  const file = join(dir, `${format}-${Date.now()}.${format}`);
  writeFileSync(file, res.body as Buffer);
  return file;
}

const importFile = (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, ['tools/import.mjs', '--url', base, ...args], { cwd: ROOT, env: { PATH: process.env.PATH!, ...env } });

/** Every stored row of a project as /v1/query answers it, oldest first. */
async function rowsOf(key: string): Promise<Row[]> {
  const res = await request(app).get('/v1/query').set('authorization', `Bearer ${key}`).query({ from: FROM, to: TO, limit: 1000 });
  expect(res.status).toBe(200);
  return (res.body.rows as Row[]).sort((a, b) => (a.timestamp! < b.timestamp! ? -1 : a.timestamp! > b.timestamp! ? 1 : a.event_id! < b.event_id! ? -1 : 1));
}

/** What the dashboard shows (insights, bots left out) and the stats by country and device (every event). */
async function figuresOf(key: string) {
  const insights = async (body: object) => {
    const res = await request(app).post('/v1/insights').set('authorization', `Bearer ${key}`).send({ from: FROM, to: TO, limit: 1000, ...body });
    expect(res.status).toBe(200);
    return res.body.rows;
  };
  const stats = await request(app).get('/v1/stats').set('authorization', `Bearer ${key}`).query({ from: FROM, to: TO, group_by: 'country,device_type,browser,os', metric: 'uniques', limit: 1000 });
  return {
    visitors: await insights({ metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate'] }),
    byCountry: await insights({ metrics: ['visitors'], dimensions: ['country'] }),
    byDevice: await insights({ metrics: ['visitors'], dimensions: ['device_type'] }),
    bySource: await insights({ metrics: ['visitors', 'events'], dimensions: ['source', 'channel'] }),
    withBots: await insights({ metrics: ['visitors'], include_bots: true }),
    stats: stats.body.rows,
  };
}

describe('an export imported through POST /admin/projects/{id}/import (npm run import -- --project)', () => {
  it('the data set has countries, devices and bots to lose', async () => {
    const rows = await rowsOf(origin.rk);
    expect(rows).toHaveLength(sent);
    expect(new Set(rows.map((r) => r.country)).size).toBeGreaterThanOrEqual(4);
    expect(new Set(rows.map((r) => r.device_type))).toEqual(new Set(['desktop', 'mobile', 'tablet', 'bot', 'other']));
    const figures = await figuresOf(origin.rk);
    expect(figures.withBots[0].visitors).toBeGreaterThan(figures.visitors[0].visitors);
  });

  it.each(['ndjson', 'csv'] as const)('%s: the stored rows, the dashboard figures (bots left out) and the stats equal the original', async (format) => {
    const file = await exportTo(origin.rk, format);
    const target = await project(`from-${format}`);
    const { stdout, stderr } = await importFile(['--project', target.id, file], { ADMIN_TOKEN });
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, route: `/admin/projects/${target.id}/import`, events_imported: sent, events_total: sent, events_skipped: 0 });
    expect(stderr).not.toContain('computed again');
    expect(await rowsOf(target.rk)).toEqual(await rowsOf(origin.rk));
    expect(await figuresOf(target.rk)).toEqual(await figuresOf(origin.rk));
  }, 120_000);

  it('imported twice (or a batch sent again), nothing is written twice: each row already held is skipped', async () => {
    const file = await exportTo(origin.rk, 'ndjson');
    const target = await project('twice');
    await importFile(['--project', target.id, file], { IMPORT_TOKEN: ADMIN_TOKEN });
    const again = await importFile(['--project', target.id, '--batch', '7', file], { IMPORT_TOKEN: ADMIN_TOKEN });
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, events_imported: sent, events_skipped: sent });
    expect(await rowsOf(target.rk)).toEqual(await rowsOf(origin.rk));
  }, 120_000);

  it('through POST /v1/batch (--key) the enrichment is computed again, and the tool says so', async () => {
    const file = await exportTo(origin.rk, 'ndjson');
    const target = await project('by-key');
    const { stderr } = await importFile(['--key', target.sk, file]);
    expect(stderr).toContain('computed again');
    const rows = await rowsOf(target.rk);
    expect(rows).toHaveLength(sent);
    // The importing machine's address and User-Agent: no country, device other, no bots.
    expect(new Set(rows.map((r) => r.country))).toEqual(new Set(['']));
    expect(new Set(rows.map((r) => r.device_type))).toEqual(new Set(['other']));
  }, 120_000);

  it('without a credential for --project the tool sends nothing (exit 2)', async () => {
    const file = await exportTo(origin.rk, 'ndjson');
    const e = await importFile(['--project', origin.id, file]).then(() => null, (err: { code: number; stderr: string }) => err);
    expect(e?.code).toBe(2);
    expect(e?.stderr).toContain('IMPORT_TOKEN');
  });
});

describe('POST /admin/projects/{id}/import checks every column', () => {
  const row = (over: Record<string, unknown> = {}) => ({
    timestamp: '2026-03-02T10:00:00.000Z', event_name: '$pageview', event_id: 'chk-1', anonymous_id: 'a-1', user_id: null, session_id: 's-1',
    source: 'google', medium: 'organic', campaign: null, source_confidence: 'medium', channel: 'organic_search', referrer: 'https://www.google.com/',
    url: `${SITE}/`, path: '/', country: 'GB', device_type: 'desktop', browser: 'Chrome', os: 'Windows', properties: '{"plan":"pro"}', ...over,
  });
  const post = (id: string, events: unknown[], token = ADMIN_TOKEN) => request(app).post(`/admin/projects/${id}/import`).set('authorization', `Bearer ${token}`).send({ events });

  it.each([
    ['device_type', { device_type: 'robot' }],
    ['channel', { channel: 'tv' }],
    ['source_confidence', { source_confidence: 'certain' }],
    ['country', { country: 'gb' }],
    ['country', { country: 'GBR' }],
    ['properties', { properties: '{not json' }],
    ['properties', { properties: '[1,2]' }],
    ['properties', { properties: JSON.stringify({ big: 'x'.repeat(9000) }) }],
    ['browser', { browser: 'b'.repeat(257) }],
    ['timestamp', { timestamp: 'yesterday' }],
    ['event_id', { event_id: '' }],
    ['country', { country: undefined }],
  ])('a bad %s -> 400 invalid_payload naming it, nothing written', async (field, over) => {
    const target = await project(`bad-${field}`);
    const res = await post(target.id, [row({ event_id: 'ok-1' }), row(over)]);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_payload');
    expect(res.body.details.issues.map((i: { path: string }) => i.path)).toEqual([`events.1.${field}`]);
    expect(await rowsOf(target.rk)).toEqual([]);
  });

  it('more than 1000 rows -> 400 invalid_payload; a project that does not exist -> 404', async () => {
    const target = await project('too-many');
    expect((await post(target.id, Array.from({ length: 1001 }, (_, i) => row({ event_id: `m-${i}` })))).status).toBe(400);
    expect((await post('00000000-0000-4000-8000-000000000000', [row()])).status).toBe(404);
  });

  it('stores the row as sent: the columns the public routes would compute, and properties as their exported text', async () => {
    const target = await project('as-sent');
    const res = await post(target.id, [row({ device_type: 'bot', browser: 'Googlebot', os: 'unknown', country: 'JP', source: 'news.example', medium: 'referral', channel: 'referral', source_confidence: 'low' })]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, count: 1, skipped: 0 });
    expect((await rowsOf(target.rk))[0]).toMatchObject({ device_type: 'bot', browser: 'Googlebot', os: 'unknown', country: 'JP', source: 'news.example', medium: 'referral', channel: 'referral', source_confidence: 'low', properties: '{"plan":"pro"}' });
  });
});

describe('the public ingest routes still ignore the server-computed columns (the spec)', () => {
  it('POST /v1/batch and /v1/track compute country, device, browser, os and the source whatever the body says', async () => {
    const target = await project('public');
    const claimed = { country: 'FR', device_type: 'bot', browser: 'Claimed', os: 'Claimed', source: 'claimed', medium: 'paid', channel: 'paid_other', source_confidence: 'low', campaign: 'claimed' };
    const headers = { 'x-forwarded-for': CALLERS[0][0], 'user-agent': CALLERS[0][1] };
    await request(app).post('/v1/batch').set('authorization', `Bearer ${target.sk}`).set(headers).send({ events: [{ event: 'a', event_id: 'p-1', timestamp: '2026-03-02T10:00:00Z', anonymous_id: 'x', ...claimed }] }).expect(202);
    await request(app).post('/v1/track').set('authorization', `Bearer ${target.sk}`).set(headers).send({ event: 'b', event_id: 'p-2', timestamp: '2026-03-02T10:01:00Z', anonymous_id: 'x', ...claimed }).expect(202);
    const rows = await rowsOf(target.rk);
    expect(rows).toHaveLength(2);
    for (const r of rows) expect(r).toMatchObject({ country: 'GB', device_type: 'desktop', browser: 'Chrome', os: 'Windows', source: 'direct', medium: 'direct', channel: 'direct', campaign: null });
  });
});
