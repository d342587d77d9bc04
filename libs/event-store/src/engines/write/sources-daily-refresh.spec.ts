import { randomUUID } from 'node:crypto';
import { insightsBodySchema, sourcesParamsSchema } from '@analytics/schema';
import type { EventStore } from '../../event-store';
import { useTestStore } from '../../test-support/test-store';
import { forgetUser } from '../maintenance/forget';
import { readTablesOf } from '../../tables/read-tables';
import { buildSources, planSourceDays, querySources } from '../../queries/sources.query';
import { buildInsights, freshVisitDays, queryInsights } from '../../queries/insights.query';
import { testRow as row } from '../../test-support/test-rows';

// Real chDB. The builder's own timer ticks once a minute: the tests drive builds and refreshes themselves, and a day
// is refreshed again only when the test asks for all (refresh interval one hour).
let store: EventStore;
useTestStore((opened) => ({ store } = opened), { aggregateIntervalMs: 60_000, sourcesRefreshMs: 3_600_000 });

const DAY = 86_400_000;
const MIN = 60_000;
const D0 = Date.UTC(2031, 1, 26); // the range crosses a month boundary (two partitions)
const iso = (ms: number) => new Date(ms).toISOString();
const params = (from: number, to: number, breakdown = 'source_medium') => sourcesParamsSchema.parse({ from: iso(from), to: iso(to), breakdown, limit: 200 });

/** The same request answered from `sessions` alone (the path a server and sub-day ranges take). */
async function fromSessions(p: string, from: number, to: number, breakdown = 'source_medium') {
  const q = buildSources(readTablesOf(store), p, params(from, to, breakdown));
  const rows = await store.select<Record<string, string | number>>(q.sql, q.params);
  return rows.map((r) => ({ source: r.source, ...(breakdown === 'source_medium' ? { medium: r.medium } : {}), events: Number(r.events), uniques: Number(r.uniques), paid_share: Number(r.paid_share) }));
}

const days = (p: string, from: number, to: number) => planSourceDays(store, readTablesOf(store), p, params(from, to));

/** Every whole-day range within [D0, D0 + 6 days), both breakdowns: sources_daily + sessions == sessions alone. */
async function expectAllRangesAgree(p: string) {
  for (let a = 0; a < 6; a++) {
    for (let b = a + 1; b <= 6; b++) {
      for (const breakdown of ['source_medium', 'source']) {
        const from = D0 + a * DAY;
        const to = D0 + b * DAY;
        expect({ a, b, breakdown, rows: (await querySources(store, p, params(from, to, breakdown))).rows }).toEqual({ a, b, breakdown, rows: await fromSessions(p, from, to, breakdown) });
      }
    }
  }
}

