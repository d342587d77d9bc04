import { createClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { EventStore } from '../event-store';
import { useTestStore } from '../test-support/test-store';
import { oneStatementAtATime } from './chdb-serial';

let dir: string;
let store: EventStore;
useTestStore((opened) => ({ store, dir } = opened));

/** Fails at row 5,000 after writing its rows before it in blocks of 10: its output so far stays on the session. */
const FAILS_MIDWAY = `SELECT number AS n, throwIf(number = {at:UInt32}, 'stop') AS x FROM numbers(10000) SETTINGS max_block_size = 10`;

describe("a failed statement's output never reaches the next statement on its chDB session", () => {
  const rowsOf = async (client: ReturnType<typeof createClient>, query: string, params: Record<string, unknown> = {}) =>
    (await client.query({ query, query_params: params, format: 'JSONEachRow' })).json<Record<string, unknown>>();

  it('answers the statement after a failed one with its own rows, awaited or queued behind it', async () => {
    const client = createClient({ connection: oneStatementAtATime(createChdbConnection({ path: dir })) } as never);
    try {
      await expect(rowsOf(client, FAILS_MIDWAY, { at: 5000 })).rejects.toMatchObject({ code: '395' });
      expect(await rowsOf(client, 'SELECT {x:UInt8} AS one', { x: 1 })).toEqual([{ one: 1 }]);
      // Queued before the failing one ended: the engine would run it next on the same session.
      const failing = rowsOf(client, FAILS_MIDWAY, { at: 5000 }).catch((e: unknown) => e);
      const queued = rowsOf(client, 'SELECT 2 AS two');
      expect(await failing).toMatchObject({ code: '395' });
      expect(await queued).toEqual([{ two: 2 }]);
      // A failed command (its answer is not read) leaves its output too.
      await expect(client.command({ query: FAILS_MIDWAY, query_params: { at: 5000 } })).rejects.toMatchObject({ code: '395' });
      expect(await rowsOf(client, 'SELECT 3 AS three')).toEqual([{ three: 3 }]);
    } finally {
      await client.close();
    }
  });

  it('is what chDB does without it (the case above is not vacuous)', async () => {
    const client = createClient({ connection: createChdbConnection({ path: dir }) } as never);
    try {
      await expect(rowsOf(client, FAILS_MIDWAY, { at: 5000 })).rejects.toMatchObject({ code: '395' });
      expect((await client.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow' }).then((r) => r.text())).split('\n').filter(Boolean).length).toBeGreaterThan(1);
    } finally {
      await client.close();
    }
  });

  it("answers a quiet project's read with its own rows when it cancels a heavy project's read that had written rows", async () => {
    // The read gate cancels a far heavier project's running read for a waiting one (read-side.ts). That read has
    // written rows by then: the quiet project's answer must not begin with them (it did: the heavy-tenant suite's 500s
    // were insights reads handed a funnel's rows of the other project).
    const free = await EventStore.open({ chdbPath: dir, database: store.db, read: { maxExecutionS: 120, queueWaitMs: 120_000 } });
    const heavyProject = '00000000-0000-4000-8000-0000000000b1';
    const heavy = `SELECT number AS n FROM numbers(300000000) WHERE cityHash64(number) % 100000 = 7 AND {p:UUID} != toUUID('00000000-0000-0000-0000-000000000000')`;
    try {
      const t0 = performance.now();
      const expected = await free.read<{ n: string }>(heavyProject, heavy, { p: heavyProject });
      const single = performance.now() - t0;
      let secondDoneAt = Infinity;
      const answers = [1, 2].map((i) => free.read<{ n: string }>(heavyProject, heavy, { p: heavyProject }).then((rows) => ((secondDoneAt = i === 2 ? performance.now() : secondDoneAt), rows)));
      // The first is done and the second runs, writing rows as it finds them.
      await answers[0];
      await new Promise((r) => setTimeout(r, single * 0.5));
      const quiet = await free.read<Record<string, unknown>>('00000000-0000-4000-8000-0000000000c1', 'SELECT 1 AS one WHERE {x:UInt8} = 1', { x: 1 });
      const quietDoneAt = performance.now();
      expect(quiet).toEqual([{ one: 1 }]);
      for (const answer of await Promise.all(answers)) expect(answer).toEqual(expected);
      // The heavy read was cancelled for it (answered before the running read ended; else this case proved nothing).
      expect(quietDoneAt).toBeLessThan(secondDoneAt);
    } finally {
      await free.close();
    }
  }, 120_000);
});
