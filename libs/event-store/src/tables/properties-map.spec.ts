import { randomUUID } from 'node:crypto';
import { EVENT_INSERT_COLUMNS, type EventRow, insightsBodySchema } from '@analytics/schema';
import type { EventStore } from '../event-store';
import { propSql } from '../queries/dimension-sql';
import { buildInsights } from '../queries/insights.query';
import { PROPERTY_KEYS_SQL, buildProperties } from '../queries/properties.query';
import { eventStoreMigrations, migrateEventStore, renderMigrations } from './migrate';
import type { ReadTables } from './read-tables';
import { useTestStore, withDatabase as withTestDatabase } from '../test-support/test-store';
import { testRow } from '../test-support/test-rows';

// Real chDB (one data path per process: closed in afterAll); each test migrates a database of its own through it.
let store: EventStore;
useTestStore((opened) => ({ store } = opened));

const T0 = Date.UTC(2026, 2, 2);
const FROM = new Date(T0).toISOString();
const TO = new Date(T0 + 86_400_000).toISOString();

/** Every kind of value a property can hold (the writer stores JSON.stringify of the request's properties). */
const PROPERTIES: Array<Record<string, unknown>> = [
  { s: 'pro', n: 42, b: true },
  { s: 'team', n: -1.5, b: false, o: { a: [1, 'x', null], b: { c: 'é' } } },
  { s: '', n: 1.5e-7, arr: [], obj: {}, z: null },
  { s: 'null', n: 0, z: null, u: 'Ünïcødé 日本 🎉' },
  { s: 'quote " backslash \\ newline \n tab \t', e: '\u0000\u001f', o: { q: 'a"b\\c\nd', u: '日本' } },
  { 'key with spaces.and.dots': 'v', '': 'empty key', 'clé': 'ünï', z: 'not null here' },
  { s: 'pro', big: 12345678901234, neg: -0, nested: [[{ x: [] }]] },
  // null values alone: an empty map, the keys in the JSON only
  { only_null: null, z: null },
  {},
];

/** A property's value as apps/read-api's propValue (the meaning of prop:<key>): strings as themselves, others as JSON. */
function propValue(row: EventRow, key: string): string | null {
  const props = JSON.parse(row.properties) as Record<string, unknown>;
  if (!Object.prototype.hasOwnProperty.call(props, key) || props[key] === null) return null;
  const v = props[key];
  return typeof v === 'string' ? v : JSON.stringify(v);
}

const KEYS = [...new Set(PROPERTIES.flatMap((p) => Object.keys(p)))].concat('absent');
const byteOrder = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : Buffer.compare(Buffer.from(a), Buffer.from(b)));
const tablesOf = (db: string): ReadTables => ({ events: `${db}.events`, dailyRollup: `${db}.daily_rollup`, dailyUniques: `${db}.daily_uniques`, sessions: `${db}.sessions`, visits: `${db}.visits`, visitSpans: `${db}.visit_spans`, dailyDims: `${db}.daily_dims`, quarterHours: `${db}.quarter_hours` });

const withDatabase = (run: (db: string) => Promise<void>) => withTestDatabase(store, run);

const rowsOf = (P: string, tag: string): EventRow[] => PROPERTIES.map((p, i) => testRow(P, { at: T0 + i * 1000, event_id: `${tag}-${i}`, anonymous_id: `a-${i}`, properties: JSON.stringify(p) }));
const insert = (db: string, rows: EventRow[]) => store.client.insert({ table: `${db}.events`, values: rows, format: 'JSONEachRow', columns: EVENT_INSERT_COLUMNS as unknown as [string, ...string[]] });

