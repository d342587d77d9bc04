import { type Migration, type MigrationTarget, defineMigration, runMigrations, splitStatements } from '@analytics/migrations';
import m001 from './migrations/001_projects_and_keys.sql';
import m002 from './migrations/002_oauth.sql';
import m003 from './migrations/003_oauth_client_secret_hash.sql';
import m004 from './migrations/004_oauth_grants.sql';
import m005 from './migrations/005_oauth_housekeeping.sql';
import m006 from './migrations/006_accounts.sql';
import m007 from './migrations/007_oidc_logins.sql';
import m008 from './migrations/008_oauth_consent_tickets.sql';
import m009 from './migrations/009_oidc_consent_logins.sql';
import m010 from './migrations/010_saved_definitions.sql';
import m011 from './migrations/011_shares.sql';
import m012 from './migrations/012_project_timezone.sql';
import m013 from './migrations/013_annotations.sql';
import m014 from './migrations/014_reports.sql';
import m015 from './migrations/015_alerts.sql';
import type { SqlPort } from './sql-port';

/** The migration files by name (a spec holds this list to the folder), applied in order. */
const FILES: Readonly<Record<string, string>> = {
  '001_projects_and_keys.sql': m001,
  '002_oauth.sql': m002,
  '003_oauth_client_secret_hash.sql': m003,
  '004_oauth_grants.sql': m004,
  '005_oauth_housekeeping.sql': m005,
  '006_accounts.sql': m006,
  '007_oidc_logins.sql': m007,
  '008_oauth_consent_tickets.sql': m008,
  '009_oidc_consent_logins.sql': m009,
  '010_saved_definitions.sql': m010,
  '011_shares.sql': m011,
  '012_project_timezone.sql': m012,
  '013_annotations.sql': m013,
  '014_reports.sql': m014,
  '015_alerts.sql': m015,
};

export const KEY_STORE_MIGRATIONS: readonly Migration[] = Object.entries(FILES).map(([file, sql]) => defineMigration(file, splitStatements(sql), file));

// Serialises concurrent starts of several instances against one server.
const MIGRATION_LOCK_ID = 727_001;

/**
 * Applies the migrations not yet recorded (or refuses to start when an applied one changed); `migrations` is a prefix
 * of the list when a test starts from an older schema.
 */
export async function migrateKeyStore(db: SqlPort, migrations = KEY_STORE_MIGRATIONS): Promise<number[]> {
  return db.transaction(async (tx) => {
    // The lock comes first: two `CREATE TABLE IF NOT EXISTS` racing on a fresh database fail with a duplicate key
    // in pg_type (seen when the five deployables start at once).
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
    const target: MigrationTarget = {
      async listApplied() {
        await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
        // Stores from before checksums: NULL until the runner records one.
        await tx.query('ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text');
        const { rows } = await tx.query<{ version: number; name: string; checksum: string | null }>('SELECT version, name, checksum FROM schema_migrations');
        return rows.map((r) => ({ version: Number(r.version), name: r.name, checksum: r.checksum }));
      },
      async apply(m) {
        for (const statement of m.statements) await tx.query(statement);
      },
      async record(m) {
        await tx.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3) ON CONFLICT (version) DO UPDATE SET checksum = EXCLUDED.checksum', [
          m.version,
          m.name,
          m.checksum,
        ]);
      },
    };
    return runMigrations(target, migrations, 'the key store');
  });
}
