import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedPgliteDir } from '@analytics/auth/testing';
import { envSchema, loadConfig, openStores, type Stores } from '@analytics/runtime';
import { createLogger } from '@analytics/service-kit';

export const silentLogger = createLogger({ level: 'silent' });

/**
 * Real embedded stores for one test file: chDB in a fresh temp directory (one per process at a time, so close it in
 * afterAll) with its own database, and PGlite in it (a copy of initdb's output: seedPgliteDir). No mocks of our own stores.
 */
export async function openTestStores(env: Record<string, string> = {}): Promise<Stores & { dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'analytics-test-'));
  const config = loadConfig(envSchema, { CLICKHOUSE_DATABASE: `t_${randomBytes(6).toString('hex')}`, DATA_DIR: dataDir, ...env });
  if (!config.DATABASE_URL) await seedPgliteDir(join(dataDir, 'postgres')); // initdb's output, copied: 3 s less per file
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

