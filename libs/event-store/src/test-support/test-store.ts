import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventStoreConfig } from '../event-store-config';
import { EventStore } from '../event-store';

export interface TestStore {
  store: EventStore;
  /** The chDB data directory (another store of the same process may open it too). */
  dir: string;
  /** Closes the store and removes its directory. */
  close(): Promise<void>;
}

/**
 * A real embedded store for one spec file: chDB in a fresh temp directory with a database of its own (chDB binds one
 * directory per process at a time, so close it in afterAll). `config` overrides the defaults (limits, intervals).
 */
export async function openTestStore(config: Partial<EventStoreConfig> = {}): Promise<TestStore> {
  const dir = mkdtempSync(join(tmpdir(), 'event-store-test-'));
  try {
    const store = await EventStore.open({ chdbPath: dir, database: `t_${randomBytes(6).toString('hex')}`, ...config });
    return {
      store,
      dir,
      async close() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/** openTestStore() around a spec file's tests: opened before them, handed to `use`, closed after them. */
export function useTestStore(use: (opened: TestStore) => void, config: Partial<EventStoreConfig> = {}): void {
  let opened: TestStore | undefined;
  beforeAll(async () => {
    opened = await openTestStore(config);
    use(opened);
  });
  afterAll(() => opened?.close());
}

/** Runs `run` with a fresh database name on the store's chDB (the test creates what it needs in it), dropped afterwards. */
export async function withDatabase(store: EventStore, run: (db: string) => Promise<void>): Promise<void> {
  const db = `t_${randomBytes(6).toString('hex')}`;
  try {
    await run(db);
  } finally {
    await store.command(`DROP DATABASE IF EXISTS ${db}`);
  }
}
