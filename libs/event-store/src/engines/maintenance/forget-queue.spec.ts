import { randomUUID } from 'node:crypto';
import type { EventStore } from '../../event-store';
import { useTestStore } from '../../test-support/test-store';
import { ForgetBacklogError, ForgetQueue } from './forget-queue';
import { testRow } from '../../test-support/test-rows';

// Real chDB: the queue's mutations, existence checks and bound against the engine's own system.mutations.
let store: EventStore;
useTestStore((opened) => ({ store } = opened));

/** Lightweight deletes leave patch parts, one per partition they touch. */
const patchParts = async () =>
  Number((await store.select<{ n: string }>("SELECT count() AS n FROM system.parts WHERE database = {db:String} AND table = 'events' AND active AND startsWith(name, 'patch')", { db: store.db }))[0]!.n);
const mutations = async () => (await store.select<{ command: string; is_done: number }>('SELECT command, is_done FROM system.mutations WHERE database = {db:String} ORDER BY create_time', { db: store.db }));
const usersOf = async (p: string) =>
  (await store.select<{ u: string }>(`SELECT DISTINCT ifNull(user_id, '') AS u FROM ${store.eventsTable} WHERE project_id = {p:UUID} ORDER BY u`, { p })).map((r) => r.u);
async function mutationsDone() {
  for (const end = Date.now() + 30_000; Date.now() < end && (await mutations()).some((m) => !Number(m.is_done)); ) await new Promise((r) => setTimeout(r, 50));
}
const now = Date.now();

describe('ForgetQueue', () => {
  it('submits no delete for users without events, and answers them at once', async () => {
    const p = randomUUID();
    await store.insertRows([testRow(p, { at: now, user_id: 'someone' })]);
    const before = [(await mutations()).length, await patchParts()];
    const queue = new ForgetQueue(store, { intervalMs: 5_000 });
    const t = Date.now();
    await Promise.all(Array.from({ length: 50 }, (_, i) => queue.forget(p, `nobody-${i}`)));
    expect(Date.now() - t).toBeLessThan(2_000);
    expect([(await mutations()).length, await patchParts()]).toEqual(before);
    expect(await usersOf(p)).toEqual(['someone']);
  });

  it('deletes the users of forgets arriving together, across projects, in ONE lightweight delete, and keeps everyone else', async () => {
    const [p, q] = [randomUUID(), randomUUID()];
    await store.insertRows(['a', 'b', 'c', ''].flatMap((u) => [p, q].map((project) => testRow(project, { at: now, user_id: u || null }))));
    const before = [(await mutations()).length, await patchParts()];
    const queue = new ForgetQueue(store, { intervalMs: 0 });
    await Promise.all([queue.forget(p, 'a'), queue.forget(p, 'b'), queue.forget(q, 'a'), queue.forget(q, 'nobody'), queue.forget(p, 'b')]);
    // The rows are gone when the forgets resolve: one patch part (one month partition), no mutation.
    expect([(await mutations()).length, await patchParts()]).toEqual([before[0], before[1]! + 1]);
    expect(await usersOf(p)).toEqual(['', 'c']);
    expect(await usersOf(q)).toEqual(['', 'b', 'c']);
  });

  it('submits at most one delete per interval: forgets arriving meanwhile wait for the next', async () => {
    const p = randomUUID();
    await store.insertRows(['x', 'y', 'z'].map((u) => testRow(p, { at: now, user_id: u })));
    const before = await patchParts();
    const queue = new ForgetQueue(store, { intervalMs: 600 });
    // The interval runs from one delete's start to the next's: measured from before the first (which starts at once),
    // the second cannot end sooner, however long the first delete itself takes (it took 200 ms under CI's load).
    const t = Date.now();
    await queue.forget(p, 'x');
    await Promise.all([queue.forget(p, 'y'), queue.forget(p, 'z')]);
    expect(Date.now() - t).toBeGreaterThanOrEqual(590);
    expect(await patchParts()).toBe(before + 2);
    expect(await usersOf(p)).toEqual([]);
  });

  it('bounds the pending mutations: with the store not running them, a forget waits for room and then fails', async () => {
    const p = randomUUID();
    await store.insertRows(['m', 'n'].map((u) => testRow(p, { at: now, user_id: u })));
    await mutationsDone();
    await store.command(`SYSTEM STOP MERGES ${store.eventsTable}`);
    try {
      // A mutation of events that stays pending (retention's, say), then a forget that needs room beside it.
      await store.client.command({ query: `ALTER TABLE ${store.eventsTable} DELETE WHERE project_id = {p:UUID} AND user_id = 'm'`, query_params: { p }, clickhouse_settings: { mutations_sync: '0' } });
      const queue = new ForgetQueue(store, { intervalMs: 0, maxPendingMutations: 1, maxWaitMs: 500 });
      await expect(queue.forget(p, 'n')).rejects.toBeInstanceOf(ForgetBacklogError);
    } finally {
      await store.command(`SYSTEM START MERGES ${store.eventsTable}`);
    }
    await mutationsDone();
    expect(await usersOf(p)).toEqual(['n']);
  });

  it('forgets without a mutation however many month partitions the table spans: only the partitions with the users\' rows are patched', async () => {
    const [spread, p] = [randomUUID(), randomUUID()];
    await store.insertRows(Array.from({ length: 60 }, (_, i) => testRow(spread, { at: Date.UTC(2000, i, 15), user_id: 'other' })));
    await store.insertRows([testRow(p, { at: now, user_id: 'gone' })]);
    await mutationsDone();
    const before = [(await mutations()).length, await patchParts()];
    await new ForgetQueue(store).forget(p, 'gone');
    expect(await usersOf(p)).toEqual([]);
    // An ALTER TABLE ... DELETE would rewrite all 60+ parts one after the other; this wrote one patch part.
    expect([(await mutations()).length, await patchParts()]).toEqual([before[0], before[1]! + 1]);
  });

  it('deletes every event of a deleted project, anonymous ones too, in the same delete as the users\' forgets, and keeps the other projects', async () => {
    const [gone, kept] = [randomUUID(), randomUUID()];
    await store.insertRows(['a', ''].flatMap((u) => [gone, kept].map((project) => testRow(project, { at: now, user_id: u || null }))));
    const before = (await mutations()).length;
    const queue = new ForgetQueue(store, { intervalMs: 0 });
    await Promise.all([queue.forgetProject(gone), queue.forget(kept, 'a')]);
    // Gone when the forgets resolve, by a lightweight delete (no mutation).
    expect((await mutations()).length).toBe(before);
    expect(await usersOf(gone)).toEqual([]);
    expect(await usersOf(kept)).toEqual(['']);
  });
});
