import { randomUUID } from 'node:crypto';
import { type ClickHouseClient, createClient } from '@clickhouse/client';
import { EVENT_INSERT_COLUMNS } from '@analytics/schema';
import { AggregateBuilder, readProgress } from './aggregate-builder';
import { aggregateOf, aggregateSelect } from '../../tables/aggregates';
import { EventStore } from '../../event-store';
import { insertEventRows } from './insert-rows';
import { eventStoreMigrations, migrateEventStore } from '../../tables/migrate';
import { StoreFrontier } from './store-frontier';
import { aggregatesAgainstRaw, builderRows, expectBuiltOnce } from '../../test-support/aggregates-vs-raw';
import { openTestStore, type TestStore, withDatabase } from '../../test-support/test-store';

// One write design on a ClickHouse server (migration 012): several stores in server mode (each as an ingest replica
// would open it: no builder, WriterSlots) write one database at once, and one more builds. Real chDB, reached through
// @clickhouse/client connections of their own, as a server would be through HTTP.
let test: TestStore;
beforeAll(async () => {
  test = await openTestStore({ aggregateIntervalMs: 60_000 });
});
afterAll(() => test.close());


/** A server-mode store on the test's chDB directory: a connection of its own, no builder unless startBuilding(). */
async function serverStore(db: string, config: { aggregateWaitMs?: number; aggregateIntervalMs?: number } = {}): Promise<EventStore> {
  const { createChdbConnection } = require('chdb/connection') as typeof import('chdb/connection');
  const client = createClient({ connection: createChdbConnection({ path: test.dir }) } as never) as ClickHouseClient;
  return EventStore.open({ database: db, aggregateIntervalMs: 60_000, ...config }, { maxDelayMs: 1 }, { client });
}

const rowsFor = builderRows;

/** visits next to what its SELECT folds from the raw events. */
async function visitsAgainstRaw(db: string, p: string) {
  const merge = 'day, session_key, bot, min(entry) AS e, min(first_ts) AS f, max(last_ts) AS l, toUInt64(sum(events)) AS n, toUInt64(sum(pageviews)) AS pv';
  const order = 'GROUP BY day, session_key, bot ORDER BY day, session_key, bot';
  return {
    table: await test.store.select(`SELECT ${merge} FROM ${db}.visits WHERE project_id = {p:UUID} ${order}`, { p }),
    raw: await test.store.select(`SELECT ${merge} FROM (${aggregateSelect(aggregateOf('visits'), `${db}.events`, 'project_id = {p:UUID}')}) ${order}`, { p }),
  };
}

async function expectExact(db: string, p: string, events: number) {
  expectBuiltOnce(await aggregatesAgainstRaw(test.store, db, p), events);
  const visits = await visitsAgainstRaw(db, p);
  expect(visits.table).toEqual(visits.raw);
}

/** The events daily_rollup counts for `p`, read as read-api reads it (through the store's read side). */
async function rollupEvents(store: EventStore, db: string, p: string): Promise<number> {
  return Number((await store.read<{ n: string }>(p, `SELECT toUInt64(sum(events)) AS n FROM ${db}.daily_rollup WHERE project_id = {p:UUID}`, { p }))[0]!.n);
}

