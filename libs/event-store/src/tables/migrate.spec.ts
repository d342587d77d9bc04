import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineMigration } from '@analytics/migrations';
import type { EventStore } from '../event-store';
import { useTestStore, withDatabase as withTestDatabase } from '../test-support/test-store';
import { EVENT_STORE_MIGRATION_FILES, type EventStoreMode, type TableLayout, eventStoreMigrations, migrateEventStore, renderMigrations } from './migrate';

// Real chDB (one data path per process: closed in afterAll); each test migrates a database of its own through it.
let store: EventStore;
useTestStore((opened) => ({ store } = opened), { aggregateIntervalMs: 60_000 });

const withDatabase = (run: (db: string) => Promise<void>) => withTestDatabase(store, run);

const layoutOf = (db: string, mode: 'embedded' | 'server'): TableLayout => (mode === 'embedded' ? { db, builder: true } : { db });
const recorded = (db: string) =>
  store.select<{ version: number; name: string; checksum: string }>(`SELECT version, name, checksum FROM ${db}.schema_migrations ORDER BY version, checksum`, {});
const expected = (mode: EventStoreMode) => eventStoreMigrations(mode).map(({ version, name, checksum }) => ({ version, name, checksum }));

/** The embedded list with 002 as if its file had gained a statement after it was applied. */
function with002Changed() {
  return eventStoreMigrations('embedded').map((m) => (m.version === 2 ? defineMigration('002_aggregates.sql', [...m.statements, 'SELECT 1'], m.file) : m));
}

describe('event-store migrations on chDB', () => {
  it.each(['embedded', 'server'] as const)('apply every migration to a fresh %s store and record each checksum', async (mode) => {
    await withDatabase(async (db) => {
      expect(await migrateEventStore(store.client, layoutOf(db, mode))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]);
      expect((await recorded(db)).map((r) => ({ ...r, version: Number(r.version) }))).toEqual(expected(mode));
      expect(await migrateEventStore(store.client, layoutOf(db, mode))).toEqual([]);
      // 015: the engine merges the parts of visits and daily_rollup all older than an hour (a day then reads one part)
      for (const table of ['visits', 'daily_rollup', 'daily_dims', 'quarter_hours']) {
        const [created] = await store.select<{ q: string }>(`SELECT create_table_query AS q FROM system.tables WHERE database = {db:String} AND name = {table:String}`, { db, table });
        expect(created!.q).toMatch(/SETTINGS .*min_age_to_force_merge_seconds = 3600/);
      }
    });
  });

  it('refuse to start, naming the file, when an applied migration has changed, and apply nothing', async () => {
    await withDatabase(async (db) => {
      await migrateEventStore(store.client, layoutOf(db, 'embedded'), eventStoreMigrations('embedded').slice(0, 3));
      await expect(migrateEventStore(store.client, layoutOf(db, 'embedded'), with002Changed())).rejects.toThrow(
        'the event store refuses to start: migration unclustered/002_aggregates.sql has changed since it was applied',
      );
      expect(await recorded(db)).toHaveLength(3);
      expect(await store.select(`SELECT name FROM system.tables WHERE database = {db:String} AND name = 'aggregate_progress'`, { db })).toEqual([]);
    });
  });

  it('record the checksums of a store migrated before checksums existed, then check them', async () => {
    await withDatabase(async (db) => {
      await migrateEventStore(store.client, layoutOf(db, 'embedded'));
      // the table as it was before checksums
      await store.command(`ALTER TABLE ${db}.schema_migrations DROP COLUMN checksum`);
      expect(await migrateEventStore(store.client, layoutOf(db, 'embedded'))).toEqual([]);
      const rows = await recorded(db);
      expect(rows.filter((r) => r.checksum !== '').map((r) => ({ ...r, version: Number(r.version) }))).toEqual(expected('embedded'));
      expect(await migrateEventStore(store.client, layoutOf(db, 'embedded'))).toEqual([]);
      expect(await recorded(db)).toHaveLength(rows.length);
      await expect(migrateEventStore(store.client, layoutOf(db, 'embedded'), with002Changed())).rejects.toThrow(/migration unclustered\/002_aggregates\.sql has changed/);
    });
  });
});

