import { randomUUID } from 'node:crypto';
import type { EventStore } from '../../event-store';
import { useTestStore } from '../../test-support/test-store';
import { runRetention } from './retention';
import { testRow } from '../../test-support/test-rows';

// Real chDB, one database for this file; the session's timezone is set per test, as on a server configured non-UTC.
let store: EventStore;
useTestStore((opened) => ({ store } = opened));

const DAY = 86_400_000;
const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const CUTOFF = NOW - 30 * DAY; // mid-October: the month partition stays, the rows go by mutation

async function mutationsDone() {
  const end = Date.now() + 30_000;
  const pending = async () =>
    Number((await store.select<{ n: string }>('SELECT count() AS n FROM system.mutations WHERE database = {db:String} AND NOT is_done', { db: store.db }))[0]!.n);
  while (Date.now() < end && (await pending()) > 0) await new Promise((r) => setTimeout(r, 50));
}

describe('runRetention under a non-UTC session timezone', () => {
  afterAll(() => store.command("SET session_timezone = 'UTC'"));

  it.each(['Asia/Tokyo', 'America/New_York'])('deletes rows just before the UTC cutoff and keeps rows from it on (%s)', async (tz) => {
    const p = randomUUID();
    const ages: Array<[string, number]> = [['1h-before', -HOUR], ['1ms-before', -1], ['at-cutoff', 0], ['1ms-after', 1], ['1h-after', HOUR]];
    await store.insertRows(ages.map(([name, d]) => testRow(p, { at: CUTOFF + d, event_name: name })));
    await store.command(`SET session_timezone = '${tz}'`);

    const result = await runRetention(store, [{ id: p, retention_days: 30 }], NOW);
    await mutationsDone();

    expect(result).toMatchObject({ mutations: 1, dropped_partitions: [] });
    const left = await store.select<{ event_name: string }>(`SELECT event_name FROM ${store.eventsTable} WHERE project_id = {p:UUID} ORDER BY timestamp`, { p });
    expect(left.map((r) => r.event_name)).toEqual(['at-cutoff', '1ms-after', '1h-after']);
  });
});
