import { ApiError } from '@analytics/schema';
import { EventStore } from '../../event-store';
import { useTestStore } from '../../test-support/test-store';
import { testRow } from '../../test-support/test-rows';
import { createChdbConnection } from 'chdb/connection';
import { cancelTagSetting, killByTag, newCancelTag } from '../../primitives/cancel-tag';

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

describe('preemption of a heavy tenant', () => {
  const p = '00000000-0000-4000-8000-0000000000bb';
  const slow = `SELECT sum(cityHash64(number)) AS s FROM numbers(1000000000) WHERE {p:UUID} != toUUID('00000000-0000-0000-0000-000000000000')`;
  // The third heavy read waits for two others: on a loaded machine (each several seconds) longer than the default 10 s.
  const QUEUED_LONG = { maxExecutionS: 120, queueWaitMs: 120_000 };

  /** Three heavy reads of one project, then a quiet project's read while the second of them runs (its project far heavier). */
  async function burstThenQuiet(free: EventStore) {
    const t0 = performance.now();
    const expected = await free.read<{ s: string }>(p, slow, { p });
    const single = performance.now() - t0;
    const heavyDoneAt: number[] = [];
    const heavy = [1, 2, 3].map((_, i) => free.read<{ s: string }>(p, slow, { p }).then((rows) => ((heavyDoneAt[i] = performance.now()), rows)));
    // The first is done, the second has just started (waiting for the first itself: on a loaded machine it can run
    // longer than `single`).
    await heavy[0];
    await new Promise((r) => setTimeout(r, single * 0.15));
    const quiet = await free.read<{ one: number }>('00000000-0000-4000-8000-0000000000cc', 'SELECT 1 AS one WHERE {x:UInt8} = 1', { x: 1 });
    const quietDoneAt = performance.now();
    const answers = await Promise.all(heavy);
    // Without preemption the quiet read waits for the running second heavy read to end; cancelled, that one runs again
    // after it. The order, not a time: on a loaded machine a read's duration is not what `single` measured a moment before.
    return { expected, quiet, beforeTheRunningRead: quietDoneAt < heavyDoneAt[1]!, answers };
  }

  it("cancels a heavy project's running read for a quiet project's, then runs it again to the same answer", async () => {
    const free = await EventStore.open({ chdbPath: dir, database: store.db, read: QUEUED_LONG });
    try {
      const { expected, quiet, beforeTheRunningRead, answers } = await burstThenQuiet(free);
      expect(quiet).toEqual([{ one: 1 }]);
      expect(beforeTheRunningRead).toBe(true);
      for (const answer of answers) expect(answer).toEqual(expected);
      const cancelled = await free.select<{ n: string }>("SELECT count() AS n FROM system.query_log WHERE exception_code = 394 AND type = 'ExceptionWhileProcessing'", {}).catch(() => [{ n: 'n/a' }]);
      expect(cancelled[0]!.n).not.toBe('0');
    } finally {
      await free.close();
    }
  });

  it("cancels it while long statements on the engine's other connections hold threads of Node's pool", async () => {
    // Each embedded statement holds a thread of libuv's pool until it ends (4 threads unless UV_THREADPOOL_SIZE says
    // more). With the builder's, the writer's and an export's statements running beside the heavy read, a pool of 4
    // had no thread left for the KILL: the quiet read waited the whole heavy read (the CI failures of issue 28).
    const free = await EventStore.open({ chdbPath: dir, database: store.db, read: QUEUED_LONG });
    const [killer, ...others] = [0, 1, 2, 3].map(() => createChdbConnection({ path: dir }));
    const tag = newCancelTag('busy:');
    const busy = others.map((c, i) => c.query({ query: `SELECT sum(cityHash64(number + ${i})) FROM numbers(1000000000000) SETTINGS ${cancelTagSetting(tag)}` }).catch((e: unknown) => e));
    try {
      const { expected, quiet, beforeTheRunningRead, answers } = await burstThenQuiet(free);
      expect(quiet).toEqual([{ one: 1 }]);
      expect(beforeTheRunningRead).toBe(true);
      for (const answer of answers) expect(answer).toEqual(expected);
    } finally {
      await killer!.command({ query: killByTag(tag) });
      await Promise.all(busy);
      for (const c of [killer!, ...others]) await c.close();
      await free.close();
    }
  }, 180_000); // four 1e9-row scans beside three busy statements: over a minute at load 20 on two cores
});