describe('the event-store migration files', () => {
  it('are each listed once, with the text of the file', () => {
    const root = join(__dirname, 'migrations');
    const onDisk = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.sql')).sort();
    expect(Object.keys(EVENT_STORE_MIGRATION_FILES).sort()).toEqual(onDisk);
    for (const f of onDisk) expect(EVENT_STORE_MIGRATION_FILES[f]).toBe(readFileSync(join(root, f), 'utf8'));
  });

  // No cluster runs here: 012's clustered form is checked as rendered (docs/cluster.md has the reasoning).
  it('render 012 for a cluster: every DDL statement ON CLUSTER, the builder tables replicated, the views dropped on every node', () => {
    const statements = renderMigrations({ db: 'analytics', cluster: 'main' })[11]!;
    for (const s of statements.slice(0, -1)) expect(s).toContain('ON CLUSTER main');
    const text = statements.join('\n');
    for (const view of ['daily_rollup_mv', 'daily_uniques_mv', 'sessions_mv', 'visits_mv']) expect(statements).toContain(`DROP VIEW IF EXISTS analytics.${view} ON CLUSTER main`);
    expect(text).toContain("ReplicatedReplacingMergeTree('/clickhouse/tables/all/analytics/aggregate_progress', '{shard}-{replica}', seq_to)");
    expect(text).toContain("ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/analytics/daily_uniques_by_local', '{replica}')");
    expect(text).toContain('ENGINE = Distributed(main, analytics, daily_uniques_by_local)');
    expect(text).toContain('ENGINE = Distributed(main, analytics, sources_daily_local, cityHash64(project_id, day))');
    for (const table of ['events_local', 'events']) for (const column of ['insert_seq', 'insert_writer', 'insert_rows']) expect(text).toContain(`ALTER TABLE analytics.${table} ON CLUSTER main ADD COLUMN IF NOT EXISTS ${column} `);
    expect(statements.at(-1)).toMatch(/^INSERT INTO analytics\.daily_uniques_by [\s\S]*SETTINGS parallel_distributed_insert_select = 2/);
    // And on a single server: no view survives 012.
    expect(renderMigrations({ db: 'analytics' })[11]!.filter((s) => s.startsWith('DROP VIEW'))).toHaveLength(4);
  });

  it('render 013 (sources_weekly) in every mode: a cluster as its sources_daily (weeks replicated on every node, rows sharded by project and week)', () => {
    const cluster = renderMigrations({ db: 'analytics', cluster: 'main' })[12]!;
    for (const s of cluster) expect(s).toContain('ON CLUSTER main');
    const text = cluster.join('\n');
    expect(text).toContain("ReplicatedReplacingMergeTree('/clickhouse/tables/all/analytics/sources_weekly_weeks', '{shard}-{replica}', built_seq)");
    expect(text).toContain("ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/analytics/sources_weekly_local', '{replica}', version)");
    expect(text).toContain('ENGINE = Distributed(main, analytics, sources_weekly_local, cityHash64(project_id, day))');
    for (const layout of [{ db: 'analytics' }, { db: 'analytics', builder: true }]) {
      const [weekly, weeks] = renderMigrations(layout)[12]!;
      expect(weekly).toMatch(/^CREATE TABLE IF NOT EXISTS analytics\.sources_weekly\n[\s\S]*ENGINE = ReplacingMergeTree\(version\)\nPARTITION BY toYYYYMM\(day\)\nORDER BY \(project_id, day, source, medium\)/);
      expect(weeks).toMatch(/^CREATE TABLE IF NOT EXISTS analytics\.sources_weekly_weeks /);
    }
  });

  it('render 015 (aggregates merged within the hour) for a cluster: on every replica of visits_local and daily_rollup_local', () => {
    const setting = (table: string, onCluster = '') => `ALTER TABLE analytics.${table}${onCluster} MODIFY SETTING min_age_to_force_merge_seconds = 3600`;
    expect(renderMigrations({ db: 'analytics', cluster: 'main' })[14]).toEqual([setting('visits_local', ' ON CLUSTER main'), setting('daily_rollup_local', ' ON CLUSTER main')]);
    for (const layout of [{ db: 'analytics' }, { db: 'analytics', builder: true }]) expect(renderMigrations(layout)[14]).toEqual([setting('visits'), setting('daily_rollup')]);
  });

  // A changed checksum here makes every store that applied the migration refuse to start: put the change in a new one.
  it('stay as they were applied: checksums pinned per mode', () => {
    const modes = ['embedded', 'server', 'cluster'] as const;
    expect(Object.fromEntries(modes.map((mode) => [mode, eventStoreMigrations(mode).map((m) => `${m.name} ${m.file ?? '-'} ${m.checksum}`)]))).toEqual(PINNED);
  });
});

