import type { ClickHouseClient } from '@clickhouse/client';
import { type Migration, type MigrationTarget, defineMigration, runMigrations, splitStatements } from '@analytics/migrations';
import c001 from './migrations/clustered/001_events.sql';
import c002 from './migrations/clustered/002_aggregates.sql';
import c003 from './migrations/clustered/003_daily_uniques.sql';
import c008 from './migrations/clustered/008_channel.sql';
import c009 from './migrations/clustered/009_properties_map.sql';
import c010 from './migrations/clustered/010_visits.sql';
import c011 from './migrations/clustered/011_event_keys.sql';
import c012 from './migrations/clustered/012_one_builder.sql';
import c013 from './migrations/clustered/013_sources_weekly.sql';
import c014 from './migrations/clustered/014_visit_spans.sql';
import c015 from './migrations/clustered/015_aggregates_merged.sql';
import c016 from './migrations/clustered/016_daily_dims.sql';
import c017 from './migrations/clustered/017_quarter_hours.sql';
import c018 from './migrations/clustered/018_visit_dims.sql';
import e004 from './migrations/embedded/004_aggregate_builder.sql';
import e005 from './migrations/embedded/005_sources_daily.sql';
import e006 from './migrations/embedded/006_daily_uniques_by.sql';
import e007 from './migrations/embedded/007_lightweight_forget.sql';
import e010 from './migrations/embedded/010_visits.sql';
import e012 from './migrations/embedded/012_one_builder.sql';
import e013 from './migrations/embedded/013_sources_weekly.sql';
import s010 from './migrations/server/010_visits.sql';
import s012 from './migrations/server/012_one_builder.sql';
import s013 from './migrations/server/013_sources_weekly.sql';
import u001 from './migrations/unclustered/001_events.sql';
import u002 from './migrations/unclustered/002_aggregates.sql';
import u003 from './migrations/unclustered/003_daily_uniques.sql';
import u008 from './migrations/unclustered/008_channel.sql';
import u009 from './migrations/unclustered/009_properties_map.sql';
import u011 from './migrations/unclustered/011_event_keys.sql';
import u014 from './migrations/unclustered/014_visit_spans.sql';
import u015 from './migrations/unclustered/015_aggregates_merged.sql';
import u016 from './migrations/unclustered/016_daily_dims.sql';
import u017 from './migrations/unclustered/017_quarter_hours.sql';
import u018 from './migrations/unclustered/018_visit_dims.sql';
import { AGGREGATE_PROGRESS_COLUMNS } from './aggregate-progress';
import { DAILY_DIMS_TABLE_COLUMNS, QUARTER_HOURS_TABLE_COLUMNS, VISITS_COLUMN_NAMES, VISITS_TABLE_COLUMNS, VISIT_SPANS_014_SELECT, VISIT_SPANS_TABLE_COLUMNS, aggregateOf, aggregateSelect } from './aggregates';
import { VISIT_DIMS_TABLE_COLUMNS } from './visit-dims';
import { CHANNEL_DEFAULT_SQL } from './channel-default';
import { ANON_DAILY_SQL, ANON_KEY_SQL, VISIT_KEY_SQL } from './event-keys';
import { PROPERTIES_MAP_SQL } from './properties-map';
import { SOURCES_DAILY_COLUMNS, SOURCES_DAILY_LAYOUT } from './sources-daily';
import { DAILY_UNIQUES_BY_COLUMNS, DAILY_UNIQUES_BY_LAYOUT, UNIQUES_BY_GROUPINGS_SQL } from './uniques-by';

/** The migration files by their path under src/tables/migrations (a spec holds this list to the folder). */
export const EVENT_STORE_MIGRATION_FILES: Readonly<Record<string, string>> = {
  'unclustered/001_events.sql': u001,
  'unclustered/002_aggregates.sql': u002,
  'unclustered/003_daily_uniques.sql': u003,
  'unclustered/008_channel.sql': u008,
  'unclustered/009_properties_map.sql': u009,
  'unclustered/011_event_keys.sql': u011,
  'unclustered/014_visit_spans.sql': u014,
  'unclustered/015_aggregates_merged.sql': u015,
  'unclustered/016_daily_dims.sql': u016,
  'unclustered/017_quarter_hours.sql': u017,
  'unclustered/018_visit_dims.sql': u018,
  'clustered/001_events.sql': c001,
  'clustered/002_aggregates.sql': c002,
  'clustered/003_daily_uniques.sql': c003,
  'clustered/008_channel.sql': c008,
  'clustered/009_properties_map.sql': c009,
  'clustered/010_visits.sql': c010,
  'clustered/011_event_keys.sql': c011,
  'clustered/012_one_builder.sql': c012,
  'clustered/013_sources_weekly.sql': c013,
  'clustered/014_visit_spans.sql': c014,
  'clustered/015_aggregates_merged.sql': c015,
  'clustered/016_daily_dims.sql': c016,
  'clustered/017_quarter_hours.sql': c017,
  'clustered/018_visit_dims.sql': c018,
  'embedded/004_aggregate_builder.sql': e004,
  'embedded/005_sources_daily.sql': e005,
  'embedded/006_daily_uniques_by.sql': e006,
  'embedded/007_lightweight_forget.sql': e007,
  'embedded/010_visits.sql': e010,
  'embedded/012_one_builder.sql': e012,
  'embedded/013_sources_weekly.sql': e013,
  'server/010_visits.sql': s010,
  'server/012_one_builder.sql': s012,
  'server/013_sources_weekly.sql': s013,
};

