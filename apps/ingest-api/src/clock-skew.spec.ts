import request from 'supertest';
import type { Express } from 'express';
import { IngestService } from '@analytics/ingest';
import { openTestStores, silentLogger, contractChecked } from '@analytics/testing';
import { buildApp } from './app';

// A browser whose clock is wrong stamps its events wrong: POST /v1/batch's additive `sent_at` (the same clock, at the
// send) lets the server move that batch's timestamps to its own clock. The server's clock here stands at NOW.
type Stores = Awaited<ReturnType<typeof openTestStores>>;
const NOW = Date.UTC(2026, 10, 28, 12, 0, 0, 0);
const SECOND = 1000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();

let stores: Stores;
let app: Express;
let sk: string;
let projectId: string;

beforeAll(async () => {
  stores = await openTestStores();
  const ingest = new IngestService({ store: stores.events, limiter: stores.limiter, rateRules: { track: { ratePerS: 1000, burst: 1000 }, batch: { ratePerS: 1000, burst: 1000 } } });
  app = contractChecked(buildApp({ logger: silentLogger, authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: 'test-secret', clock: () => NOW })).app;
  const p = await stores.keyStore.createProject({ name: 'skew', allowed_origins: [] });
  sk = p.keys.sk;
  projectId = p.project.id;
});
afterAll(() => stores.close());

let n = 0;
/** Sends a batch of events stamped `stamps` (ms; undefined: no timestamp) and returns the stored timestamps, in the order sent. */
async function stored(stamps: Array<number | undefined>, sentAt?: unknown): Promise<number[]> {
  const id = `b${++n}`;
  const events = stamps.map((t, i) => ({ event: 'e', event_id: `${id}-${i}`, anonymous_id: 'a', ...(t === undefined ? {} : { timestamp: iso(t) }) }));
  const res = await request(app).post('/v1/batch').set('authorization', `Bearer ${sk}`).send({ events, ...(sentAt === undefined ? {} : { sent_at: sentAt }) });
  expect(res.status).toBe(202);
  const rows = await stores.events.select<{ event_id: string; ms: string }>(
    `SELECT event_id, toUnixTimestamp64Milli(timestamp) AS ms FROM ${stores.events.eventsTable} WHERE project_id = {p:UUID} AND startsWith(event_id, {id:String})`,
    { p: projectId, id: `${id}-` },
  );
  return stamps.map((_, i) => Number(rows.find((r) => r.event_id === `${id}-${i}`)!.ms));
}

describe('POST /v1/batch with sent_at (a device clock off by more than 5 s)', () => {
  it.each([
    ['an hour ahead', HOUR],
    ['a day ahead', DAY],
    ['an hour behind', -HOUR],
    ['a day behind', -DAY],
  ])('moves every sent timestamp of a device %s to the server clock, keeping their spacing', async (_, off) => {
    // Events of the last 30 s by the device's clock, sent now by the same clock.
    const got = await stored([NOW + off - 30 * SECOND, NOW + off - 2 * SECOND, NOW + off - 1], iso(NOW + off));
    expect(got).toEqual([NOW - 30 * SECOND, NOW - 2 * SECOND, NOW - 1]);
  });

  it('gives an event without a timestamp the arrival time, as without sent_at', async () => {
    expect(await stored([undefined, NOW + DAY - SECOND], iso(NOW + DAY))).toEqual([NOW, NOW - SECOND]);
  });

  it('keeps the timestamps exactly as sent when sent_at is within 5 s of the arrival (the network, not the clock)', async () => {
    const stamps = [NOW - 10 * SECOND, NOW - 4 * SECOND];
    expect(await stored(stamps, iso(NOW - 5 * SECOND))).toEqual(stamps);
    expect(await stored(stamps, iso(NOW + 5 * SECOND))).toEqual(stamps);
  });

  it('keeps the timestamps exactly as sent without sent_at (the spec), even an hour or a day in the future', async () => {
    const stamps = [NOW + HOUR, NOW + DAY, NOW - DAY];
    expect(await stored(stamps)).toEqual(stamps);
    expect(await stored(stamps, null)).toEqual(stamps);
  });

  it('refuses a sent_at that is not ISO 8601 with 400 invalid_payload naming it, writing nothing', async () => {
    for (const sentAt of ['yesterday', 12345, '2026-13-01T00:00:00Z']) {
      const res = await request(app).post('/v1/batch').set('authorization', `Bearer ${sk}`).send({ events: [{ event: 'never', anonymous_id: 'a' }], sent_at: sentAt });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_payload', details: { fieldErrors: { sent_at: [expect.any(String)] } } });
    }
    const never = await stores.events.select<{ c: string }>(`SELECT count() AS c FROM ${stores.events.eventsTable} WHERE project_id = {p:UUID} AND event_name = 'never'`, { p: projectId });
    expect(Number(never[0]!.c)).toBe(0);
  });
});