describe('the aggregate builder on a server (migration 012)', () => {
  it('builds what two ingest replicas write at once exactly once, and a read elsewhere waits for it', async () => {
    await withDatabase(test.store, async (db) => {
      const [a, b] = [await serverStore(db), await serverStore(db)];
      const reader = await serverStore(db, { aggregateWaitMs: 20_000 });
      const builder = await serverStore(db, { aggregateIntervalMs: 50 });
      try {
        const p = randomUUID();
        let events = 0;
        const writes: Promise<void>[] = [];
        for (let k = 0; k < 40; k++) {
          const rows = rowsFor(p, 1 + ((k * 7) % 23), `w${k}`);
          events += rows.length;
          writes.push((k % 2 ? a : b).write(rows));
          if (k === 20) writes.push(builder.startBuilding());
        }
        await Promise.all(writes);
        // The reader does not build: it returns once the builder (another store) has built every INSERT acknowledged.
        await reader.aggregatesCaughtUp();
        await expectExact(db, p, events);
        // More than one writer id took part, each INSERT stamped with its row count.
        const stamps = await test.store.select<{ writers: string; bad: string }>(
          `SELECT uniqExact(insert_writer) AS writers, countIf(insert_rows = 0 OR insert_seq = 0) AS bad FROM ${db}.events`,
          {},
        );
        expect(Number(stamps[0]!.writers)).toBeGreaterThanOrEqual(2);
        expect(Number(stamps[0]!.bad)).toBe(0);
        // Caught up: building again adds nothing.
        await builder.aggregatesCaughtUp();
        await expectExact(db, p, events);
      } finally {
        for (const s of [a, b, reader, builder]) await s.close();
      }
    });
  });

  it('answers a read of the aggregates at once by default (AGGREGATE_WAIT_MS 0), from what is built; the builder adds the new events', async () => {
    await withDatabase(test.store, async (db) => {
      const writer = await serverStore(db);
      const reader = await serverStore(db);
      const waiting = await serverStore(db, { aggregateWaitMs: 20_000 });
      const builder = await serverStore(db, { aggregateIntervalMs: 50 });
      try {
        await builder.startBuilding();
        await builder.stopBuilding();
        const p = randomUUID();
        await writer.write(rowsFor(p, 25, 'd1'));
        const counted = (store: EventStore) => rollupEvents(store, db, p);
        // Nobody builds: the default read does not wait for a builder (a waiting one would for 20 s); nothing is built.
        const t = Date.now();
        expect(await counted(reader)).toBe(0);
        expect(Date.now() - t).toBeLessThan(2_000);
        let waited = false;
        const waitingRead = counted(waiting).then((n) => ((waited = true), n));
        await new Promise((r) => setTimeout(r, 300));
        expect(waited).toBe(false);
        // Once the builder has built, both answer every event, exactly once.
        await builder.startBuilding();
        expect(await waitingRead).toBe(25);
        expect(await counted(reader)).toBe(25);
        await expectExact(db, p, 25);
      } finally {
        for (const s of [writer, reader, waiting, builder]) await s.close();
      }
    });
  });

  it('shows an acknowledged event in a default read of the aggregates within seconds, the builder on its default 1 s tick (SPEC: aggregates update within seconds after an insert)', async () => {
    await withDatabase(test.store, async (db) => {
      const writer = await serverStore(db);
      const reader = await serverStore(db);
      const builder = await serverStore(db, { aggregateIntervalMs: 1_000 });
      try {
        await builder.startBuilding();
        const p = randomUUID();
        await writer.write(rowsFor(p, 12, 'd1'));
        const acknowledged = Date.now();
        let seen = 0;
        while (seen !== 12 && Date.now() - acknowledged < 5_000) {
          await new Promise((r) => setTimeout(r, 100));
          seen = await rollupEvents(reader, db, p);
        }
        expect(seen).toBe(12);
        await expectExact(db, p, 12);
      } finally {
        for (const s of [writer, reader, builder]) await s.close();
      }
    });
  });

  it('makes a read in a process that does not build wait until the builder has built what was acknowledged before it', async () => {
    await withDatabase(test.store, async (db) => {
      const writer = await serverStore(db);
      const reader = await serverStore(db, { aggregateWaitMs: 20_000 });
      const builder = await serverStore(db, { aggregateIntervalMs: 50 });
      try {
        await builder.startBuilding(); // idle: it records how far it looked (a heartbeat)
        await builder.stopBuilding();
        const p = randomUUID();
        await writer.write(rowsFor(p, 30, 'r1'));
        await writer.write(rowsFor(p, 12, 'r2'));
        // Nobody builds yet: the read waits, and returns once the builder (started later) has built both INSERTs.
        let returned = false;
        const read = reader.aggregatesCaughtUp().then(() => (returned = true));
        // A read of the raw events alone does not wait for the builder: they are all there.
        const raw = await reader.read<{ n: string }>(p, `SELECT count() AS n FROM ${db}.events WHERE project_id = {p:UUID}`, { p });
        expect(Number(raw[0]!.n)).toBe(42);
        await new Promise((r) => setTimeout(r, 300));
        expect(returned).toBe(false);
        await builder.startBuilding();
        await read;
        await expectExact(db, p, 42);
        // With nothing new, a read returns at once.
        const t = Date.now();
        await reader.aggregatesCaughtUp();
        expect(Date.now() - t).toBeLessThan(5_000);
      } finally {
        for (const s of [writer, reader, builder]) await s.close();
      }
    });
  });

  it('waits for an INSERT short of its rows, and takes it as it stands once it has settled (its writer died mid-INSERT)', async () => {
    await withDatabase(test.store, async (db) => {
      await migrateEventStore(test.store.client, { db });
      const client = test.store.client;
      const p = randomUUID();
      const rows = rowsFor(p, 30, 'short');
      // writer 7: its first INSERT complete; its second sent with 20 rows of which 10 landed (the store died between
      // two partitions, the writer got an error and took a new id)
      const seq = Date.now() * 1000;
      await insertEventRows({ client, table: `${db}.events`, columns: EVENT_INSERT_COLUMNS, stamp: { writer: 7, seq, rows: 10 } }, rows.slice(0, 10));
      await insertEventRows({ client, table: `${db}.events`, columns: EVENT_INSERT_COLUMNS, stamp: { writer: 7, seq: seq + 1, rows: 20 } }, rows.slice(10, 20));
      let clock = Date.now();
      const builder = new AggregateBuilder({ db, client, frontier: new StoreFrontier({ db, client, settleMs: 60_000, clock: () => clock }), recordDone: true });
      await builder.init();
      await builder.catchUp();
      const built = async () => Number((await test.store.select<{ n: string }>(`SELECT sum(events) AS n FROM ${db}.daily_rollup WHERE project_id = {p:UUID}`, { p }))[0]!.n);
      expect(await built()).toBe(10);
      clock += 59_000;
      await builder.catchUp();
      expect(await built()).toBe(10);
      clock += 2_000;
      await builder.catchUp();
      await expectExact(db, p, 20);
      expect((await readProgress(client, db))?.done).toBe(true);
    });
  });

  it('finishes a range a builder died in, from the next holder of the lease, without counting a table twice', async () => {
    await withDatabase(test.store, async (db) => {
      const writer = await serverStore(db);
      const p = randomUUID();
      try {
        await writer.write(rowsFor(p, 40, 'a'));
        await writer.write(rowsFor(p, 25, 'b'));
      } finally {
        await writer.close();
      }
      const client = test.store.client;
      // The first builder dies after daily_rollup and daily_uniques got the range (sessions' INSERT never runs).
      let dead = false;
      const dying = new Proxy(client, {
        get(target, key, receiver) {
          if (key !== 'command') return Reflect.get(target, key, receiver);
          return async (params: { query: string }) => {
            if (dead || params.query.startsWith(`INSERT INTO ${db}.sessions `)) {
              dead = true;
              throw new Error('killed');
            }
            return target.command(params as never);
          };
        },
      });
      const first = new AggregateBuilder({ db, client: dying, frontier: new StoreFrontier({ db, client }), recordDone: true });
      await first.init();
      await expect(first.catchUp()).rejects.toThrow('killed');
      expect((await readProgress(client, db))?.done).toBe(false);
      const next = new AggregateBuilder({ db, client, frontier: new StoreFrontier({ db, client }), recordDone: true });
      await next.init();
      await next.catchUp();
      await expectExact(db, p, 65);
    });
  });

  it('finishes a range a builder died in for a writer that came back after it was pruned, without rebuilding what it built before', async () => {
    await withDatabase(test.store, async (db) => {
      const [a, b] = [await serverStore(db), await serverStore(db)];
      const client = test.store.client;
      const p = randomUUID();
      let armed = false;
      const dying = new Proxy(client, {
        get(target, key, receiver) {
          if (key !== 'command') return Reflect.get(target, key, receiver);
          return async (params: { query: string }) => {
            if (armed && params.query.startsWith(`INSERT INTO ${db}.sessions `)) throw new Error('killed');
            return target.command(params as never);
          };
        },
      });
      // No margin: a writer with nothing unbuilt is pruned by the next range built (in production, after 10 idle minutes).
      const frontier = () => new StoreFrontier({ db, client, marginUs: 0 });
      try {
        const first = new AggregateBuilder({ db, client: dying, frontier: frontier(), recordDone: true });
        await first.init();
        await a.write(rowsFor(p, 40, 'a'));
        await first.catchUp();
        await b.write(rowsFor(p, 25, 'b'));
        await first.catchUp();
        expect((await readProgress(client, db))!.after.size).toBe(1); // a's writer is pruned, b's kept
        await a.write(rowsFor(p, 30, 'c')); // the same writer again, above the floor
        armed = true;
        await expect(first.catchUp()).rejects.toThrow('killed');
        const next = new AggregateBuilder({ db, client, frontier: frontier(), recordDone: true });
        await next.init();
        await next.catchUp();
        await expectExact(db, p, 95);
      } finally {
        await a.close();
        await b.close();
      }
    });
  });

  it('migrates a server whose views built the aggregates: what they counted is not counted again, new INSERTs are built', async () => {
    await withDatabase(test.store, async (db) => {
      const p = randomUUID();
      await migrateEventStore(test.store.client, { db }, eventStoreMigrations('server').filter((m) => m.version <= 11));
      const before = rowsFor(p, 50, 'views');
      await test.store.client.insert({ table: `${db}.events`, values: before, format: 'JSONEachRow', columns: EVENT_INSERT_COLUMNS as unknown as [string, ...string[]] });
      const store = await serverStore(db);
      try {
        expect(await test.store.select(`SELECT name FROM system.tables WHERE database = {db:String} AND name LIKE '%_mv' ORDER BY name`, { db })).toEqual([]);
        await store.write(rowsFor(p, 30, 'after'));
        await store.startBuilding();
        await store.aggregatesCaughtUp();
        await expectExact(db, p, 80);
      } finally {
        await store.close();
      }
    });
  });
});