/** embedded: chDB, whose aggregate builder builds the aggregates; server: one ClickHouse, views; cluster: CLICKHOUSE_CLUSTER. */
export type EventStoreMode = 'embedded' | 'server' | 'cluster';

/**
 * The folders each mode takes its files from. Versions are shared by all modes: a version with no file in a mode's
 * folders runs nothing there and is recorded all the same.
 */
export const MODE_FOLDERS: Readonly<Record<EventStoreMode, readonly string[]>> = {
  embedded: ['unclustered', 'embedded'],
  server: ['unclustered', 'server'],
  cluster: ['clustered'],
};

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function assertIdentifier(name: string, what: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`${what} must match ${IDENTIFIER} (got ${JSON.stringify(name)})`);
  return name;
}

export interface TableLayout {
  db: string;
  cluster?: string;
  /**
   * The aggregates are built by the AggregateBuilder off the request path (the embedded store), not by materialized
   * views on every INSERT (a server). The `embedded/` migrations apply only with it, and never in a cluster.
   */
  builder?: boolean;
}

export function modeOf(layout: TableLayout): EventStoreMode {
  if (layout.cluster) return 'cluster';
  return layout.builder ? 'embedded' : 'server';
}

/** Sharding key of the Distributed `events` (and `sessions`): a session's events all land on one shard (docs in 001). */
export const EVENTS_SHARDING_KEY = 'cityHash64(project_id, session_id)';

/** Name of the table holding a table's rows: the table itself single-node, its `<name>_local` replica table in a cluster. */
export function localTableOf(layout: TableLayout, table: string): string {
  return layout.cluster ? `${table}_local` : table;
}

/** The start of the last range the aggregate builder recorded: every event up to it is in every aggregate. */
const LAST_BUILT_SQL = 'SELECT argMax(seq_from, seq_to) FROM ${db}.aggregate_progress';

// SQL the files share with the code: filled in before the checksum, so a change to them is a change to the migration.
const FRAGMENTS: Record<string, string> = {
  events_sharding_key: EVENTS_SHARDING_KEY,
  uniques_by_groupings: UNIQUES_BY_GROUPINGS_SQL,
  sources_daily_columns: SOURCES_DAILY_COLUMNS,
  sources_daily_layout: SOURCES_DAILY_LAYOUT,
  aggregate_progress_columns: AGGREGATE_PROGRESS_COLUMNS,
  daily_uniques_by_columns: DAILY_UNIQUES_BY_COLUMNS,
  daily_uniques_by_layout: DAILY_UNIQUES_BY_LAYOUT,
  channel_default: CHANNEL_DEFAULT_SQL,
  properties_map: PROPERTIES_MAP_SQL,
  anon_key: ANON_KEY_SQL,
  anon_daily: ANON_DAILY_SQL,
  visit_key: VISIT_KEY_SQL,
  visits_columns: VISITS_TABLE_COLUMNS,
  visits_column_names: VISITS_COLUMN_NAMES,
  visits_select: aggregateOf('visits').select.join(', '),
  visits_grain: aggregateOf('visits').grain.join(', '),
  visit_spans_columns: VISIT_SPANS_TABLE_COLUMNS,
  visit_spans_column_names: aggregateOf('visit_spans').columns.join(', '),
  visit_spans_select: VISIT_SPANS_014_SELECT('${db}.events'),
  // Migration 018: the visits the rule since 018 lists that 014's did not (a client's id on the day its number names).
  visit_spans_select_018: aggregateSelect(aggregateOf('visit_spans'), '${db}.events'),
  visit_dims_columns: VISIT_DIMS_TABLE_COLUMNS,
  daily_dims_columns: DAILY_DIMS_TABLE_COLUMNS,
  daily_dims_column_names: aggregateOf('daily_dims').columns.join(', '),
  // The events the builder has built (up to the start of the last range it recorded, which it checks again after a
  // restart and builds where missing), stamped with that seq: as embedded/010_visits.sql backfills visits.
  daily_dims_backfill: aggregateSelect(aggregateOf('daily_dims'), '${db}.events', `insert_seq <= (${LAST_BUILT_SQL})`, [`(${LAST_BUILT_SQL}) AS built_seq`]),
  quarter_hours_columns: QUARTER_HOURS_TABLE_COLUMNS,
  quarter_hours_column_names: aggregateOf('quarter_hours').columns.join(', '),
  // as daily_dims_backfill (017 is to quarter_hours what 016 is to daily_dims)
  quarter_hours_backfill: aggregateSelect(aggregateOf('quarter_hours'), '${db}.events', `insert_seq <= (${LAST_BUILT_SQL})`, [`(${LAST_BUILT_SQL}) AS built_seq`]),
};
// The deployment's names: filled in last, so a database or cluster renamed keeps its checksums.
const NAMES = ['db', 'cluster'];

