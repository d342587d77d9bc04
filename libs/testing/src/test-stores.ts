import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type SqlPort, createPgPort, createPglitePort } from '@analytics/auth';
import { envSchema, openStores, type Stores } from '@analytics/runtime';
import { createLogger, loadConfig } from '@analytics/service-kit';

export const silentLogger = createLogger({ level: 'silent' });

/**
 * Real embedded stores for one test file: chDB in a fresh temp directory (one per process at a time, so close it in
 * afterAll) with its own database, and PGlite in memory. No mocks of our own stores.
 */
export async function openTestStores(env: Record<string, string> = {}): Promise<Stores & { dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'analytics-test-'));
  const config = loadConfig(envSchema, { CLICKHOUSE_DATABASE: `t_${randomBytes(6).toString('hex')}`, DATA_DIR: dataDir, ...env });
  const stores = await openStores(config, silentLogger, dataDir);
  return {
    ...stores,
    dataDir,
    async close() {
      await stores.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The key-store backends to run a suite against: PGlite always, real PostgreSQL when TEST_DATABASE_URL is set. */
export function keyStoreBackends(): Array<[string, () => Promise<SqlPort>]> {
  const backends: Array<[string, () => Promise<SqlPort>]> = [['PGlite', () => createPglitePort()]];
  const url = process.env.TEST_DATABASE_URL;
  if (url) backends.push(['PostgreSQL', () => isolatedPgPort(url)]);
  return backends;
}

/** A PostgreSQL port confined to a fresh schema, so parallel suites never see each other's tables. */
export async function isolatedPgPort(url: string): Promise<SqlPort> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = await createPgPort(url);
  await admin.exec(`CREATE SCHEMA ${schema}`);
  await admin.close();
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  const port = await createPgPort(u.toString());
  return {
    ...port,
    async close() {
      await port.exec(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
      await port.close();
    },
  };
}
