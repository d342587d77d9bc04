import { EVENT_COLUMNS, EVENT_INSERT_COLUMNS, QUERY_SELECT_COLUMNS } from '@analytics/schema';
import type { EventStore } from '../event-store';
import { useTestStore } from '../test-support/test-store';

let store: EventStore;
useTestStore((opened) => ({ store } = opened));

type Column = { name: string; type: string; default_kind: string };
/** The aggregate builder's bookkeeping (migrations 004 and 012): EventStore stamps every INSERT with it; not an event field. */
const BOOKKEEPING = new Set(['insert_seq', 'insert_seq_in', 'insert_writer', 'insert_writer_in', 'insert_rows', 'insert_rows_in']);
const tableColumns = async () =>
  (
    await store.select<Column>('SELECT name, type, default_kind FROM system.columns WHERE database = {db:String} AND table = {t:String} ORDER BY position', {
      db: store.db,
      t: 'events',
    })
  ).filter((c) => !BOOKKEEPING.has(c.name));

describe('the event-column descriptor (libs/schema) against the table the migrations create', () => {
  it('names every stored column of events with its ClickHouse type, in table order', async () => {
    const stored = (await tableColumns()).filter((c) => c.default_kind !== 'EPHEMERAL' && c.default_kind !== 'MATERIALIZED').map(({ name, type }) => ({ name, type }));
    expect(EVENT_COLUMNS.map(({ name, type }) => ({ name, type }))).toEqual(stored);
  });

  it('leaves out only the MATERIALIZED columns (properties_map, migration 009; anon_key, anon_daily and visit_key, 011): never inserted nor returned', async () => {
    const derived = (await tableColumns()).filter((c) => c.default_kind === 'MATERIALIZED');
    expect(derived).toEqual([
      { name: 'anon_key', type: 'UInt128', default_kind: 'MATERIALIZED' },
      { name: 'anon_daily', type: 'UInt8', default_kind: 'MATERIALIZED' },
      { name: 'visit_key', type: 'UInt64', default_kind: 'MATERIALIZED' },
      { name: 'properties_map', type: 'Map(LowCardinality(String), String)', default_kind: 'MATERIALIZED' },
    ]);
    for (const name of derived.map((c) => c.name)) {
      expect(EVENT_INSERT_COLUMNS).not.toContain(name);
      expect(QUERY_SELECT_COLUMNS).not.toContain(name);
    }
  });

  it('inserts through exactly the insertable columns: every stored one but ip_hash, plus the EPHEMERAL ip_hash_hex it is made from', async () => {
    const columns = await tableColumns();
    // channel has a DEFAULT only for rows stored before migration 008; the writer always sends it. ip_hash is made by the table.
    const insertable = columns.filter((c) => c.default_kind === '' || c.default_kind === 'EPHEMERAL' || c.name === 'channel').map((c) => c.name);
    expect([...EVENT_INSERT_COLUMNS].sort()).toEqual(insertable.sort());
  });

  it('selects only stored columns for GET /v1/query, never ip_hash or project_id', async () => {
    const names = new Set((await tableColumns()).map((c) => c.name));
    for (const c of QUERY_SELECT_COLUMNS) expect(names.has(c)).toBe(true);
    expect(QUERY_SELECT_COLUMNS).not.toContain('ip_hash');
    expect(QUERY_SELECT_COLUMNS).not.toContain('project_id');
  });
});