function fill(text: string, vars: Record<string, string>, keep: readonly string[] = []): string {
  return text.replace(/\$\{(\w+)\}/g, (whole, name: string) => {
    const value = vars[name];
    if (value !== undefined) return value;
    if (keep.includes(name)) return whole;
    throw new Error(`unknown migration variable ${name}`);
  });
}

/** The migrations a mode runs, in order, with `${db}` and `${cluster}` still in their statements. */
export function eventStoreMigrations(mode: EventStoreMode): Migration[] {
  const fileNames = [...new Set(Object.keys(EVENT_STORE_MIGRATION_FILES).map((path) => path.slice(path.indexOf('/') + 1)))].sort();
  return fileNames.map((fileName) => {
    const paths = MODE_FOLDERS[mode].map((folder) => `${folder}/${fileName}`).filter((path) => path in EVENT_STORE_MIGRATION_FILES);
    if (paths.length > 1) throw new Error(`${mode} mode has two files for one migration: ${paths.join(', ')}`);
    const path = paths[0];
    const statements = path ? splitStatements(EVENT_STORE_MIGRATION_FILES[path]!).map((s) => fill(s, FRAGMENTS, NAMES)) : [];
    return defineMigration(fileName, statements, path);
  });
}

/** A migration's statements for this store: its database and cluster names filled in. */
export function renderMigration(migration: Migration, layout: TableLayout): string[] {
  return migration.statements.map((s) => fill(s, { db: layout.db, cluster: layout.cluster ?? '' }));
}

/** Every migration of the layout's mode, in order, as the statements it runs there (none where it has no file). */
export function renderMigrations(layout: TableLayout): string[][] {
  return eventStoreMigrations(modeOf(layout)).map((m) => renderMigration(m, layout));
}

/** Applies the layout's mode's pending migrations (or refuses to start when an applied one changed); returns their versions. */
export async function migrateEventStore(client: ClickHouseClient, layout: TableLayout, migrations = eventStoreMigrations(modeOf(layout))): Promise<number[]> {
  const db = assertIdentifier(layout.db, 'CLICKHOUSE_DATABASE');
  const onCluster = layout.cluster ? ` ON CLUSTER ${assertIdentifier(layout.cluster, 'CLICKHOUSE_CLUSTER')}` : '';
  const table = `${db}.schema_migrations`;
  const target: MigrationTarget = {
    async listApplied() {
      await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}${onCluster}` });
      await client.command({
        query: `CREATE TABLE IF NOT EXISTS ${table}${onCluster} (version UInt32, name String, applied_at DateTime DEFAULT now()) ENGINE = ${layout.cluster ? `ReplicatedMergeTree('/clickhouse/tables/{shard}/${db}/schema_migrations', '{replica}')` : 'MergeTree'} ORDER BY version`,
      });
      // Stores from before checksums: '' until the runner records one.
      await client.command({ query: `ALTER TABLE ${table}${onCluster} ADD COLUMN IF NOT EXISTS checksum String DEFAULT ''` });
      const rs = await client.query({ query: `SELECT version, name, checksum FROM ${table}`, format: 'JSONEachRow' });
      return (await rs.json<{ version: number; name: string; checksum: string }>()).map((r) => ({ version: Number(r.version), name: r.name, checksum: r.checksum || null }));
    },
    async apply(m) {
      for (const statement of renderMigration(m, layout)) await client.command({ query: statement });
    },
    // The table is append-only: a checksum for an old row is one more row of the version, which listApplied reads with it.
    async record(m) {
      await client.insert({ table, values: [{ version: m.version, name: m.name, checksum: m.checksum }], format: 'JSONEachRow', columns: ['version', 'name', 'checksum'] });
    },
  };
  return runMigrations(target, migrations, 'the event store');
}
