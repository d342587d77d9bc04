import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
import type { Pool } from 'pg';
import { UpstreamUnavailableError } from '@analytics/schema';

export interface SqlQueryable {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: R[] }>;
}

/** The one port both key-store backends satisfy: pg.Pool (DATABASE_URL) and PGlite (embedded, DATA_DIR/postgres). */
export interface SqlPort extends SqlQueryable {
  /** Runs several statements (migrations). */
  exec(sql: string): Promise<void>;
  transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** PGlite only: its data directory as a gzipped tarball (PGlite's dumpDataDir), for a backup of the embedded store. */
  dumpDataDir?(): Promise<Uint8Array>;
}

export async function createPgPort(connectionString: string, onError: (e: Error) => void = () => {}): Promise<SqlPort> {
  const { DatabaseError, Pool } = await import('pg');
  const pool: Pool = new Pool({ connectionString, max: 10, connectionTimeoutMillis: 3_000, query_timeout: 10_000, idleTimeoutMillis: 30_000 });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', onError);
  // The server's own answers are DatabaseErrors (with a SQLSTATE); anything else on the way (connect timeout, query
  // read timeout, connection terminated) is the store being unreachable: 502 upstream_failed, not 500.
  const classify = (e: unknown) => (e instanceof DatabaseError ? e : new UpstreamUnavailableError('key store', e));
  const run = async <T>(op: () => Promise<T>): Promise<T> => {
    try {
      return await op();
    } catch (e) {
      throw classify(e);
    }
  };
  return {
    query: async (sql, params) => run(() => pool.query(sql, params as unknown[])) as never,
    exec: async (sql) => {
      await run(() => pool.query(sql));
    },
    transaction: async (fn) => {
      const client = await run(() => pool.connect());
      try {
        await run(() => client.query('BEGIN'));
        const result = await fn({ query: async (sql, params) => run(() => client.query(sql, params as unknown[])) as never });
        await run(() => client.query('COMMIT'));
        return result;
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw e;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/**
 * The embedded key store holds projects and keys (a few MB at most, every hot read cached in the Authenticator):
 * PostgreSQL's default buffers (128 MB shared_buffers) would only be resident memory. 16 MB keeps the working set.
 */
const PGLITE_OPTIONS = { postgresqlconf: ['shared_buffers=16MB', 'work_mem=1MB', 'maintenance_work_mem=8MB', 'temp_buffers=1MB'] };

const INIT_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
require(workerData.module).PGlite.create(workerData.dataDir, workerData.options)
  .then((db) => db.close())
  .then(() => parentPort.postMessage('ok'), (e) => parentPort.postMessage(String((e && e.stack) || e)));`;

async function initPgliteInWorker(dataDir: string): Promise<void> {
  const module = createRequire(__filename).resolve('@electric-sql/pglite');
  const worker = new Worker(INIT_WORKER, { eval: true, workerData: { module, dataDir, options: PGLITE_OPTIONS } });
  try {
    const outcome = await new Promise<unknown>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`PGlite initialisation worker exited with code ${code}`)));
    });
    if (outcome !== 'ok') throw new Error(`PGlite initialisation failed: ${String(outcome)}`);
  } finally {
    await worker.terminate();
  }
}

/**
 * Embedded Postgres (WASM) in `dataDir`, or in memory when dataDir is undefined. It holds its directory exclusively.
 * `from`: a dump (`dumpDataDir`) an in-memory database starts from instead of running initdb (tests start from a
 * template: pglite-template.ts).
 */
export async function createPglitePort(dataDir?: string, from?: Uint8Array): Promise<SqlPort> {
  const { PGlite } = await import('@electric-sql/pglite');
  // A new directory is initialised in a worker thread that then exits: initdb's WebAssembly memory (~450 MB) stays
  // reachable from the instance that ran it and would be resident for the life of the process.
  if (dataDir !== undefined && !existsSync(join(dataDir, 'PG_VERSION'))) await initPgliteInWorker(dataDir);
  const db: PGlite =
    dataDir === undefined && from ? await PGlite.create({ ...PGLITE_OPTIONS, loadDataDir: new Blob([new Uint8Array(from)]) }) : await PGlite.create(dataDir, PGLITE_OPTIONS);
  return {
    query: async (sql, params) => db.query(sql, params as unknown[]) as never,
    exec: async (sql) => {
      await db.exec(sql);
    },
    transaction: (fn) => db.transaction((tx) => fn({ query: async (sql, params) => tx.query(sql, params as unknown[]) as never })),
    close: () => db.close(),
    dumpDataDir: async () => new Uint8Array(await (await db.dumpDataDir('gzip')).arrayBuffer()),
  };
}
