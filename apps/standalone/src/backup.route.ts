import { randomBytes } from 'node:crypto';
import { copyFile, cp, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Router } from 'express';
import type { AuditLog } from '@analytics/accounts';
import type { Stores } from '@analytics/runtime';
import { ApiError, type BackupManifest, routes } from '@analytics/schema';
import { defineRoute, routerOf } from '@analytics/service-kit';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the workspace's package.json is the one place the release is numbered
import { version as PACKAGE_VERSION } from '../../../package.json';
import { BackupDirRefusal, checkBackupDir, createBackupDir, restrictModes } from './backup-dir';

/** Names inside a backup directory (tools/restore.mjs reads the same). */
export const BACKUP_LAYOUT = { manifest: 'manifest.json', clickhouse: 'clickhouse', postgres: 'postgres.tar.gz', secrets: 'secrets.json' } as const;

const refuse = (message: string) => new ApiError('invalid_payload', { details: { formErrors: [], fieldErrors: { dir: [message] } } });
const refused = (e: unknown): never => {
  throw e instanceof BackupDirRefusal ? refuse(e.message) : e;
};

export interface BackupRouterOptions {
  /** DATA_DIR: its secrets.json goes into the backup. */
  dataDir?: string;
  /** BACKUP_DIR: when set, only folders under it (symbolic links followed) take a backup. */
  backupDir?: string;
  /** Where a backup is recorded (every organization's audit log). */
  audit?: AuditLog;
}

/**
 * POST /admin/backup (`npm run backup -- <dir>`): an online backup of the embedded stores while the service serves.
 * The folder is checked before anything else (backup-dir.ts: 400 within a second, nothing written), created 0700;
 * then the event store with ClickHouse's own BACKUP at one moment (no INSERT in flight, aggregates caught up, builder
 * idle: EventStore.backup), the key store's PGlite dump right after (keys from the same moment give or take the
 * seconds between the two), DATA_DIR/secrets.json, and manifest.json (versions, migration checksums, time); every
 * file ends 0600 and every folder 0700.
 */
export function createBackupRouter(stores: Stores, adminToken: string, options: BackupRouterOptions = {}): Router {
  return routerOf({ adminToken }, [
    defineRoute(routes.backup, async ({ body }) => {
      const target = await checkBackupDir(body.dir, options.backupDir).catch(refused);
      if (!stores.keyDb.dumpDataDir || !stores.events.embedded) {
        throw refuse('this instance does not run the embedded stores: back up ClickHouse with BACKUP ... TO S3 and PostgreSQL with pg_dump (docs/operations.md)');
      }
      await createBackupDir(target).catch(refused);
      const dir = target.path;
      const dataDir = options.dataDir;

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
      await writeFile(join(dir, BACKUP_LAYOUT.manifest), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
      await restrictModes(dir);
      // A backup holds every organization's data: each one's audit log shows it.
      await options.audit?.record({ allOrgs: true }, { action: 'backup.created', actor: { type: 'operator', id: null, name: null }, target: { type: 'backup', id: null, name: dir }, details: {} });
      return { ok: true as const, dir, manifest };
    }),
  ]);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
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
