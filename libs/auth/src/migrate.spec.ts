import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineMigration, splitStatements } from '@analytics/migrations';
import { KEY_STORE_MIGRATIONS, migrateKeyStore } from './migrate';
import type { SqlPort } from './sql-port';
import { keyStoreBackends } from './test-backends';

const recorded = async (db: SqlPort) => (await db.query<{ version: number; name: string; checksum: string | null }>('SELECT version, name, checksum FROM schema_migrations ORDER BY version')).rows;
const expected = KEY_STORE_MIGRATIONS.map(({ version, name, checksum }) => ({ version, name, checksum }));
/** The list with 002 as if its file had gained a statement after it was applied. */
const with002Changed = KEY_STORE_MIGRATIONS.map((m) => (m.version === 2 ? defineMigration('002_oauth.sql', [...m.statements, 'SELECT 1'], m.file) : m));

describe.each(keyStoreBackends())('key-store migrations on %s', (_name, open) => {
  let db: SqlPort;
  beforeEach(async () => {
    db = await open();
  });
  afterEach(() => db.close());

  it('apply every migration to a fresh store and record each checksum', async () => {
    expect(await migrateKeyStore(db)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    expect(await recorded(db)).toEqual(expected);
    expect(await migrateKeyStore(db)).toEqual([]);
  });

  it('refuse to start, naming the file, when an applied migration has changed, and apply nothing', async () => {
    await migrateKeyStore(db, KEY_STORE_MIGRATIONS.slice(0, 2));
    await expect(migrateKeyStore(db, with002Changed)).rejects.toThrow('the key store refuses to start: migration 002_oauth.sql has changed since it was applied');
    expect(await recorded(db)).toEqual(expected.slice(0, 2));
    expect((await db.query<{ t: string | null }>("SELECT to_regclass('oauth_grants')::text AS t")).rows).toEqual([{ t: null }]);
  });

  it('record the checksums of a store migrated before checksums existed, then check them', async () => {
    await migrateKeyStore(db);
    // the table as it was before checksums
    await db.exec('ALTER TABLE schema_migrations DROP COLUMN checksum');
    expect(await migrateKeyStore(db)).toEqual([]);
    expect(await recorded(db)).toEqual(expected);
    await expect(migrateKeyStore(db, with002Changed)).rejects.toThrow(/migration 002_oauth\.sql has changed/);
  });
});

describe('the key-store migration files', () => {
  it('are each listed once, in order, with the statements of the file', () => {
    const root = join(__dirname, 'migrations');
    const onDisk = readdirSync(root).filter((f) => f.endsWith('.sql')).sort();
    expect(KEY_STORE_MIGRATIONS.map((m) => m.file)).toEqual(onDisk);
    for (const m of KEY_STORE_MIGRATIONS) expect(m.statements).toEqual(splitStatements(readFileSync(join(root, m.file!), 'utf8')));
  });

  // A changed checksum here makes every store that applied the migration refuse to start: put the change in a new one.
  it('stay as they were applied: checksums pinned', () => {
    expect(KEY_STORE_MIGRATIONS.map((m) => `${m.name} ${m.checksum}`)).toEqual([
    '001_projects_and_keys 0d60bb5af917cd3f53445cb335a67054a2a27da955727056a0dd6f5714f5a328',
    '002_oauth 6efced32c0c51e87abe1eb6b6b97fe00b9898d24d3b8eb23e389b09bf5a5d529',
    '003_oauth_client_secret_hash ad2050e2376d55a3d46df4ec156b5fe9ba2ce55b425771640410c117dbd92dd3',
    '004_oauth_grants f8e346f7414bbe61e60fb36deb50c0978dad7f476aec62814d32f8ef8136df04',
    '005_oauth_housekeeping 374a94b3437e2eac6f921d8c2069d35040602592e877d7f5d3146bba459d4493',
    '006_accounts dc9a31f5b9402b6993b6bc91ddda7ac98f8c713a903ba8e565e49d6c1693c3db',
    '007_oidc_logins 0795d01f276e5ac5a82dabee3087485445722aa4a88169590f697d8c3dd22c3f',
    '008_oauth_consent_tickets c778b85d9188a23f08a60c8bb930deb61685950616c93f025775de9a48615461',
    '009_oidc_consent_logins 2aaaca52e21dd6b7fc387fa55d35d543adb3eca99d6cd936fb72b994f9a5343c',
    '010_saved_definitions 16b39f3c61a00bb6e67f6d28ea3faeed1f9d66ffef80ed33656b5d5ee609c2e4',
    '011_shares 4d1a3ee1759c5c2649063c0b0f57a3bc4287834e56bf8f7be2d5219378281afa',
    '012_project_timezone f8a1d6468e21b83ba99120aa1bb243099b87f2e5ca82261d4673b21ebf6021ca',
    '013_annotations 65e851a8d2d17612fe51462ce853be47f25545ce0899c668ac9392dffb942a1b',
    '014_reports 9b45f3d758ee44f189b90bbb3949996a3cfe80b5328f999a805f011d44755819',
    '015_alerts 4df4d57929892e0a317139c09285ec53f0ffa9ea17e885aa0bd094682378fe77',
    ]);
  });
});