describe('sources_daily (GET /v1/sources per day, embedded store)', () => {
  const p = randomUUID();
  const visit = (session: string, anon: string, at: number, source: string, medium: string, extra: Record<string, unknown> = {}) =>
    row(p, { at, session_id: session, anonymous_id: anon, source, medium, ...extra });

  beforeAll(async () => {
    await store.insertRows([
      // a session across midnight (day 0 -> 1): counted on day 0 with both events, under its first event's source
      visit('s-mid', 'v1', D0 + DAY - 5 * MIN, 'google', 'organic'),
      visit('s-mid', 'v1', D0 + DAY + 5 * MIN, 'facebook', 'paid'),
      // plain sessions on days 1..4, some visitors twice
      ...[1, 2, 3, 4].flatMap((d) => [
        visit(`s-a${d}`, `v${d}`, D0 + d * DAY + 3_600_000, 'google', 'paid'),
        visit(`s-a${d}`, `v${d}`, D0 + d * DAY + 3_700_000, 'google', 'paid'),
        visit(`s-b${d}`, 'v1', D0 + d * DAY + 7_200_000, 'newsletter', 'email'),
        visit(`s-c${d}`, '', D0 + d * DAY + 9_000_000, 'direct', 'direct', { user_id: `u-${d}` }),
      ]),
    ]);
    expect(await store.refreshSources(true)).toBeGreaterThan(0);
  });

  it('answers every whole-day range from fresh days exactly as from sessions alone', async () => {
    expect(await days(p, D0, D0 + 6 * DAY)).toEqual({ fresh: ['2031-02-26', '2031-02-27', '2031-02-28', '2031-03-01', '2031-03-02', '2031-03-03'], stale: [], weeks: [], unmerged: [] });
    await expectAllRangesAgree(p);
    const all = await querySources(store, p, params(D0, D0 + 6 * DAY));
    expect(all.rows.find((r) => r.source === 'google' && r.medium === 'organic')).toEqual({ source: 'google', medium: 'organic', events: 2, uniques: 1, paid_share: 0 });
  });

  it('a late event makes its day and both neighbours stale; reads compute them until the next refresh', async () => {
    // s-a3 gets an earlier first event from bing/cpc on day 3: its entry moves, google/paid loses a session on day 3
    await store.insertRows([visit('s-a3', 'v3', D0 + 3 * DAY + 60_000, 'bing', 'cpc')]);
    expect(await days(p, D0, D0 + 6 * DAY)).toEqual({ fresh: ['2031-02-26', '2031-02-27', '2031-03-03'], stale: ['2031-02-28', '2031-03-01', '2031-03-02'], weeks: [], unmerged: [] });
    await expectAllRangesAgree(p);
    const day3 = await querySources(store, p, params(D0 + 3 * DAY, D0 + 4 * DAY));
    expect(day3.rows.find((r) => r.source === 'bing')).toEqual({ source: 'bing', medium: 'cpc', events: 3, uniques: 1, paid_share: 0 });
    expect(store.sourcesDaily!.pending).toBeGreaterThan(0);
  });

  it('a refresh replaces a day whole: the group that lost its only session is gone (tombstone), not left at its old count', async () => {
    // s-b2's newsletter session on day 2 moves to day 1 (an earlier event arrives for it): day 2 loses newsletter/email
    await store.insertRows([visit('s-b2', 'v1', D0 + DAY + 20 * 3_600_000, 'twitter', 'social')]);
    await store.refreshSources(true);
    expect((await days(p, D0, D0 + 6 * DAY)).stale).toEqual([]);
    await expectAllRangesAgree(p);
    const day2 = await querySources(store, p, params(D0 + 2 * DAY, D0 + 3 * DAY));
    expect(day2.rows.map((r) => `${r.source}/${r.medium}`).sort()).toEqual(['direct/direct', 'google/paid']);
    const raw = await store.select<{ n: string }>(`SELECT count() AS n FROM ${store.db}.sources_daily FINAL WHERE project_id = {p:UUID} AND day = '2031-02-28' AND events = 0`, { p });
    expect(Number(raw[0]!.n)).toBe(1); // the tombstone of newsletter/email
  });

  it('forgetting a user rewrites neither sessions nor sources_daily (aggregates are not rewritten by deletes)', async () => {
    const before = await querySources(store, p, params(D0, D0 + 6 * DAY));
    await forgetUser(store, p, 'u-2');
    await store.refreshSources(true);
    expect(await querySources(store, p, params(D0, D0 + 6 * DAY))).toEqual(before);
  });

  it('answers ranges not on UTC midnights from sessions alone, and an empty range with no rows', async () => {
    const from = D0 + DAY + 3_600_000;
    const to = D0 + 3 * DAY + 3_600_000;
    expect((await querySources(store, p, params(from, to))).rows).toEqual(await fromSessions(p, from, to));
    expect(await days(p, D0 + 30 * DAY, D0 + 40 * DAY)).toEqual({ fresh: [], stale: [], weeks: [], unmerged: [] });
    expect((await querySources(store, p, params(D0 + 30 * DAY, D0 + 40 * DAY))).rows).toEqual([]);
  });

  it('another project sees none of it', async () => {
    expect((await querySources(store, randomUUID(), params(D0, D0 + 6 * DAY))).rows).toEqual([]);
  });
});

