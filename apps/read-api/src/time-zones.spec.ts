import request from 'supertest';
import type { Express } from 'express';
import { buildInsights, queryInsights, readTablesOf } from '@analytics/event-store';
import { insightsBodySchema } from '@analytics/schema';
import { type Stores, openReadService } from './test-support/seeded-service';

// Issue 47, item 2 (days in the project's time zone) and item 3 (like-for-like comparison), on the API side. Events
// every 41 minutes around both DST changes of 2026 (Europe: 2026-03-29 and 2026-10-25; US: 2026-03-08 and 2026-11-01)
// go through the real ingest path into three projects (Europe/Berlin, America/Los_Angeles, Asia/Kolkata +05:30);
// insights, funnels, retention and /v1/stats with `tz` are compared with answers computed here in plain TypeScript
// from Intl's wall clock (not from the code under test).

const ZONES = ['Europe/Berlin', 'America/Los_Angeles', 'Asia/Kolkata'] as const;
type Zone = (typeof ZONES)[number];
const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const STEP = 41 * MIN;
const SPANS: Array<[number, number]> = [
  [Date.UTC(2026, 1, 27), Date.UTC(2026, 3, 3)],
  [Date.UTC(2026, 9, 20), Date.UTC(2026, 10, 5)],
];

interface Ev {
  ts: number;
  anon: string;
  name: 'a' | 'b';
}
const EVENTS: Ev[] = SPANS.flatMap(([from, to]) => {
  const out: Ev[] = [];
  for (let ts = from, i = 0; ts < to; ts += STEP, i++) out.push({ ts, anon: `v${(i * 7) % 23}`, name: i % 3 === 0 ? 'b' : 'a' });
  return out;
});

// ---- plain TypeScript: the wall clock of a zone, from Intl alone ----
const fmt = new Map<string, Intl.DateTimeFormat>();
function wall(ms: number, tz: string) {
  let f = fmt.get(tz);
  if (!f) fmt.set(tz, (f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })));
  const p = Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return { date: `${p.year}-${p.month}-${p.day}`, hour: p.hour!, minute: Number(p.minute), second: Number(p.second) };
}
const dateAdd = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);
const mondayOf = (date: string) => dateAdd(date, -((new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7));
const monthOf = (date: string) => `${date.slice(0, 7)}-01`;
/** The instant a local date begins: the first minute whose wall clock is on that date (scanning the UTC day around it). */
function midnight(date: string, tz: string): number {
  for (let t = Date.parse(`${date}T00:00:00Z`) - 15 * HOUR; ; t += 15 * MIN) if (wall(t, tz).date >= date) return t;
}
type Grain = 'hour' | 'day' | 'week' | 'month';
/** A bucket's key (sorts as its start) and label ("YYYY-MM-DD HH:MM:SS", the local wall clock). */
function bucketOf(ms: number, tz: string, grain: Grain): { key: string; label: string } {
  const w = wall(ms, tz);
  if (grain === 'hour') {
    const start = ms - w.minute * MIN - w.second * 1000 - (ms % 1000);
    return { key: String(start).padStart(15, '0'), label: `${w.date} ${w.hour}:00:00` };
  }
  const date = grain === 'day' ? w.date : grain === 'week' ? mondayOf(w.date) : monthOf(w.date);
  return { key: date, label: `${date} 00:00:00` };
}

function expectedBuckets(tz: string, from: number, to: number, grain: Grain) {
  const groups = new Map<string, { label: string; events: number; anons: Set<string> }>();
  for (const e of EVENTS) {
    if (e.ts < from || e.ts >= to) continue;
    const { key, label } = bucketOf(e.ts, tz, grain);
    const g = groups.get(key) ?? { label, events: 0, anons: new Set<string>() };
    g.events++;
    g.anons.add(e.anon);
    groups.set(key, g);
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, g]) => ({ [`time:${grain}`]: g.label, events: g.events, visitors: g.anons.size }));
}

let stores: Stores, ingestApp: Express, readApp: Express;
const rk = {} as Record<Zone | 'utc', string>;
const ids = {} as Record<Zone | 'utc', string>;

