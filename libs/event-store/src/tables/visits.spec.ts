import { randomUUID } from 'node:crypto';
import { EVENT_INSERT_COLUMNS, type EventRow } from '@analytics/schema';
import { AggregateBuilder } from '../engines/write/aggregate-builder';
import { AGGREGATES, aggregateOf, aggregateSelect } from './aggregates';
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

/** Rows stamped with the insert_seq the writer would have given them, and their INSERT into `db`'s events. */
const withSeq = (rows: EventRow[], seq: number) => rows.map((r) => ({ ...r, insert_seq_in: seq }));
const insertSeqs = (db: string, values: object[]) =>
  store.client.insert({ table: `${db}.events`, values, format: 'JSONEachRow', columns: [...EVENT_INSERT_COLUMNS, 'insert_seq_in'] as unknown as [string, ...string[]] });

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
      await insertSeqs(db, [...withSeq(first!.slice(0, 1), 0), ...withSeq(first!.slice(1, 2), 1), ...withSeq(first!.slice(2), 2)]);
      await insertSeqs(db, [...withSeq(second!.slice(0, 2), 3), ...withSeq(second!.slice(2), 4)]);
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

  it('visit_spans (014) lists a visit on each day it has events off its home day, the day its id\'s 30-minute bucket is in', async () => {
    await withDatabase(async (db) => {
      const P = randomUUID();
      await migrateEventStore(store.client, { db, builder: true });
      const bucket = (t: number) => Math.floor(t / 1_800_000);
      const late = T0 + DAY - 10 * 60_000;
      const ranges: EventRow[][] = [
        [
          // a visit by inactivity past midnight: its id's bucket is its first event's
          testRow(P, { at: late, session_id: `a5-${bucket(late)}`, anonymous_id: 'a5' }),
          // one day, two ranges (two parts of one visit-day)
          testRow(P, { at: T0 + 3 * 3600_000, session_id: `a6-${bucket(T0 + 3 * 3600_000)}`, anonymous_id: 'a6' }),
          // a client's own id: listed on every day it has events
          testRow(P, { at: T0 + 3600_000, session_id: 'client-visit', anonymous_id: 'a7' }),
          // ... also one whose number names the day of its events (018: not the server's form for its visitor)
          testRow(P, { at: T0 + 3600_000, session_id: `order-${bucket(T0 + 3600_000)}`, anonymous_id: 'a9' }),
        ],
        [
          testRow(P, { at: late + 15 * 60_000, session_id: `a5-${bucket(late)}`, anonymous_id: 'a5' }),
          testRow(P, { at: T0 + 4 * 3600_000, session_id: `a6-${bucket(T0 + 3 * 3600_000)}`, anonymous_id: 'a6', device_type: 'bot' }),
          testRow(P, { at: T0 + 2 * DAY, session_id: 'client-visit', anonymous_id: 'a7' }),
          // an id of the server's form whose bucket is another day's (sent by a client)
          testRow(P, { at: T0 + 2 * DAY, session_id: `a8-${bucket(T0)}`, anonymous_id: 'a8' }),
        ],
      ];
      let seq = 0;
      const builder = new AggregateBuilder({ db, client: store.client, committedSeq: () => seq });
      await builder.init();
      for (const rows of ranges) {
        seq++;
        await insertSeqs(db, withSeq(rows, seq));
        builder.noteInsert(seq, rows.length);
        await builder.catchUp();
      }
      const listed = await store.select<{ day: string; session_id: string }>(
        `SELECT toString(s.day) AS day, any(e.session_id) AS session_id FROM ${db}.visit_spans AS s
         INNER JOIN (SELECT DISTINCT session_id, cityHash64(session_id, anonymous_id) AS k FROM ${db}.events WHERE project_id = {p:UUID}) AS e ON s.session_key = e.k
         WHERE s.project_id = {p:UUID} GROUP BY s.day, s.session_key ORDER BY day, session_id`,
        { p: P },
      );
      const day = (t: number) => new Date(t).toISOString().slice(0, 10);
      expect(listed).toEqual([
        { day: day(T0), session_id: 'client-visit' },
        { day: day(T0), session_id: `order-${bucket(T0 + 3600_000)}` },
        { day: day(T0 + DAY), session_id: `a5-${bucket(late)}` },
        { day: day(T0 + 2 * DAY), session_id: `a8-${bucket(T0)}` },
        { day: day(T0 + 2 * DAY), session_id: 'client-visit' },
      ]);
      // ... written before visits in every range: a read never sees a second day of a visit that is not listed yet
      expect(AGGREGATES.findIndex((a) => a.table === 'visit_spans')).toBeLessThan(AGGREGATES.findIndex((a) => a.table === 'visits'));
    });
  });

  it('migration 018 lists the stored visits whose id is not of the server\'s form on the day its number names (014 did not), once', async () => {
    await withDatabase(async (db) => {
      const P = randomUUID();
      const migrations = eventStoreMigrations('embedded');
      await migrateEventStore(store.client, { db, builder: true }, migrations.filter((m) => m.version < 18));
      const bucket = (t: number) => Math.floor(t / 1_800_000);
      const at = T0 + 3600_000;
      await insertSeqs(db, withSeq([
        testRow(P, { at, session_id: `order-${bucket(at)}`, anonymous_id: 'a1' }),
        testRow(P, { at, session_id: `a2-${bucket(at)}`, anonymous_id: 'a2' }),
        testRow(P, { at, session_id: `u3-${bucket(at)}`, anonymous_id: 'a3', user_id: 'u3' }),
        testRow(P, { at, session_id: `u4-${bucket(at)}`, anonymous_id: '', user_id: 'u4' }),
      ], 1));
      await migrateEventStore(store.client, { db, builder: true }, migrations);
      const listed = await store.select<{ k: string }>(`SELECT toString(session_key) AS k FROM ${db}.visit_spans WHERE project_id = {p:UUID} AND day = {d:Date} ORDER BY k`, { p: P, d: new Date(at).toISOString().slice(0, 10) });
      const key = async (session: string, anon: string) => (await store.select<{ k: string }>('SELECT toString(cityHash64({s:String}, {a:String})) AS k', { s: session, a: anon }))[0]!.k;
      // the server writes <anonymous_id, else user_id>-<bucket>: a2's and u4's ids are its form, not listed; the
      // client's order id and a user id beside an anonymous id are not, listed on the day their number names
      const expected = [await key(`order-${bucket(at)}`, 'a1'), await key(`u3-${bucket(at)}`, 'a3')].sort().map((k) => ({ k }));
      expect(listed).toEqual(expected);
    });
  });
});