describe('sources_weekly (whole ISO weeks merged from sources_daily, embedded store)', () => {
  const p = randomUUID();
  const W0 = Date.UTC(2025, 0, 6); // a Monday, over (the keeper merges a week once it and the day after it are over)
  const weeks = ['2025-01-06', '2025-01-13', '2025-01-20'];
  const visit = (session: string, anon: string, at: number, source: string, medium: string) => row(p, { at, session_id: session, anonymous_id: anon, source, medium });
  /** Whole-day ranges within the 3 weeks, both breakdowns: weeks + days + sessions == sessions alone. */
  async function expectRangesAgree() {
    for (const [a, b] of [[0, 7], [0, 21], [1, 21], [0, 8], [6, 14], [7, 14], [3, 17], [13, 21], [2, 5]]) {
      for (const breakdown of ['source_medium', 'source']) {
        const from = W0 + a! * DAY;
        const to = W0 + b! * DAY;
        expect({ a, b, breakdown, rows: (await querySources(store, p, params(from, to, breakdown))).rows }).toEqual({ a, b, breakdown, rows: await fromSessions(p, from, to, breakdown) });
      }
    }
  }

  beforeAll(async () => {
    await store.insertRows([
      // Sunday 23:55 -> Monday 00:05: a session of week 0's Sunday, its second event in week 1
      visit('s-sun', 'v1', W0 + 7 * DAY - 5 * MIN, 'google', 'organic'),
      visit('s-sun', 'v1', W0 + 7 * DAY + 5 * MIN, 'facebook', 'paid'),
      // sessions on most days of the 3 weeks, the same visitors again and again (the sketches merge, not add)
      ...Array.from({ length: 21 }, (_, d) => d).filter((d) => d % 5 !== 4).flatMap((d) => [
        visit(`s-a${d}`, `v${d % 3}`, W0 + d * DAY + 3_600_000, 'google', 'paid'),
        visit(`s-b${d}`, `v${d % 4}`, W0 + d * DAY + 7_200_000, d < 10 ? 'newsletter' : 'twitter', d < 10 ? 'email' : 'social'),
      ]),
    ]);
    await store.refreshSources(true);
  });

  it('reads every whole week of a range from sources_weekly once its days are refreshed, exactly as sessions alone answer', async () => {
    expect(await days(p, W0, W0 + 21 * DAY)).toEqual({ fresh: [], stale: [], weeks, unmerged: [] });
    expect((await days(p, W0 + DAY, W0 + 21 * DAY)).weeks).toEqual(weeks.slice(1));
    await expectRangesAgree();
    // one row per (week, source, medium) as FINAL reads it: twitter/social only in weeks 1 and 2
    const rows = await store.select<{ d: string; n: string }>(`SELECT toString(day) AS d, count() AS n FROM ${store.db}.sources_weekly FINAL WHERE project_id = {p:UUID} AND events > 0 GROUP BY day ORDER BY day`, { p });
    expect(rows.map((r) => [r.d, Number(r.n)])).toEqual([['2025-01-06', 3], ['2025-01-13', 3], ['2025-01-20', 2]]);
  });

  it('a late event makes its week unreadable until the week is merged again; reads take its days meanwhile', async () => {
    // s-a2 (week 0, Wednesday) gets an earlier first event from bing/cpc: week 0's Tuesday to Thursday are stale
    await store.insertRows([visit('s-a2', 'v2', W0 + 2 * DAY + 60_000, 'bing', 'cpc')]);
    const stale = await days(p, W0, W0 + 21 * DAY);
    expect(stale.weeks).toEqual(weeks.slice(1));
    expect(stale.stale).toEqual(['2025-01-07', '2025-01-08', '2025-01-09']);
    await expectRangesAgree();
    await store.refreshSources(true);
    expect(await days(p, W0, W0 + 21 * DAY)).toEqual({ fresh: [], stale: [], weeks, unmerged: [] });
    await expectRangesAgree();
    const week0 = await querySources(store, p, params(W0, W0 + 7 * DAY));
    expect(week0.rows.find((r) => r.source === 'bing')).toEqual({ source: 'bing', medium: 'cpc', events: 2, uniques: 1, paid_share: 0 });
  });

  it('a week whose days were refreshed after it was merged is read day by day and told to the keeper, which merges it again', async () => {
    // As after a restart that lost the keeper's list: week 1's Wednesday refreshed at a newer seq than the week's.
    const seq = (await store.select<{ seq: string }>(`SELECT max(built_seq) AS seq FROM ${store.db}.sources_daily_days WHERE project_id = {p:UUID}`, { p }))[0]!.seq;
    await store.command(`INSERT INTO ${store.db}.sources_daily_days (project_id, day, built_seq) VALUES ({p:UUID}, '2025-01-15', {s:UInt64})`, { p, s: Number(seq) + 1 });
    const plan = await days(p, W0, W0 + 21 * DAY);
    expect(plan.weeks).toEqual(['2025-01-06', '2025-01-20']);
    expect(plan.unmerged).toEqual(['2025-01-13']);
    expect(plan.fresh).toHaveLength(7);
    await expectRangesAgree(); // querySources tells the keeper
    await store.refreshSources(true);
    expect((await days(p, W0, W0 + 21 * DAY)).weeks).toEqual(weeks);
    await expectRangesAgree();
  });

  it('leaves a week that is not over to sources_daily (a week of 2031 here), and reads it day by day, exactly', async () => {
    const q = randomUUID();
    const monday = Date.UTC(2031, 2, 3);
    await store.insertRows(Array.from({ length: 7 }, (_, d) => row(q, { at: monday + d * DAY + 60_000, session_id: `w-${d}`, anonymous_id: `w-${d % 2}`, source: 'google', medium: 'organic' })));
    await store.refreshSources(true);
    const plan = await days(q, monday, monday + 7 * DAY);
    expect(plan).toEqual({ fresh: ['2031-03-03', '2031-03-04', '2031-03-05', '2031-03-06', '2031-03-07', '2031-03-08', '2031-03-09'], stale: [], weeks: [], unmerged: ['2031-03-03'] });
    expect((await querySources(store, q, params(monday, monday + 7 * DAY))).rows).toEqual([{ source: 'google', medium: 'organic', events: 7, uniques: 2, paid_share: 0 }]);
    await store.refreshSources(true);
    expect((await days(q, monday, monday + 7 * DAY)).weeks).toEqual([]);
  });
});