beforeAll(async () => {
  ({ stores, ingestApp, readApp } = await openReadService());
  for (const tz of [...ZONES, 'utc'] as const) {
    const created = await stores.keyStore.createProject({ name: tz, allowed_origins: [], ...(tz === 'utc' ? {} : { timezone: tz }) });
    rk[tz] = created.keys.rk;
    ids[tz] = created.project.id;
    for (let i = 0; i < EVENTS.length; i += 500) {
      const events = EVENTS.slice(i, i + 500).map((e) => ({ event: e.name, anonymous_id: e.anon, timestamp: new Date(e.ts).toISOString() }));
      const res = await request(ingestApp).post('/v1/batch').set('authorization', `Bearer ${created.keys.sk}`).send({ events });
      if (res.status !== 202) throw new Error(`ingest failed: ${res.status} ${JSON.stringify(res.body)}`);
    }
  }
}, 120_000);
afterAll(() => stores.close());

const post = async (who: Zone | 'utc', path: string, body: object) => {
  const res = await request(readApp).post(path).set('authorization', `Bearer ${rk[who]}`).send(body);
  expect({ status: res.status, error: res.body.error, details: res.body.details }).toMatchObject({ status: 200 });
  return res.body;
};
const get = async (who: Zone | 'utc', path: string, query: Record<string, string>) => {
  const res = await request(readApp).get(path).set('authorization', `Bearer ${rk[who]}`).query(query);
  return res;
};

// Date-only ranges per zone, each across its DST changes (a day of 23 or 25 hours inside).
const RANGES: Record<Zone, Array<[string, string]>> = {
  'Europe/Berlin': [['2026-03-28', '2026-03-31'], ['2026-10-24', '2026-10-27'], ['2026-03-02', '2026-04-01']],
  'America/Los_Angeles': [['2026-03-07', '2026-03-10'], ['2026-10-31', '2026-11-03'], ['2026-03-01', '2026-04-01']],
  'Asia/Kolkata': [['2026-03-28', '2026-03-31'], ['2026-10-24', '2026-11-02']],
};

describe('GET /v1/project', () => {
  it("answers the key's project with its time zone (UTC by default)", async () => {
    for (const who of [...ZONES, 'utc'] as const) {
      const res = await get(who, '/v1/project', {});
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ project: { id: ids[who], name: who, timezone: who === 'utc' ? 'UTC' : who } });
    }
  });
});

