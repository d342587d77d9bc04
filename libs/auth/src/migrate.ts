import m001 from './migrations/001_projects_and_keys.sql';
import m002 from './migrations/002_oauth.sql';
import m003 from './migrations/003_oauth_client_secret_hash.sql';
import m004 from './migrations/004_oauth_grants.sql';
import type { SqlPort } from './sql-port';

/** Numbered migrations, applied in order and recorded in schema_migrations. */
export const KEY_STORE_MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  { version: 1, name: '001_projects_and_keys', sql: m001 },
  { version: 2, name: '002_oauth', sql: m002 },
  { version: 3, name: '003_oauth_client_secret_hash', sql: m003 },
  { version: 4, name: '004_oauth_grants', sql: m004 },
];

// Serialises concurrent starts of several instances against one server.
const MIGRATION_LOCK_ID = 727_001;

/** Applies the migrations not yet recorded; `migrations` is a prefix of the list when a test starts from an older schema. */
export async function migrateKeyStore(db: SqlPort, migrations = KEY_STORE_MIGRATIONS): Promise<number[]> {
  return db.transaction(async (tx) => {
    // The lock comes first: two `CREATE TABLE IF NOT EXISTS` racing on a fresh database fail with a duplicate key
    // in pg_type (seen when the five deployables start at once).
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await tx.query<{ version: number }>('SELECT version FROM schema_migrations');
    const done = new Set(rows.map((r) => Number(r.version)));
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      for (const statement of m.sql.split(/;\s*$/m).map((s) => s.trim()).filter(Boolean)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}