const PINNED = {
  embedded: [
    '001_events unclustered/001_events.sql 2c18896acbd199b538165db48b026a69a6fac794d2aa090499cfbdbb0173cc84',
    '002_aggregates unclustered/002_aggregates.sql 036a2d106feb6ac4536f278e30ac4e77728df48d05d17af1bc68607439e41ce1',
    '003_daily_uniques unclustered/003_daily_uniques.sql 65ce5e6c9c011ac57fefcfe88bf6164b5cf99415f253a00040db10cffccd71a9',
    '004_aggregate_builder embedded/004_aggregate_builder.sql b530becefed88891ed29708fb894e4ff54aa6c4225aad91a7eb1fe959bf89745',
    '005_sources_daily embedded/005_sources_daily.sql 4fc80fc76adcde7f07319f5e602df31d8e19382ec464857ba2d2a240a0716fc2',
    '006_daily_uniques_by embedded/006_daily_uniques_by.sql 9183a3b4d76974ae9b0b7e238c3c1eb4ae37b6a60eae4ef67d2513b89748302e',
    '007_lightweight_forget embedded/007_lightweight_forget.sql db4c60b16a2a7722194852a9401df17093112bf944bb37fc4ace8f5f429ccab9',
    '008_channel unclustered/008_channel.sql 738f06779466ba599b4bae1236455b9b0b7dee145aed24f48ced15fbd0edce1c',
    '009_properties_map unclustered/009_properties_map.sql 22899a0b1b2fd23158a42044477b7f64601d3f575b313813026372befa0da6ec',
    '010_visits embedded/010_visits.sql 957a14f5d7bfecf9e4a6c2e3a8329a8ec8738663be2917e8d3425b0f27e1a7da',
    '011_event_keys unclustered/011_event_keys.sql 3be25f07228c84c26686d91df7db7891700ac75d74efbf04c1693fbcdeeec193',
    '012_one_builder embedded/012_one_builder.sql ada7e62023ae383fb4d23e8772bfa4c3749b1232fe8a979f1e36055b6e359617',
    '013_sources_weekly embedded/013_sources_weekly.sql 94093045eae59b87f309c9c5386c430010afe585769a885b3d7d31f33a2db1d3',
    '014_visit_spans unclustered/014_visit_spans.sql 6fb3f27832c78e764c73a69e4066b0cfbc85369d28c69c633a382d3727ae87f0',
    '015_aggregates_merged unclustered/015_aggregates_merged.sql ef510f954254955987cfadad3e7e69b7ac1557ebf928f5cd6a48d95c96b4200a',
    '016_daily_dims unclustered/016_daily_dims.sql f48e4de5276a0ad09bc43a7d75581c3ca20d936e036f1fe207c17678741724ba',
    '017_quarter_hours unclustered/017_quarter_hours.sql a5b9086acb1c60d963d2df4e9d04d32b17978f33aa43ce671fda5b85df869384',
    '018_visit_dims unclustered/018_visit_dims.sql ebeab8d0e95030de34c20e5aebddbf857d82abc25e893c6c2dec41d11ea16d81',
  ],
  server: [
    '001_events unclustered/001_events.sql 2c18896acbd199b538165db48b026a69a6fac794d2aa090499cfbdbb0173cc84',
    '002_aggregates unclustered/002_aggregates.sql 036a2d106feb6ac4536f278e30ac4e77728df48d05d17af1bc68607439e41ce1',
    '003_daily_uniques unclustered/003_daily_uniques.sql 65ce5e6c9c011ac57fefcfe88bf6164b5cf99415f253a00040db10cffccd71a9',
    '004_aggregate_builder - e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    '005_sources_daily - e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    '006_daily_uniques_by - e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    '007_lightweight_forget - e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    '008_channel unclustered/008_channel.sql 738f06779466ba599b4bae1236455b9b0b7dee145aed24f48ced15fbd0edce1c',
    '009_properties_map unclustered/009_properties_map.sql 22899a0b1b2fd23158a42044477b7f64601d3f575b313813026372befa0da6ec',
    '010_visits server/010_visits.sql 06d086b1d6b415e314981b31f122cfc2a367e619170a246c321c6fb7b3234863',
    '011_event_keys unclustered/011_event_keys.sql 3be25f07228c84c26686d91df7db7891700ac75d74efbf04c1693fbcdeeec193',
    '012_one_builder server/012_one_builder.sql d28c430980685aa0da1b366f16b5207615c4115f85f2ee964ecc9c7d5860a692',
    '013_sources_weekly server/013_sources_weekly.sql 94093045eae59b87f309c9c5386c430010afe585769a885b3d7d31f33a2db1d3',
    '014_visit_spans unclustered/014_visit_spans.sql 6fb3f27832c78e764c73a69e4066b0cfbc85369d28c69c633a382d3727ae87f0',
    '015_aggregates_merged unclustered/015_aggregates_merged.sql ef510f954254955987cfadad3e7e69b7ac1557ebf928f5cd6a48d95c96b4200a',
    '016_daily_dims unclustered/016_daily_dims.sql f48e4de5276a0ad09bc43a7d75581c3ca20d936e036f1fe207c17678741724ba',
    '017_quarter_hours unclustered/017_quarter_hours.sql a5b9086acb1c60d963d2df4e9d04d32b17978f33aa43ce671fda5b85df869384',
    '018_visit_dims unclustered/018_visit_dims.sql ebeab8d0e95030de34c20e5aebddbf857d82abc25e893c6c2dec41d11ea16d81',
  ],
  cluster: [
    '001_events clustered/001_events.sql 08a8d33d7d325c000d48ce6014448d7203b050f8cb0ee61e5f38a1403962aa52',
    '002_aggregates clustered/002_aggregates.sql 3b470d8f80c09d497bc4274e95b5c96365555ca9054c3482297350150b11242d',
    '003_daily_uniques clustered/003_daily_uniques.sql db4e1e9eb831e2341e73204c2220cbdfb9c58747c4ad0f248a0a10294dfdf434',
    '004_aggregate_builder - e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    '005_sources_daily - e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    '006_daily_uniques_by - e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    '007_lightweight_forget - e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    '008_channel clustered/008_channel.sql 0abb7e13f43d30056a3558788648fd66f32f04a7699adc4a688c3f30c278091f',
    '009_properties_map clustered/009_properties_map.sql 865cd4a55d15f5eb426c84a7283ce37e98c07ebf4898485130f4172253906b1a',
    '010_visits clustered/010_visits.sql 7125da05e9151ae77de01871374739eac2f2da8cbd6c6b61cdf59e4098c73c3f',
    '011_event_keys clustered/011_event_keys.sql c429f18cab97575c92492dcee9317d0208135fed075804d661dd87795ed3a352',
    '012_one_builder clustered/012_one_builder.sql 8f49a8a9300103be45183574e7c309a65d02b7b59fe568f5149b556252ff3624',
    '013_sources_weekly clustered/013_sources_weekly.sql 09a5e6622bf3d3c3bb0a1653e0ad8449a382f1615ce1ebfbcd4bf624bb382668',
    '014_visit_spans clustered/014_visit_spans.sql d34fa39733655bec3a2090287a112abe29b42b6bb8c57343b22d3706770fc9b9',
    '015_aggregates_merged clustered/015_aggregates_merged.sql f070a7549480d45c91014177acc27fbc923244f796948bb12f3d802d0b367e1a',
    '016_daily_dims clustered/016_daily_dims.sql 1b692b8d0c75d59ceca05e4d70ac9baf3b33b4eddb35f72512fff07be30f2e5a',
    '017_quarter_hours clustered/017_quarter_hours.sql 617a4f36ccf6cbace78155e0593672e103fd902aeba6e89abfeb5a05250e0a4b',
    '018_visit_dims clustered/018_visit_dims.sql f92cb312bbdd147bdfe68487aca3586aff4147aefa5bb1cb522ba8c8ba5f1136',
  ],
};