/** Checks every way the map is read against propValue over `rows` (the project's only events in `db`). */
async function expectPropValues(db: string, P: string, rows: EventRow[]): Promise<void> {
  // the map itself: one entry per key with a non-null value, the value as propValue gives it
  const maps = await store.select<{ event_id: string; m: Record<string, string> }>(`SELECT event_id, properties_map AS m FROM ${db}.events WHERE project_id = {p:UUID} ORDER BY event_id`, { p: P });
  const sorted = [...rows].sort((a, b) => (a.event_id < b.event_id ? -1 : 1));
  expect(maps).toEqual(sorted.map((r) => ({ event_id: r.event_id, m: Object.fromEntries(KEYS.flatMap((k) => (propValue(r, k) === null ? [] : [[k, propValue(r, k)]]))) })));

  // (the empty key '' is in the map and among the keys below, but neither prop: nor ?key= accepts it)
  for (const key of KEYS.filter((k) => k !== '')) {
    // prop:<key> as an insights dimension: events per value (absent and null as one null group)
    const q = insightsBodySchema.parse({ from: FROM, to: TO, metrics: ['events'], dimensions: [`prop:${key}`], include_bots: true });
    const { sql, params } = buildInsights(tablesOf(db), P, q);
    const got = (await store.select<{ o0: string | null; m0: string }>(sql, params)).map((r) => [r.o0, Number(r.m0)] as const);
    const counts = new Map<string | null, number>();
    for (const r of rows) counts.set(propValue(r, key), (counts.get(propValue(r, key)) ?? 0) + 1);
    const order = (a: readonly [string | null, number], b: readonly [string | null, number]) => b[1] - a[1] || byteOrder(a[0], b[0]);
    expect({ key, rows: got }).toEqual({ key, rows: [...counts].sort(order) });

    // GET /v1/properties?key=: the values, null and absent left out
    const values = buildProperties(tablesOf(db), P, { from: T0, to: T0 + 86_400_000, key });
    const gotValues = (await store.select<{ value: string; events: string }>(values.sql, values.params)).map((r) => [r.value, Number(r.events)] as const);
    expect({ key, values: gotValues }).toEqual({ key, values: [...counts].filter(([v]) => v !== null).sort(order) });
  }

  // prop:<key> as a filter, on the values that are hardest to match: escaped and unicode strings, nested JSON text
  for (const [key, value] of [['s', 'quote " backslash \\ newline \n tab \t'], ['u', 'Ünïcødé 日本 🎉'], ['o', JSON.stringify(PROPERTIES[1]!.o)], ['s', ''], ['z', 'null']] as const) {
    const q = insightsBodySchema.parse({ from: FROM, to: TO, metrics: ['events'], filters: [['is', `prop:${key}`, [value]]], include_bots: true });
    const { sql, params } = buildInsights(tablesOf(db), P, q);
    const got = (await store.select<{ m0: string }>(sql, params)).map((r) => Number(r.m0));
    expect({ key, value, events: got }).toEqual({ key, value, events: [rows.filter((r) => propValue(r, key) === value).length] });
  }

  // GET /v1/properties: the keys, a key whose value is null included (JSON.parse's keys)
  const keys = buildProperties(tablesOf(db), P, { from: T0, to: T0 + 86_400_000 });
  const gotKeys = (await store.select<{ key: string; events: string }>(keys.sql, keys.params)).map((r) => [r.key, Number(r.events)] as const);
  const keyCounts = new Map<string, number>();
  for (const r of rows) for (const k of Object.keys(JSON.parse(r.properties) as object)) keyCounts.set(k, (keyCounts.get(k) ?? 0) + 1);
  expect(gotKeys).toEqual([...keyCounts].sort((a, b) => b[1] - a[1] || byteOrder(a[0], b[0])));
}

/** What prop:<key> read before migration 009: the key parsed from the JSON per row (JSONExtractRaw). */
const jsonPropSql = (k: string) => {
  const raw = `JSONExtractRaw(properties, {${k}:String})`;
  return `if(${raw} IN ('', 'null'), NULL, if(startsWith(${raw}, '"'), JSONExtractString(${raw}), ${raw}))`;
};

