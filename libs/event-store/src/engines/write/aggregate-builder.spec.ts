import { randomBytes, randomUUID } from 'node:crypto';
import { EVENT_INSERT_COLUMNS } from '@analytics/schema';
import { AggregateBuilder } from './aggregate-builder';
import { forgetUser } from '../maintenance/forget';
import type { EventStore } from '../../event-store';
import { useTestStore } from '../../test-support/test-store';
import { insertEventRows } from './insert-rows';
import { migrateEventStore } from '../../tables/migrate';
import { aggregatesAgainstRaw as againstRaw, builderRows, expectBuiltOnce } from '../../test-support/aggregates-vs-raw';

// Real chDB. The store's own builder ticks once a minute here: the tests drive it with aggregatesCaughtUp().
let store: EventStore;
useTestStore((opened) => ({ store } = opened), { aggregateIntervalMs: 60_000 });


const aggregatesAgainstRaw = (db: string, p: string) => againstRaw(store, db, p);

const rowsFor = builderRows;

describe('AggregateBuilder', () => {
  it('folds every INSERT into the aggregates exactly once, however the INSERTs interleave and the builds fall between them', async () => {
    const p = randomUUID();
    let events = 0;
    const writes: Promise<void>[] = [];
    for (let k = 0; k < 30; k++) {
      const rows = rowsFor(p, 1 + ((k * 7) % 23), `w${k}`);
      events += rows.length;
      // group-committed writes and direct INSERTs at once, with builds started in between
      writes.push(k % 3 ? store.write(rows) : store.insertRows(rows));
      if (k % 10 === 5) writes.push(store.aggregatesCaughtUp());
    }
    await Promise.all(writes);
    await store.aggregatesCaughtUp();
    expectBuiltOnce(await aggregatesAgainstRaw(store.db, p), events);
    // Caught up: nothing more to build, and building again adds nothing.
    await store.aggregatesCaughtUp();
    expectBuiltOnce(await aggregatesAgainstRaw(store.db, p), events);
  });

  it('finishes a range whose build failed half-way (one table refused) without counting the other tables twice', async () => {
    const p = randomUUID();
    await store.insertRows(rowsFor(p, 40, 'half'));
    await store.command(`DETACH TABLE ${store.db}.sessions`);
    try {
      // daily_rollup and daily_uniques get the range; sessions cannot
      await expect(store.aggregatesCaughtUp()).rejects.toThrow();
    } finally {
      await store.command(`ATTACH TABLE ${store.db}.sessions`);
    }
    await store.aggregatesCaughtUp();
    expectBuiltOnce(await aggregatesAgainstRaw(store.db, p), 40);
  });

  it('after a restart, builds only the month partitions of the recorded range that did not land', async () => {
    // A database of its own, written and built as the store would, then put back in the state a crash leaves:
    // the last recorded range landed in daily_uniques, in one month of daily_rollup, and not at all in sessions.
    const db = `t_${randomBytes(6).toString('hex')}`;
    await migrateEventStore(store.client, { db, builder: true });
    const p = randomUUID();
    const rows = rowsFor(p, 60, 'restart');
    let committed = 0;
    for (let seq = 1; seq <= 3; seq++) {
      await insertEventRows({ client: store.client, table: `${db}.events`, columns: EVENT_INSERT_COLUMNS, seq }, rows.slice((seq - 1) * 20, seq * 20));
      committed = seq;
    }
    const first = new AggregateBuilder({ db, client: store.client, committedSeq: () => committed });
    await first.init();
    await first.catchUp();
    expect(first.builtSeq).toBe(3);
    const [recorded] = await store.select<{ seq_from: string; seq_to: string }>(`SELECT seq_from, seq_to FROM ${db}.aggregate_progress ORDER BY seq_to DESC LIMIT 1`, {});
    expect([Number(recorded!.seq_from), Number(recorded!.seq_to)]).toEqual([0, 3]);
    const months = await store.select<{ m: number }>(`SELECT DISTINCT toYYYYMM(day) AS m FROM ${db}.daily_rollup ORDER BY m`, {});
    expect(months.map((r) => Number(r.m))).toEqual([203101, 203102]);
    await store.command(`ALTER TABLE ${db}.daily_rollup DROP PARTITION 203102`);
    await store.command(`TRUNCATE TABLE ${db}.sessions`);

    const restarted = new AggregateBuilder({ db, client: store.client, committedSeq: () => committed });
    expect(await restarted.init()).toEqual({ maxSeq: 3 });
    await restarted.catchUp();
    expect(restarted.builtSeq).toBe(3);
    expectBuiltOnce(await aggregatesAgainstRaw(db, p), 60);
    await store.command(`DROP DATABASE ${db}`);
  });

  it('settles before a delete without holding the writer: every INSERT started before is finished and built, later ones carry higher seqs', async () => {
    const p = randomUUID();
    let inFlightDone = false;
    // Rows of 2031 go to the far lane, whose INSERT starts at once when none is running.
    const inFlight = store.write(rowsFor(p, 10, 'in-flight')).then(() => (inFlightDone = true));
    const seq = await store.settleForDelete();
    expect(inFlightDone).toBe(true);
    const [built] = await store.select<{ n: string }>(`SELECT sum(events) AS n FROM ${store.db}.daily_rollup WHERE project_id = {p:UUID}`, { p });
    expect(Number(built!.n)).toBe(10);
    // A write after it is not held, and a delete bounded by `insert_seq <= seq` cannot touch it.
    await Promise.all([inFlight, store.write(rowsFor(p, 3, 'after'))]);
    const [after] = await store.select<{ lo: string }>(`SELECT min(insert_seq) AS lo FROM ${store.eventsTable} WHERE project_id = {p:UUID} AND event_id LIKE 'after-%'`, { p });
    expect(Number(after!.lo)).toBeGreaterThan(seq!);
  });

  it('builds on its own within seconds, with no read asking for it (the spec: aggregates update within seconds)', async () => {
    // A database of its own with a builder ticking every 50 ms, as the store's own does every AGGREGATE_INTERVAL_MS.
    const db = `t_${randomBytes(6).toString('hex')}`;
    await migrateEventStore(store.client, { db, builder: true });
    const p = randomUUID();
    let committed = 0;
    const builder = new AggregateBuilder({ db, client: store.client, committedSeq: () => committed });
    await builder.init();
    builder.start(50);
    try {
      await insertEventRows({ client: store.client, table: `${db}.events`, columns: EVENT_INSERT_COLUMNS, seq: 1 }, rowsFor(p, 25, 'tick'));
      committed = 1;
      const deadline = Date.now() + 5_000;
      const built = async () => Number((await store.select<{ n: string }>(`SELECT sum(events) AS n FROM ${db}.daily_rollup WHERE project_id = {p:UUID}`, { p }))[0]?.n ?? 0);
      while (builder.builtSeq < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(builder.builtSeq).toBe(1);
      expect(await built()).toBe(25);
    } finally {
      builder.stop();
    }
    expectBuiltOnce(await aggregatesAgainstRaw(db, p), 25);
    await store.command(`DROP DATABASE ${db}`);
  });

  it('still counts in the aggregates an event forgotten right after its write (the spec: aggregate rows are not deleted)', async () => {
    const p = randomUUID();
    await store.write(rowsFor(p, 12, 'gone').map((r) => ({ ...r, user_id: 'u-gone' })));
    await store.write(rowsFor(p, 3, 'kept'));
    // No read and no tick in between: forget itself has the builder fold the events in before it deletes them.
    await forgetUser(store, p, 'u-gone');
    await store.command(`ALTER TABLE ${store.db}.events DELETE WHERE 0 SETTINGS mutations_sync = 2`); // waits for the forget's mutation too
    const [left] = await store.select<{ n: string }>(`SELECT count() AS n FROM ${store.db}.events WHERE project_id = {p:UUID}`, { p });
    expect(Number(left!.n)).toBe(3);
    const [counted] = await store.select<{ n: string }>(`SELECT sum(events) AS n FROM ${store.db}.daily_rollup WHERE project_id = {p:UUID}`, { p });
    expect(Number(counted!.n)).toBe(15);
    const [sessions] = await store.select<{ n: string }>(`SELECT sum(events) AS n FROM ${store.db}.sessions WHERE project_id = {p:UUID}`, { p });
    expect(Number(sessions!.n)).toBe(15);
    // daily_uniques_by keeps the forgotten visitors too: v-1..v-10 of the 15 rows; the 3 kept rows have v-1, v-2 only.
    const [visitors] = await store.select<{ u: string }>(`SELECT uniqCombinedMerge(uniques) AS u FROM ${store.db}.daily_uniques_by WHERE project_id = {p:UUID} AND dim = '' AND event_name = ''`, { p });
    expect(Number(visitors!.u)).toBe(10);
  });
  it('migration 6 backfills daily_uniques_by from daily_rollup to the sketches the builder builds from the events', async () => {
    const p = randomUUID();
    await store.insertRows(rowsFor(p, 120, 'backfill'));
    await store.aggregatesCaughtUp();
    const built = await aggregatesAgainstRaw(store.db, p);
    expect(built.uniquesBy).toEqual(built.rawUniquesBy);
    // back to a store at version 5 whose daily_rollup holds these events, then migrate
    await store.command(`TRUNCATE TABLE ${store.db}.daily_uniques_by`);
    await store.command(`ALTER TABLE ${store.db}.schema_migrations DELETE WHERE version = 6 SETTINGS mutations_sync = 2`);
    expect(await migrateEventStore(store.client, { db: store.db, builder: true })).toEqual([6]);
    expect((await aggregatesAgainstRaw(store.db, p)).uniquesBy).toEqual(built.uniquesBy);
  });
});