describe('insights in the project time zone', () => {
  for (const tz of ZONES) {
    for (const [fromDate, toDate] of RANGES[tz]) {
      it(`${tz} ${fromDate}..${toDate}: date-only range at local midnights, day/week/month/hour buckets exact across DST`, async () => {
        const from = midnight(fromDate, tz);
        const to = midnight(toDate, tz);
        for (const grain of ['day', 'week', 'month', 'hour'] as const) {
          const request = { from: fromDate, to: toDate, metrics: ['events', 'visitors'], dimensions: [`time:${grain}`], order_by: [[`time:${grain}`, 'asc']], limit: 10_000 };
          // read from quarter_hours (migration 017) and the range's edges, not from every event
          expect(buildInsights(readTablesOf(stores.events), ids[tz], insightsBodySchema.parse(request), { timezone: tz }).sql).toMatch(/FROM \w+\.quarter_hours\n/);
          const body = await post(tz, '/v1/insights', request);
          expect({ grain, rows: body.rows }).toEqual({ grain, rows: expectedBuckets(tz, from, to, grain) });
        }
        // Totals: the range is exactly [local midnight, local midnight).
        const totals = await post(tz, '/v1/insights', { from: fromDate, to: toDate, metrics: ['events'] });
        expect(totals.rows).toEqual([{ events: EVENTS.filter((e) => e.ts >= from && e.ts < to).length }]);
      });
    }
  }

  it.each(ZONES)('%s: day and hour buckets with compare: the previous period moved forward by the span, across DST', async (tz) => {
    for (const [fromDate, toDate] of RANGES[tz]) {
      const from = midnight(fromDate, tz);
      const to = midnight(toDate, tz);
      const span = to - from;
      for (const grain of ['day', 'hour'] as const) {
        // per bucket (keyed by its start: the repeated hour of a fall-back is two buckets of one label), the current
        // period's events and the previous period's moved forward by the span
        const buckets = new Map<string, { label: string; cur: Ev[]; prev: Ev[] }>();
        for (const e of EVENTS) {
          const period = e.ts >= from && e.ts < to ? 'cur' : e.ts >= from - span && e.ts < from ? 'prev' : undefined;
          if (!period) continue;
          const { key, label } = bucketOf(period === 'cur' ? e.ts : e.ts + span, tz, grain);
          const g = buckets.get(key) ?? { label, cur: [], prev: [] };
          g[period].push(e);
          buckets.set(key, g);
        }
        const expected = [...buckets.entries()]
          .filter(([, g]) => g.cur.length > 0)
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([, g]) => ({ [`time:${grain}`]: g.label, events: g.cur.length, visitors: new Set(g.cur.map((e) => e.anon)).size, comparison: { events: g.prev.length, visitors: new Set(g.prev.map((e) => e.anon)).size } }));
        const body = await post(tz, '/v1/insights', { from: fromDate, to: toDate, metrics: ['events', 'visitors'], dimensions: [`time:${grain}`], order_by: [[`time:${grain}`, 'asc']], compare: 'previous_period', limit: 10_000 });
        expect({ fromDate, grain, rows: body.rows }).toEqual({ fromDate, grain, rows: expected });
      }
    }
  });

  it('the DST days are 23 and 25 hours long in Berlin: hour buckets of 2026-03-29 and 2026-10-25', async () => {
    const spring = await post('Europe/Berlin', '/v1/insights', { from: '2026-03-29', to: '2026-03-30', metrics: ['events'], dimensions: ['time:hour'], limit: 100 });
    const fall = await post('Europe/Berlin', '/v1/insights', { from: '2026-10-25', to: '2026-10-26', metrics: ['events'], dimensions: ['time:hour'], limit: 100 });
    expect(spring.rows).toHaveLength(23);
    expect(spring.rows.some((r: Record<string, string>) => r['time:hour'] === '2026-03-29 02:00:00')).toBe(false);
    expect(fall.rows).toHaveLength(25);
    // The repeated hour 02:00 (CEST, then CET) is two buckets with the same wall-clock label.
    expect(fall.rows.filter((r: Record<string, string>) => r['time:hour'] === '2026-10-25 02:00:00')).toHaveLength(2);
  });

  it('a range with a time is the instant it names, whatever the zone; a UTC project answers as before', async () => {
    const from = '2026-03-29T00:00:00Z';
    const to = '2026-03-30T00:00:00Z';
    const [a, b] = [Date.parse(from), Date.parse(to)];
    const expected = EVENTS.filter((e) => e.ts >= a && e.ts < b).length;
    for (const who of ['Europe/Berlin', 'utc'] as const) expect((await post(who, '/v1/insights', { from, to, metrics: ['events'] })).rows).toEqual([{ events: expected }]);
    // UTC: date-only is the UTC midnight, buckets UTC days.
    const utc = await post('utc', '/v1/insights', { from: '2026-03-28', to: '2026-03-31', metrics: ['events', 'visitors'], dimensions: ['time:day'], order_by: [['time:day', 'asc']] });
    expect(utc.rows).toEqual(expectedBuckets('UTC', Date.UTC(2026, 2, 28), Date.UTC(2026, 2, 31), 'day'));
  });
});