describe('events.properties_map (migration 009)', () => {
  // Where ClickHouse's JSON differs from JSON.stringify, the map keeps what the JSON reading gave (never a new answer):
  // a positive exponent is written without its `+` (1e+21 as 1e21), and an integer beyond 64 bits (JSON.stringify
  // writes 1e20 to 1e21 as integers) makes the whole object unreadable: no key, as JSONExtractKeys gives none.
  it('holds, key by key, what the JSON reading gave, numbers ClickHouse writes unlike JSON.stringify included', async () => {
    await withDatabase(async (db) => {
      await migrateEventStore(store.client, { db });
      const P = randomUUID();
      const odd = [{ a: 1e21, b: 1.5e300, c: 5e-324, s: 'x' }, { a: 1e20, s: 'x' }, ...PROPERTIES];
      await insert(db, odd.map((p, i) => testRow(P, { at: T0 + i, event_id: `odd-${i}`, properties: JSON.stringify(p) })));
      const keys = ['a', 'b', 'c', ...KEYS];
      const params = Object.fromEntries(keys.map((k, i) => [`k${i}`, k]));
      const cells = (read: (k: string) => string) => keys.map((_, i) => read(`k${i}`)).join(', ');
      const rows = await store.select<{ json: Array<string | null>; map: Array<string | null>; keys: string[]; json_keys: string[] }>(
        `SELECT [${cells(jsonPropSql)}] AS json, [${cells(propSql)}] AS map, arraySort(${PROPERTY_KEYS_SQL}) AS keys, arraySort(JSONExtractKeys(properties)) AS json_keys FROM ${db}.events WHERE project_id = {p:UUID} ORDER BY timestamp`,
        { p: P, ...params },
      );
      expect(rows.map((r) => r.map)).toEqual(rows.map((r) => r.json));
      expect(rows.map((r) => r.keys)).toEqual(rows.map((r) => r.json_keys));
      expect(rows.slice(0, 2).map((r) => r.map.slice(0, 3))).toEqual([['1e21', '1.5e300', '5e-324'], [null, null, null]]);
      expect(rows[1]!.keys).toEqual([]);
    });
  });

  it('reads as propValue for rows stored before the migration (computed on read), after their merge, and for rows stored after it', async () => {
    await withDatabase(async (db) => {
      const P = randomUUID();
      const migrations = eventStoreMigrations('server');
      expect(await migrateEventStore(store.client, { db }, migrations.slice(0, 8))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      const old = rowsOf(P, 'old');
      await insert(db, old);
      expect(await migrateEventStore(store.client, { db }, migrations.filter((m) => m.version <= 9))).toEqual([9]);
      await expectPropValues(db, P, old);
      // the migration's mutation writes the old rows' map into their part in the background, without a merge
      const written = async () =>
        Number((await store.select<{ n: string }>(`SELECT count() AS n FROM system.parts_columns WHERE database = {db:String} AND table = 'events' AND active AND column = 'properties_map'`, { db }))[0]!.n);
      for (let i = 0; i < 100 && (await written()) === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await written()).toBeGreaterThan(0);
      await expectPropValues(db, P, old);

      const later = rowsOf(P, 'new');
      await insert(db, later);
      await expectPropValues(db, P, [...old, ...later]);
      // merged: the old rows' map is written into the part, with the same values
      await store.command(`OPTIMIZE TABLE ${db}.events FINAL`);
      const parts = await store.select<{ n: string }>(`SELECT count() AS n FROM system.parts_columns WHERE database = {db:String} AND table = 'events' AND active AND column = 'properties_map'`, { db });
      expect(Number(parts[0]!.n)).toBeGreaterThan(0);
      await expectPropValues(db, P, [...old, ...later]);
    });
  });

  it('is never inserted nor selected by *: SELECT * of events has no properties_map', async () => {
    await withDatabase(async (db) => {
      await migrateEventStore(store.client, { db });
      const P = randomUUID();
      await insert(db, rowsOf(P, 'x').slice(0, 1));
      const [row] = await store.select<Record<string, unknown>>(`SELECT * FROM ${db}.events WHERE project_id = {p:UUID}`, { p: P });
      expect(Object.keys(row!)).not.toContain('properties_map');
      expect(Object.keys(row!)).toContain('properties');
    });
  });

  it('is added in a cluster to events_local and, MATERIALIZED the same, to the Distributed events', () => {
    const m9 = renderMigrations({ db: 'analytics', cluster: 'main' })[8]!;
    expect(m9).toHaveLength(3);
    expect(m9[0]).toMatch(/^ALTER TABLE analytics\.events_local ON CLUSTER main ADD COLUMN IF NOT EXISTS properties_map Map\(LowCardinality\(String\), String\) MATERIALIZED\n/);
    expect(m9[1]).toBe(m9[0]!.replace('analytics.events_local', 'analytics.events'));
    // the rows already stored: written by a mutation on each shard's table
    expect(m9[2]).toBe('ALTER TABLE analytics.events_local ON CLUSTER main MATERIALIZE COLUMN properties_map');
  });
});