// daily_dims (016) and quarter_hours (017): each backfills what the builder had built, once, and the builder then
// builds the range it had recorded and the rest; then each holds what its SELECT folds from every event.
const BACKFILLED = [
  {
    table: 'daily_dims' as const,
    version: 16,
    grain: 'day, dim, value, bot',
    // one row per event and dimension: a NULL path is a value of its own, the bot's events apart
    check: async (db: string, P: string, built: unknown[]) => {
      expect(built).toContainEqual({ day: '2026-03-02', dim: 'path', value: null, bot: 0, n: 1, pv: 0, u: 1 });
      expect(built).toContainEqual({ day: '2026-03-02', dim: 'path', value: '/robots', bot: 1, n: 1, pv: 1, u: 1 });
      expect((await store.select<{ n: string }>(`SELECT toString(sum(events)) AS n FROM ${db}.daily_dims WHERE project_id = {p:UUID} AND dim = 'browser'`, { p: P }))[0]!.n).toBe('8');
    },
  },
  {
    table: 'quarter_hours' as const,
    version: 17,
    grain: 'day, slot, bot',
    // every event once, in its quarter hour of its UTC day (23:59 is slot 95; 00:01 the next day's slot 0)
    check: async (_db: string, _P: string, built: unknown[]) => {
      expect(built).toEqual([
        { day: '2026-03-02', slot: 4, bot: 0, n: 2, pv: 1, u: 2 },
        { day: '2026-03-02', slot: 4, bot: 1, n: 1, pv: 1, u: 1 },
        { day: '2026-03-02', slot: 95, bot: 0, n: 2, pv: 1, u: 1 },
        { day: '2026-03-03', slot: 0, bot: 0, n: 2, pv: 2, u: 1 },
        { day: '2026-03-04', slot: 0, bot: 0, n: 1, pv: 1, u: 0 },
      ]);
    },
  },
];

describe.each(BACKFILLED)('the $table aggregate (migration $version)', ({ table, version, grain, check }) => {
  /** Every row of the table merged per its grain, and what the aggregate's SELECT folds from `where`'s events. */
  async function heldRows(db: string, P: string, where = '1'): Promise<{ table: unknown[]; folded: unknown[] }> {
    const merge = `${grain}, toUInt64(sum(events)) AS n, toUInt64(sum(pageviews)) AS pv, uniqCombinedMerge(uniques) AS u`;
    const q = (sql: string) => store.select<Record<string, unknown>>(sql, { p: P });
    const order = `GROUP BY ${grain} ORDER BY ${grain}`;
    return {
      table: await q(`SELECT ${merge} FROM ${db}.${table} WHERE project_id = {p:UUID} ${order}`),
      folded: await q(`SELECT ${merge} FROM (${aggregateSelect(aggregateOf(table), `${db}.events`, `project_id = {p:UUID} AND ${where}`)}) ${order}`),
    };
  }

  it('backfills what the builder built, once, and the builder then builds the range it had recorded and the rest', async () => {
    await withDatabase(async (db) => {
      const P = randomUUID();
      const migrations = eventStoreMigrations('embedded');
      await migrateEventStore(store.client, { db, builder: true }, migrations.filter((m) => m.version < version));
      const [first, second] = rowsOf(P);
      // 1 and 2 built; (2, 3] recorded and not finished; 4 not built
      await insertSeqs(db, [...withSeq(first!.slice(0, 2), 1), ...withSeq(first!.slice(2), 2)]);
      await insertSeqs(db, [...withSeq(second!.slice(0, 2), 3), ...withSeq(second!.slice(2), 4)]);
      await store.command(`INSERT INTO ${db}.aggregate_progress (seq_from, seq_to) VALUES (0, 2), (2, 3)`);
      expect((await migrateEventStore(store.client, { db, builder: true }))[0]).toBe(version);

      const backfilled = await heldRows(db, P, 'insert_seq <= 2');
      expect(backfilled.table).toEqual(backfilled.folded);
      expect(backfilled.table.length).toBeGreaterThan(0);
      expect(await store.select(`SELECT DISTINCT toString(built_seq) AS s FROM ${db}.${table}`, {})).toEqual([{ s: '2' }]);

      const builder = new AggregateBuilder({ db, client: store.client, committedSeq: () => 4 });
      await builder.init();
      await builder.catchUp();
      const built = await heldRows(db, P);
      expect(built.table).toEqual(built.folded);
      await check(db, P, built.table);
    });
  });
});
