import { ApiError } from '@analytics/schema';
import { EventStore } from './event-store';
import { useTestStore } from './test-support/test-store';
import { testRow } from './test-support/test-rows';

let dir: string;
let store: EventStore;
useTestStore((opened) => ({ store, dir } = opened), { read: { maxMemoryBytes: 1000, maxExecutionS: 120 } });

describe('read limits in the engine', () => {
  it('stops a read over its memory limit with 400 query_too_expensive naming the limit; other queries and the writer are untouched', async () => {
    const projectId = '00000000-0000-4000-8000-00000000000a';
    const row = testRow(projectId, { at: Date.UTC(2026, 0, 5) });
    await store.write([row]);
    const e = await store
      .read(row.project_id, `SELECT event_name, count() AS c FROM ${store.eventsTable} WHERE project_id = {p:UUID} GROUP BY event_name`, { p: row.project_id })
      .catch((err: unknown) => err);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(400);
    expect((e as ApiError).toBody()).toMatchObject({ error: 'query_too_expensive', details: { limit: 'max_memory_usage' } });
    // The limit rides on the read's own SETTINGS clause, not on the session: plain selects and inserts still run.
    await store.write([testRow(projectId, { at: Date.UTC(2026, 0, 6), event_name: 'after' })]);
    expect(Number((await store.select<{ n: string }>(`SELECT count() AS n FROM ${store.eventsTable}`, {}))[0]!.n)).toBe(2);
  });
});

describe('preemption of a bursting tenant', () => {
  it("cancels a bursting project's running read for a quiet project's, then runs it again to the same answer", async () => {
    const free = await EventStore.open({ chdbPath: dir, database: store.db, read: { maxExecutionS: 120 } });
    try {
      const p = '00000000-0000-4000-8000-0000000000bb';
      const slow = `SELECT sum(cityHash64(number)) AS s FROM numbers(1000000000) WHERE {p:UUID} != toUUID('00000000-0000-0000-0000-000000000000')`;
      const t0 = performance.now();
      const expected = await free.read<{ s: string }>(p, slow, { p });
      const single = performance.now() - t0;
      const heavy = [1, 2, 3].map(() => free.read<{ s: string }>(p, slow, { p })); // the 2nd and 3rd run bursting
      await new Promise((r) => setTimeout(r, single * 1.15)); // the first is done, the second has just started
      const t1 = performance.now();
      const quiet = await free.read<{ one: number }>('00000000-0000-4000-8000-0000000000cc', 'SELECT 1 AS one WHERE {x:UInt8} = 1', { x: 1 });
      const waited = performance.now() - t1;
      expect(quiet).toEqual([{ one: 1 }]);
      expect(waited).toBeLessThan(single / 2);
      for (const answer of await Promise.all(heavy)) expect(answer).toEqual(expected);
      const cancelled = await free.select<{ n: string }>("SELECT count() AS n FROM system.query_log WHERE exception_code = 394 AND type = 'ExceptionWhileProcessing'", {}).catch(() => [{ n: 'n/a' }]);
      expect(cancelled[0]!.n).not.toBe('0');
    } finally {
      await free.close();
    }
  });
});