describe('visit_dims (migration 018: visits read whole, summed per day and visit dimension)', () => {
  const p = randomUUID();
  const D1 = Date.UTC(2031, 4, 5);
  const bucket = (t: number) => Math.floor(t / 1_800_000);
  /** A visit of the server's form (`<visitor>-<bucket of its first event>`), its events at `times`. */
  const visit = (anon: string, times: number[], source: string, paths: Array<string | null>) =>
    times.map((at, i) => row(p, { at, session_id: `${anon}-${bucket(times[0]!)}`, anonymous_id: anon, source, medium: source === 'direct' ? 'direct' : 'organic', path: paths[i % paths.length]!, event_name: i === 1 ? 'signup' : '$pageview' }));
  const q = (body: Record<string, unknown>) => insightsBodySchema.parse({ from: iso(D1), to: iso(D1 + 5 * DAY), limit: 100, ...body });
  const BODIES = [
    { metrics: ['visitors', 'visits', 'bounce_rate', 'visit_duration', 'views_per_visit', 'events', 'pageviews'] },
    { metrics: ['visitors', 'visits', 'bounce_rate'], dimensions: ['source'], compare: 'previous_period' },
    { metrics: ['visits', 'visit_duration'], dimensions: ['entry_path'], filters: [['is_not', 'entry_path', ['/b']]] },
    { metrics: ['visits', 'views_per_visit'], dimensions: ['exit_path'], to: iso(D1 + 3 * DAY) },
    { metrics: ['visitors', 'visits'], filters: [['is', 'source', ['google']]], from: iso(D1 + DAY + 3_600_000) },
  ];
  /** Each body's statement with `visitDays` read from visit_dims, and without (every visit from `visits`): the same rows. */
  const expectSame = async (visitDays: (body: ReturnType<typeof q>) => Promise<string[] | undefined>) => {
    for (const body of BODIES) {
      const query = q(body);
      const days = await visitDays(query);
      const read = (options: { visitDays?: string[] }) => {
        const { sql, params: bound } = buildInsights(readTablesOf(store), p, query, options);
        return store.select<Record<string, unknown>>(sql, bound);
      };
      expect({ body, rows: await read({ visitDays: days }) }).toEqual({ body, rows: await read({}) });
    }
  };

  beforeAll(async () => {
    await store.insertRows([
      ...[0, 1, 2, 3, 4].flatMap((d) => [
        ...visit(`a${d}`, [D1 + d * DAY + 3_600_000, D1 + d * DAY + 3_660_000, D1 + d * DAY + 3_900_000], 'google', ['/a', null, '/b']),
        ...visit(`b${d}`, [D1 + d * DAY + 7_200_000], 'direct', ['/b']),
        ...visit('c', [D1 + d * DAY + 10_000_000, D1 + d * DAY + 10_100_000], 'bing', ['/c', '/a']),
      ]),
      // past midnight on one id (listed on day 2), and a client's own id on day 3
      ...visit('m', [D1 + 2 * DAY - 600_000, D1 + 2 * DAY + 600_000], 'google', ['/a', '/c']),
      row(p, { at: D1 + 3 * DAY + 60_000, session_id: 'client-1', anonymous_id: 'k', source: 'google', medium: 'organic', path: '/a' }),
    ]);
    expect(await store.refreshSources(true)).toBeGreaterThan(0);
  });

  it('holds every fresh day, and reads any of them as the visits themselves answer', async () => {
    const fresh = await freshVisitDays(store, p, q({ metrics: ['visits'] }));
    expect(fresh).toEqual(['2031-05-05', '2031-05-06', '2031-05-07', '2031-05-08', '2031-05-09']);
    const rows = await store.select<{ d: string; dim: string; value: string | null; n: string }>(
      `SELECT toString(day) AS d, dim, value, toString(visits) AS n FROM ${store.db}.visit_dims FINAL WHERE project_id = {p:UUID} AND dim = 'source' AND visits > 0 ORDER BY d, value`,
      { p },
    );
    // day 1 (05-06): a1, c and b1; day 2 (05-07): m is listed there, so only its three others
    const day = (d: string) => rows.filter((r) => r.d === d).map(({ value, n }) => ({ value, n }));
    expect(day('2031-05-06')).toEqual([{ value: 'bing', n: '1' }, { value: 'direct', n: '1' }, { value: 'google', n: '1' }]);
    expect(day('2031-05-07')).toEqual([{ value: 'bing', n: '1' }, { value: 'direct', n: '1' }, { value: 'google', n: '1' }]); // a2, not m
    expect(day('2031-05-08')).toEqual([{ value: 'bing', n: '1' }, { value: 'direct', n: '1' }, { value: 'google', n: '1' }]); // a3, not client-1
    await expectSame((body) => freshVisitDays(store, p, body));
    await expectSame(async (body) => (await freshVisitDays(store, p, body))?.filter((_, i) => i % 2 === 1));
  });

  it('a build touching a day makes it and the days beside it stale until the next refresh; reads stay exact', async () => {
    // b1's visit gets a second event: day 1 changes, so do the visits days 0 and 2 may share with it
    await store.insertRows(visit('b1', [D1 + DAY + 7_200_000, D1 + DAY + 7_300_000], 'direct', ['/b', '/c']).slice(1));
    await store.aggregatesCaughtUp();
    expect(await freshVisitDays(store, p, q({ metrics: ['visits'] }))).toEqual(['2031-05-08', '2031-05-09']);
    await expectSame((body) => freshVisitDays(store, p, body));
    // a stale day is never read from visit_dims, even when a caller names it
    const answer = await queryInsights(store, p, q({ metrics: ['visits', 'bounce_rate'], dimensions: ['source'] }));
    expect(answer.rows.find((r) => r.source === 'direct')).toEqual({ source: 'direct', visits: 5, bounce_rate: 0.8 });
    await store.refreshSources(true);
    expect(await freshVisitDays(store, p, q({ metrics: ['visits'] }))).toHaveLength(5);
    await expectSame((body) => freshVisitDays(store, p, body));
    expect((await queryInsights(store, p, q({ metrics: ['visits', 'bounce_rate'], dimensions: ['source'] }))).rows.find((r) => r.source === 'direct')).toEqual({ source: 'direct', visits: 5, bounce_rate: 0.8 });
  });

  it('a read tells the keeper the stale days it finds (a day never refreshed, as one built before the keeper\'s start window)', async () => {
    await store.command(`DELETE FROM ${store.db}.visit_dims_days WHERE project_id = {p:UUID} AND day = '2031-05-07'`, { p });
    expect((await freshVisitDays(store, p, q({ metrics: ['visits'] })))!).toEqual(['2031-05-05', '2031-05-06', '2031-05-08', '2031-05-09']);
    expect(store.sourcesDaily!.pending).toBeGreaterThan(0);
    await store.refreshSources(true);
    expect(store.sourcesDaily!.pending).toBe(0);
    expect((await freshVisitDays(store, p, q({ metrics: ['visits'] })))!).toHaveLength(5);
  });
});