describe('funnels and retention in the project time zone', () => {
  /** Entities reaching step 1 (a) and step 2 (b at or after an a, within the window) in [from, to). */
  function expectedFunnel(from: number, to: number, windowMs: number) {
    const by = new Map<string, Ev[]>();
    for (const e of EVENTS) if (e.ts >= from && e.ts < to) by.set(e.anon, [...(by.get(e.anon) ?? []), e]);
    let one = 0;
    let two = 0;
    for (const evs of by.values()) {
      const as = evs.filter((e) => e.name === 'a');
      if (as.length === 0) continue;
      one++;
      if (as.some((a) => evs.some((b) => b.name === 'b' && b.ts >= a.ts && b.ts <= a.ts + windowMs))) two++;
    }
    return [one, two];
  }

  for (const tz of ZONES) {
    it(`${tz}: a funnel over a date-only range counts the local days`, async () => {
      const [fromDate, toDate] = RANGES[tz][0]!;
      const body = await post(tz, '/v1/funnel', { from: fromDate, to: toDate, steps: [{ event: 'a' }, { event: 'b' }], window_s: 3600, count_by: 'visitor' });
      expect(body.steps.map((s: { count: number }) => s.count)).toEqual(expectedFunnel(midnight(fromDate, tz), midnight(toDate, tz), 3_600_000));
    });

    for (const period of ['day', 'week', 'month'] as const) {
      it(`${tz}: retention cohorts by local ${period}`, async () => {
        const [fromDate, toDate] = period === 'day' ? RANGES[tz][0]! : ['2026-03-02', '2026-04-01'];
        const from = midnight(fromDate, tz);
        const to = midnight(toDate, tz);
        const periodOf = (ms: number) => bucketOf(ms, tz, period).key;
        const firsts = new Map<string, string>();
        const seen = new Map<string, Set<string>>();
        for (const e of EVENTS) {
          if (e.ts < from || e.ts >= to) continue;
          if (!firsts.has(e.anon)) firsts.set(e.anon, periodOf(e.ts));
          seen.set(e.anon, (seen.get(e.anon) ?? new Set<string>()).add(periodOf(e.ts)));
        }
        const next = (p: string) => (period === 'day' ? dateAdd(p, 1) : period === 'week' ? dateAdd(p, 7) : monthOf(dateAdd(p, 32)));
        const cohorts = new Map<string, { cohort: string; size: number; returned: number[] }>();
        for (const [anon, cohort] of [...firsts.entries()].sort(([, a], [, b]) => (a < b ? -1 : 1))) {
          let c = cohorts.get(cohort);
          if (!c) {
            const starts: string[] = [];
            for (let p = cohort; midnight(p, tz) < to; p = next(p)) starts.push(p);
            cohorts.set(cohort, (c = { cohort, size: 0, returned: starts.map(() => 0) }));
          }
          c.size++;
          let k = 0;
          for (let p = cohort; k < c.returned.length; p = next(p), k++) if (seen.get(anon)!.has(p)) c.returned[k]!++;
        }
        const body = await post(tz, '/v1/retention', { from: fromDate, to: toDate, period, count_by: 'visitor' });
        expect(body.cohorts).toEqual([...cohorts.values()]);
      });
    }
  }
});

describe('GET /v1/stats and /v1/sources with tz', () => {
  it('buckets and date-only ranges in tz; without tz the UTC answer is unchanged', async () => {
    for (const tz of ZONES) {
      const [fromDate, toDate] = RANGES[tz][0]!;
      for (const interval of ['hour', 'day', 'week'] as const) {
        const res = await get('utc', '/v1/stats', { from: fromDate, to: toDate, interval, tz, limit: '1000' });
        expect(res.status).toBe(200);
        const expected = expectedBuckets(tz, midnight(fromDate, tz), midnight(toDate, tz), interval).map((r) => ({ bucket: r[`time:${interval}`], value: r.events }));
        expect({ tz, interval, rows: res.body.rows }).toEqual({ tz, interval, rows: expected });
      }
    }
    const utc = await get('utc', '/v1/stats', { from: '2026-03-28', to: '2026-03-31', interval: 'day' });
    const explicit = await get('utc', '/v1/stats', { from: '2026-03-28', to: '2026-03-31', interval: 'day', tz: 'UTC' });
    const expected = expectedBuckets('UTC', Date.UTC(2026, 2, 28), Date.UTC(2026, 2, 31), 'day').map((r) => ({ bucket: r['time:day'], value: r.events }));
    expect(utc.body.rows).toEqual(expected);
    expect(explicit.body.rows).toEqual(expected);
  });

  it('sources: a date-only range in tz reads the sessions that began in those local days', async () => {
    const inTz = await get('utc', '/v1/sources', { from: '2026-03-29', to: '2026-03-30', tz: 'Asia/Kolkata' });
    const asInstants = await get('utc', '/v1/sources', { from: new Date(midnight('2026-03-29', 'Asia/Kolkata')).toISOString(), to: new Date(midnight('2026-03-30', 'Asia/Kolkata')).toISOString() });
    expect(inTz.status).toBe(200);
    expect(inTz.body).toEqual(asInstants.body);
  });

  it('an unknown tz is 400 invalid_params', async () => {
    for (const tz of ['Mars/Olympus', 'CET+1', 'europe/berlin', '']) {
      const res = await get('utc', '/v1/stats', { from: '2026-03-28', to: '2026-03-31', tz });
      expect({ tz, status: res.status, error: res.body.error }).toEqual({ tz, status: 400, error: 'invalid_params' });
    }
  });
});

