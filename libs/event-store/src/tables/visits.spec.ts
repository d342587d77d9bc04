import { randomUUID } from 'node:crypto';
import { EVENT_INSERT_COLUMNS, type EventRow } from '@analytics/schema';
import { AggregateBuilder } from '../engines/write/aggregate-builder';
import { aggregateOf, aggregateSelect } from './aggregates';
import type { EventStore } from '../event-store';
import { eventStoreMigrations, migrateEventStore } from './migrate';
import { useTestStore, withDatabase as withTestDatabase } from '../test-support/test-store';
import { testRow } from '../test-support/test-rows';

// The visits aggregate (migration 010) is filled three ways: by the builder (embedded store, with the others), by a
// view on a ClickHouse server, and once by the migration's backfill. Each must hold what the aggregate's SELECT folds
// from the events. Real chDB (one data path per process: closed in afterAll); each test migrates a database of its own.
let store: EventStore;
useTestStore((opened) => ({ store } = opened), { aggregateIntervalMs: 60_000 });

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 2, 2);

const withDatabase = (run: (db: string) => Promise<void>) => withTestDatabase(store, run);

/** Sessions over two days and two INSERTs, bots beside people, pageviews and other events, a session without pageview. */
function rowsOf(P: string): EventRow[][] {
  const late = T0 + DAY - 60_000;
  return [
    [
      testRow(P, { at: late, session_id: 's1', anonymous_id: 'a1', source: 'google', medium: 'organic', channel: 'organic_search', path: '/a' }),
      testRow(P, { at: late + 1000, session_id: 's1', anonymous_id: 'a1', event_name: 'signup', path: '/b' }),
      testRow(P, { at: T0 + 3600_000, session_id: 's2', anonymous_id: 'a2', event_name: 'click', campaign: 'spring', path: null }),
      testRow(P, { at: T0 + 3600_000, session_id: 's3', anonymous_id: 'a3', device_type: 'bot', path: '/robots' }),
    ],
    [
      testRow(P, { at: late + 120_000, session_id: 's1', anonymous_id: 'a1', path: '/c' }),
      testRow(P, { at: late + 180_000, session_id: 's1', anonymous_id: 'a1', path: null }),
      testRow(P, { at: T0 + 3600_000, session_id: 's3', anonymous_id: 'a3', path: '/human' }),
      testRow(P, { at: T0 + 2 * DAY, session_id: 's4', anonymous_id: '', source: 'x.com', medium: 'social', campaign: 'c"1', path: '/é' }),
    ],
  ];
}

/** Every row of the table `visits` merged per (day, session, bot), and what the aggregate's SELECT folds from `where`'s events. */
async function held(db: string, P: string, where = '1'): Promise<{ table: unknown[]; folded: unknown[] }> {
  const a = aggregateOf('visits');
  const merge = "day, session_key, bot, any(anonymous_id) AS anon, min(entry) AS e, min(entry_page) AS ep, max(exit_page) AS xp, min(first_ts) AS f, max(last_ts) AS l, toUInt64(sum(events)) AS n, toUInt64(sum(pageviews)) AS pv";
  const q = (sql: string) => store.select<Record<string, unknown>>(sql, { p: P });
  const order = 'GROUP BY day, session_key, bot ORDER BY day, session_key, bot';
  return {
    table: await q(`SELECT ${merge} FROM ${db}.visits WHERE project_id = {p:UUID} ${order}`),
    folded: await q(`SELECT ${merge} FROM (${aggregateSelect(a, `${db}.events`, `project_id = {p:UUID} AND ${where}`)}) ${order}`),
  };
}

describe('the visits aggregate', () => {
  it('on a server before 012: the view of migration 010 folds every INSERT as the aggregate does', async () => {
    await withDatabase(async (db) => {
      const P = randomUUID();
      await migrateEventStore(store.client, { db }, eventStoreMigrations('server').filter((m) => m.version <= 11));
      for (const rows of rowsOf(P)) await store.client.insert({ table: `${db}.events`, values: rows, format: 'JSONEachRow', columns: EVENT_INSERT_COLUMNS as unknown as [string, ...string[]] });
      const { table, folded } = await held(db, P);
      expect(table).toEqual(folded);
      expect(table).toHaveLength(6); // s1 on two days, s2, s3 as a bot and not, s4
    });
  });

  it('on a server: the backfill folds the events stored before the migration, once', async () => {
    await withDatabase(async (db) => {
      const P = randomUUID();
      const migrations = eventStoreMigrations('server');
      await migrateEventStore(store.client, { db }, migrations.filter((m) => m.version < 10));
      const [first, second] = rowsOf(P);
      await store.client.insert({ table: `${db}.events`, values: first!, format: 'JSONEachRow', columns: EVENT_INSERT_COLUMNS as unknown as [string, ...string[]] });
      expect(await migrateEventStore(store.client, { db }, migrations.filter((m) => m.version <= 10))).toEqual([10]);
      await store.client.insert({ table: `${db}.events`, values: second!, format: 'JSONEachRow', columns: EVENT_INSERT_COLUMNS as unknown as [string, ...string[]] });
      const { table, folded } = await held(db, P);
      expect(table).toEqual(folded);
    });
  });

  it('on the embedded store: the backfill folds what the builder built, and the builder then builds the range it had recorded', async () => {
    await withDatabase(async (db) => {
      const P = randomUUID();
      const migrations = eventStoreMigrations('embedded');
      await migrateEventStore(store.client, { db, builder: true }, migrations.filter((m) => m.version < 10));
      // seq 0: stored before 004 (the views counted them); 1 and 2 built; (2, 3] recorded and not finished; 4 not built
      const [first, second] = rowsOf(P);
      const withSeq = (rows: EventRow[], seq: number) => rows.map((r) => ({ ...r, insert_seq_in: seq }));
      const insert = (values: object[]) => store.client.insert({ table: `${db}.events`, values, format: 'JSONEachRow', columns: [...EVENT_INSERT_COLUMNS, 'insert_seq_in'] as unknown as [string, ...string[]] });
      await insert([...withSeq(first!.slice(0, 1), 0), ...withSeq(first!.slice(1, 2), 1), ...withSeq(first!.slice(2), 2)]);
      await insert([...withSeq(second!.slice(0, 2), 3), ...withSeq(second!.slice(2), 4)]);
      await store.command(`INSERT INTO ${db}.aggregate_progress (seq_from, seq_to) VALUES (0, 2), (2, 3)`);
      expect(await migrateEventStore(store.client, { db, builder: true }, migrations.filter((m) => m.version <= 10))).toEqual([10]);
      await migrateEventStore(store.client, { db, builder: true });

      const backfilled = await held(db, P, 'insert_seq <= 2');
      expect(backfilled.table).toEqual(backfilled.folded);
      expect(await store.select(`SELECT DISTINCT toString(built_seq) AS s FROM ${db}.visits`, {})).toEqual([{ s: '2' }]);

      const builder = new AggregateBuilder({ db, client: store.client, committedSeq: () => 4 });
      await builder.init();
      await builder.catchUp();
      const built = await held(db, P);
      expect(built.table).toEqual(built.folded);
    });
  });
});
