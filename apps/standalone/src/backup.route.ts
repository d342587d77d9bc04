import { randomBytes } from 'node:crypto';
import { copyFile, cp, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { Router } from 'express';
import type { AuditLog } from '@analytics/accounts';
import type { Stores } from '@analytics/runtime';
import { ApiError, type BackupManifest, routes } from '@analytics/schema';
import { defineRoute, routerOf } from '@analytics/service-kit';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the workspace's package.json is the one place the release is numbered
import { version as PACKAGE_VERSION } from '../../../package.json';

/** Names inside a backup directory (tools/restore.mjs reads the same). */
export const BACKUP_LAYOUT = { manifest: 'manifest.json', clickhouse: 'clickhouse', postgres: 'postgres.tar.gz', secrets: 'secrets.json' } as const;

const refuse = (message: string) => new ApiError('invalid_payload', { details: { formErrors: [], fieldErrors: { dir: [message] } } });

/**
 * POST /admin/backup (`npm run backup -- <dir>`): an online backup of the embedded stores while the service serves.
 * The event store with ClickHouse's own BACKUP at one moment (no INSERT in flight, aggregates caught up, builder idle:
 * EventStore.backup), then the key store's PGlite dump right after (keys from the same moment give or take the
 * seconds between the two), DATA_DIR/secrets.json, and manifest.json (versions, migration checksums, time).
 */
export function createBackupRouter(stores: Stores, adminToken: string, dataDir: string | undefined, audit?: AuditLog): Router {
  return routerOf({ adminToken }, [
    defineRoute(routes.backup, async ({ body }) => {
      const dir = body.dir;
      if (!isAbsolute(dir)) throw refuse('must be an absolute path on the server (npm run backup resolves it for you)');
      if (!stores.keyDb.dumpDataDir || !stores.events.embedded) {
        throw refuse('this instance does not run the embedded stores: back up ClickHouse with BACKUP ... TO S3 and PostgreSQL with pg_dump (docs/operations.md)');
      }
      if (await nonEmpty(dir)) throw refuse(`${dir} exists and is not empty: name a new or empty directory`);
      await mkdir(dir, { recursive: true });

      const name = `backup-${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}`;
      const createdAt = new Date().toISOString();
      const staged = await stores.events.backup(name);
      const keysTar = await stores.keyDb.dumpDataDir();
      await moveDir(staged, join(dir, BACKUP_LAYOUT.clickhouse));
      await writeFile(join(dir, BACKUP_LAYOUT.postgres), keysTar, { mode: 0o600 });
      let secrets: string | null = null;
      if (dataDir && (await exists(join(dataDir, 'secrets.json')))) {
        await copyFile(join(dataDir, 'secrets.json'), join(dir, BACKUP_LAYOUT.secrets));
        secrets = BACKUP_LAYOUT.secrets;
      }
      const manifest: BackupManifest = {
        format: 1,
        created_at: createdAt,
        package_version: PACKAGE_VERSION,
        node_version: process.version,
        clickhouse_database: stores.events.db,
        event_store: { engine: 'chdb', path: BACKUP_LAYOUT.clickhouse, migrations: await eventMigrations(stores) },
        key_store: { engine: 'pglite', file: BACKUP_LAYOUT.postgres, migrations: await keyMigrations(stores) },
        secrets,
      };
      await writeFile(join(dir, BACKUP_LAYOUT.manifest), `${JSON.stringify(manifest, null, 2)}\n`);
      // A backup holds every organization's data: each one's audit log shows it.
      await audit?.record({ allOrgs: true }, { action: 'backup.created', actor: { type: 'operator', id: null, name: null }, target: { type: 'backup', id: null, name: dir }, details: {} });
      return { ok: true as const, dir, manifest };
    }),
  ]);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

async function nonEmpty(dir: string): Promise<boolean> {
  const s = await stat(dir).catch(() => undefined);
  if (!s) return false;
  if (!s.isDirectory()) return true;
  return (await readdir(dir)).length > 0;
}

/** rename, or copy and remove across filesystems (the staging directory lives in DATA_DIR). */
async function moveDir(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
    await cp(from, to, { recursive: true });
    await rm(from, { recursive: true, force: true });
  }
}

type Applied = { version: number; name: string; checksum: string | null };

/** One row per version (the event store's table is append-only: a checksum added later is another row of it). */
function byVersion(rows: Applied[]): Applied[] {
  const out = new Map<number, Applied>();
  for (const r of rows) if (!out.has(r.version) || (out.get(r.version)!.checksum === null && r.checksum !== null)) out.set(r.version, r);
  return [...out.values()].sort((a, b) => a.version - b.version);
}

async function eventMigrations(stores: Stores): Promise<Applied[]> {
  const rs = await stores.events.client.query({ query: `SELECT version, name, checksum FROM ${stores.events.db}.schema_migrations`, format: 'JSONEachRow' });
  return byVersion((await rs.json<{ version: number; name: string; checksum: string }>()).map((r) => ({ version: Number(r.version), name: r.name, checksum: r.checksum || null })));
}

async function keyMigrations(stores: Stores): Promise<Applied[]> {
  const { rows } = await stores.keyDb.query<{ version: number; name: string; checksum: string | null }>('SELECT version, name, checksum FROM schema_migrations');
  return byVersion(rows.map((r) => ({ version: Number(r.version), name: r.name, checksum: r.checksum })));
}
