import request from 'supertest';
import type { Express } from 'express';
import { dailyAnonymousId } from '@analytics/enrichment';
import { IngestService } from '@analytics/ingest';
import { openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from './app';

// Consent-free counting: pk_ events without ids get a daily visitor id derived from (project, IP, user agent).

type Stores = Awaited<ReturnType<typeof openTestStores>>;
const ORIGIN = 'https://shop.example.com';
const SECRET = 'test-secret';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const IP = '81.2.69.160';
const DAY = 86_400_000;
const MONDAY = Date.UTC(2026, 4, 11, 9, 0, 0);
const BUCKET_MS = 1_800_000;

let stores: Stores;
let app: Express;
let nowMs = MONDAY;
let shop: { pk: string; sk: string; projectId: string };
let other: { pk: string; projectId: string };

beforeAll(async () => {
  stores = await openTestStores();
  const ingest = new IngestService({ store: stores.events, limiter: stores.limiter, rateRules: { track: { ratePerS: 1000, burst: 1000 }, batch: { ratePerS: 1000, burst: 1000 } } });
  app = buildApp({ logger: silentLogger, trustProxy: ['loopback'], authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: SECRET, clock: () => nowMs });
  const a = await stores.keyStore.createProject({ name: 'shop', allowed_origins: [ORIGIN] });
  const b = await stores.keyStore.createProject({ name: 'other', allowed_origins: [ORIGIN] });
  shop = { pk: a.keys.pk, sk: a.keys.sk, projectId: a.project.id };
  other = { pk: b.keys.pk, projectId: b.project.id };
});
afterAll(() => stores.close());
beforeEach(() => {
  nowMs = MONDAY;
});

const browser = { origin: ORIGIN, 'user-agent': UA, 'x-forwarded-for': IP };
const post = (path: string, body: object, key: string, headers: Record<string, string> = browser) =>
  request(app).post(path).set('authorization', `Bearer ${key}`).set(headers).send(body);
const rowsOf = (where: string, params: Record<string, unknown>) =>
  stores.events.select<Record<string, string | null>>(`SELECT * FROM ${stores.events.eventsTable} WHERE ${where} ORDER BY timestamp`, params);
async function trackedRow(body: object, key: string, headers?: Record<string, string>) {
  const res = await post('/v1/track', body, key, headers);
  expect(res.status).toBe(202);
  return (await rowsOf('event_id = {id:String}', { id: res.body.event_id }))[0]!;
}

describe('anonymous_id of pk_ events that carry no ids', () => {
  it('is d_ + the daily hash of (project, IP, user agent), the same for every request of that visitor that day, and drives session_id', async () => {
    const expected = dailyAnonymousId(shop.projectId, IP, UA, SECRET, MONDAY);
    expect(expected).toMatch(/^d_[0-9a-f]{32}$/);
    const first = await trackedRow({ event: 'first' }, shop.pk);
    nowMs = MONDAY + 3 * 3_600_000;
    const later = await trackedRow({ event: 'later' }, shop.pk);
    expect([first.anonymous_id, later.anonymous_id]).toEqual([expected, expected]);
    expect(first.session_id).toBe(`${expected}-${Math.floor(MONDAY / BUCKET_MS)}`);
    expect(later.session_id).toBe(`${expected}-${Math.floor(nowMs / BUCKET_MS)}`);
    expect(JSON.stringify([first, later])).not.toContain(IP);
  });

  it('gives a batch of 1000 events one shared id', async () => {
    const res = await post('/v1/batch', { events: Array.from({ length: 1000 }, (_, i) => ({ event: 'bulk_daily', properties: { i } })) }, shop.pk);
    expect(res.status).toBe(202);
    const ids = await stores.events.select<{ anonymous_id: string; n: number }>(
      `SELECT anonymous_id, count() AS n FROM ${stores.events.eventsTable} WHERE project_id = {p:UUID} AND event_name = 'bulk_daily' GROUP BY anonymous_id`,
      { p: shop.projectId },
    );
    expect(ids).toEqual([{ anonymous_id: dailyAnonymousId(shop.projectId, IP, UA, SECRET, MONDAY), n: 1000 }]);
  });

  it('gives the same IP and user agent another id the next UTC day', async () => {
    const today = await trackedRow({ event: 'today' }, shop.pk);
    nowMs = MONDAY + DAY;
    const tomorrow = await trackedRow({ event: 'tomorrow' }, shop.pk);
    expect(tomorrow.anonymous_id).toBe(dailyAnonymousId(shop.projectId, IP, UA, SECRET, MONDAY + DAY));
    expect(tomorrow.anonymous_id).not.toBe(today.anonymous_id);
  });

  it('gives the same IP and user agent another id on another project the same day', async () => {
    const here = await trackedRow({ event: 'here' }, shop.pk);
    const there = await trackedRow({ event: 'there' }, other.pk);
    expect(there.anonymous_id).toMatch(/^d_[0-9a-f]{32}$/);
    expect(there.anonymous_id).not.toBe(here.anonymous_id);
  });

  it('tells visitors behind one IP apart by user agent', async () => {
    const a = await trackedRow({ event: 'ua_a' }, shop.pk);
    const b = await trackedRow({ event: 'ua_b' }, shop.pk, { ...browser, 'user-agent': `${UA} Edg/124.0` });
    expect(b.anonymous_id).not.toBe(a.anonymous_id);
  });

  it('keeps an anonymous_id the client sent, and an event with only user_id keeps an empty one', async () => {
    expect((await trackedRow({ event: 'own_id', anonymous_id: 'client-1' }, shop.pk)).anonymous_id).toBe('client-1');
    expect(await trackedRow({ event: 'user_only', user_id: 'u-1' }, shop.pk)).toMatchObject({ anonymous_id: '', user_id: 'u-1' });
  });
});

describe('anonymous_id of sk_ events that carry no ids', () => {
  it('is still a random UUID per event, whatever the IP and user agent', async () => {
    const a = await trackedRow({ event: 'server_a' }, shop.sk);
    const b = await trackedRow({ event: 'server_b' }, shop.sk);
    expect([a.anonymous_id, b.anonymous_id]).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/), expect.stringMatching(/^[0-9a-f-]{36}$/)]);
    expect(a.anonymous_id).not.toBe(b.anonymous_id);
  });
});

describe('POST /v1/identify without anonymous_id', () => {
  it('from a pk_ key binds the user to the daily visitor id its events got', async () => {
    const event = await trackedRow({ event: 'before_login' }, shop.pk);
    const res = await post('/v1/identify', { user_id: 'u-daily', traits: { plan: 'pro' } }, shop.pk);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    const [identify] = await rowsOf("project_id = {p:UUID} AND event_name = '$identify' AND user_id = 'u-daily'", { p: shop.projectId });
    expect(identify).toMatchObject({ anonymous_id: event.anonymous_id, properties: '{"plan":"pro"}' });
    expect(identify!.anonymous_id).toMatch(/^d_[0-9a-f]{32}$/);
  });

  it('from an sk_ key is 400 invalid_payload with a details message, and writes nothing', async () => {
    const res = await post('/v1/identify', { user_id: 'u-sk' }, shop.sk, {});
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_payload', details: { fieldErrors: { anonymous_id: ['required (only a pk_ key may omit it)'] } } });
    expect(await rowsOf("project_id = {p:UUID} AND user_id = 'u-sk'", { p: shop.projectId })).toEqual([]);
  });
});
