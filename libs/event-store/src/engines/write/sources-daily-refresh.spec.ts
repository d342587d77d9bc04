import { randomUUID } from 'node:crypto';
import { sourcesParamsSchema } from '@analytics/schema';
import type { EventStore } from '../../event-store';
import { useTestStore } from '../../test-support/test-store';
import { forgetUser } from '../maintenance/forget';
import { readTablesOf } from '../../tables/read-tables';
import { buildSources, planSourceDays, querySources } from '../../queries/sources.query';
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
    expect(await days(p, D0, D0 + 6 * DAY)).toEqual({ fresh: ['2031-02-26', '2031-02-27', '2031-02-28', '2031-03-01', '2031-03-02', '2031-03-03'], stale: [] });
    await expectAllRangesAgree(p);
    const all = await querySources(store, p, params(D0, D0 + 6 * DAY));
    expect(all.rows.find((r) => r.source === 'google' && r.medium === 'organic')).toEqual({ source: 'google', medium: 'organic', events: 2, uniques: 1, paid_share: 0 });
  });

  it('a late event makes its day and both neighbours stale; reads compute them until the next refresh', async () => {
    // s-a3 gets an earlier first event from bing/cpc on day 3: its entry moves, google/paid loses a session on day 3
    await store.insertRows([visit('s-a3', 'v3', D0 + 3 * DAY + 60_000, 'bing', 'cpc')]);
    expect(await days(p, D0, D0 + 6 * DAY)).toEqual({ fresh: ['2031-02-26', '2031-02-27', '2031-03-03'], stale: ['2031-02-28', '2031-03-01', '2031-03-02'] });
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
    expect(await days(p, D0 + 30 * DAY, D0 + 40 * DAY)).toEqual({ fresh: [], stale: [] });
    expect((await querySources(store, p, params(D0 + 30 * DAY, D0 + 40 * DAY))).rows).toEqual([]);
  });

  it('another project sees none of it', async () => {
    expect((await querySources(store, randomUUID(), params(D0, D0 + 6 * DAY))).rows).toEqual([]);
  });
});