describe('compare: like for like (item 3)', () => {
  const count = (from: number, to: number) => EVENTS.filter((e) => e.ts >= from && e.ts < to).length;

  it('a past range compares the whole previous period and names it in compare_range', async () => {
    const body = await post('utc', '/v1/insights', { from: '2026-03-10', to: '2026-03-12', metrics: ['events'], compare: 'previous_period' });
    const [from, to] = [Date.UTC(2026, 2, 10), Date.UTC(2026, 2, 12)];
    expect(body).toEqual({ rows: [{ events: count(from, to), comparison: { events: count(from - (to - from), from) } }], compare_range: { from: '2026-03-08T00:00:00.000Z', to: '2026-03-10T00:00:00.000Z' } });
  });

  it('a range that includes now compares the previous period cut to the elapsed length (an injected clock)', async () => {
    for (const [who, tz] of [['utc', 'UTC'], ['Europe/Berlin', 'Europe/Berlin'], ['Asia/Kolkata', 'Asia/Kolkata']] as const) {
      const from = midnight('2026-03-30', tz);
      const now = from + 14 * HOUR + 5 * MIN;
      const to = midnight('2026-03-31', tz);
      const span = to - from;
      const q = insightsBodySchema.parse({ from: '2026-03-30', to: '2026-03-31', metrics: ['events'], dimensions: ['time:hour'], compare: 'previous_period', limit: 1000 });
      const answer = await queryInsights(stores.events, ids[who], q, { timezone: tz, now });
      expect(answer.compare_range).toEqual({ from: new Date(from - span).toISOString(), to: new Date(from - span + (now - from)).toISOString() });
      const totals = await queryInsights(stores.events, ids[who], { ...q, dimensions: [], order_by: undefined }, { timezone: tz, now });
      expect(totals.rows).toEqual([{ events: count(from, to), comparison: { events: count(from - span, from - span + (now - from)) } }]);
      // Per hour bucket: the previous period's events land in the bucket one span later; none after now's hour.
      const shifted = new Map<string, number>();
      for (const e of EVENTS) if (e.ts >= from - span && e.ts < from - span + (now - from)) shifted.set(bucketOf(e.ts + span, tz, 'hour').label, (shifted.get(bucketOf(e.ts + span, tz, 'hour').label) ?? 0) + 1);
      for (const row of answer.rows as Array<Record<string, unknown>>) expect((row.comparison as { events: number }).events).toBe(shifted.get(row['time:hour'] as string) ?? 0);
      // A clock past the range: not cut.
      const later = await queryInsights(stores.events, ids[who], { ...q, dimensions: [], order_by: undefined }, { timezone: tz, now: to + 1 });
      expect(later.compare_range).toEqual({ from: new Date(from - span).toISOString(), to: new Date(from).toISOString() });
      expect(later.rows).toEqual([{ events: count(from, to), comparison: { events: count(from - span, from) } }]);
    }
  });
});
