import { join, resolve } from 'node:path';
import { type ClickHouseClient, type ClickHouseClientConfigOptions, createClient } from '@clickhouse/client';
import { oneStatementAtATime } from './chdb-serial';
import { type SelectStream, chdbSelectStream } from './export-stream';

/** How to reach the engine: a ClickHouse server over HTTP, or the embedded chDB in a directory. */
export interface ConnectionConfig {
  /** ClickHouse server over HTTP; when unset the embedded chDB engine is used. */
  url?: string;
  username?: string;
  password?: string;
  /** chDB data directory (DATA_DIR/clickhouse). */
  chdbPath?: string;
  requestTimeoutMs?: number;
  /** Server mode: @clickhouse/client's own logging (to the console; WARN and up by default). */
  clientLog?: ClickHouseClientConfigOptions['log'];
}

/** chDB's raw insert: the payload goes to the engine as bytes, not inlined into a SQL string. */
export type RawInsert = (params: { table: string; values: Buffer; format: 'JSONCompactEachRow'; columns: readonly string[]; settings?: Record<string, string | number> }) => Promise<unknown>;

export interface ClickHouseHandle {
  client: ClickHouseClient;
  /** Set for the embedded engine only. */
  rawInsert?: RawInsert;
  /** Embedded engine: the far lane's inserts (EventWriter), on a connection of their own. */
  rawInsertFar?: RawInsert;
  /** Closes what the handle opened besides the client (the embedded engine's write and control connections). */
  close?: () => Promise<void>;
  /** Runs a statement beside the reads (KILL QUERY): on the embedded engine, a connection no read ever waits on. */
  control?: (sql: string) => Promise<void>;
  /** Embedded engine: the aggregate builder's own connection. */
  builderClient?: ClickHouseClient;
  /** Embedded engine: streamed SELECTs (exports), each on a session of its own; a server streams through `client`. */
  streamSelect?: SelectStream;
  /** Embedded store: where BACKUP ... TO File() may write (the engine's backups.allowed_path). */
  backupsDir?: string;
}

export function connectClickHouse(config: ConnectionConfig): ClickHouseHandle {
  if (config.url) {
    return {
      client: createClient({
        url: config.url,
        username: config.username,
        password: config.password,
        request_timeout: config.requestTimeoutMs ?? 10_000,
        max_open_connections: 32,
        keep_alive: { enabled: true },
        log: config.clientLog,
      }),
    };
  }
  if (!config.chdbPath) throw new Error('event store: set CLICKHOUSE_URL or a chDB path');
  // Loaded lazily so a server-mode deployment never loads the native engine.
  const chdbConnection = (require('chdb/connection') as typeof import('chdb/connection')).createChdbConnection;
  // Every connection runs its statements one at a time and clears what a failed one left on its session, which chDB
  // would hand to the next statement as the start of its result (chdb-serial.ts).
  const createChdbConnection = (opts: { path: string }) => oneStatementAtATime(chdbConnection(opts));
  // The first connection to a directory starts the engine with its server configuration: BACKUP ... TO File() is
  // allowed under <path>/backups only (EventStore.backup stages there). A later connection's arguments are ignored.
  const { Session } = require('chdb') as { Session: new (path: string, opts: { connectionArgs: string[] }) => { close(): void } };
  const backupsDir = join(resolve(config.chdbPath), 'backups');
  const configured = new Session(config.chdbPath, { connectionArgs: [`--backups.allowed_path=${backupsDir}`] });
  const connection = createChdbConnection({ path: config.chdbPath });
  // Inserts get a connection of their own: chDB runs one query at a time per connection (and parameterized ones one at
  // a time per process), so a long read on the other connection never holds up the writer.
  const writes = createChdbConnection({ path: config.chdbPath });
  // And control statements a third, so cancelling a read never waits behind the read it cancels.
  const control = createChdbConnection({ path: config.chdbPath });
  // And the aggregate builder a fourth: its INSERT ... SELECTs never hold up a request's INSERT or a read.
  const builder = createChdbConnection({ path: config.chdbPath });
  // And the far lane a fifth: an INSERT spread over many month partitions runs beside the live lane's, not before it.
  const farWrites = createChdbConnection({ path: config.chdbPath });
  // Every statement on these connections (and each export's stream) holds a thread of libuv's pool until it ends, so
  // running side by side needs more than Node's default 4: our bundles and the jest preset set UV_THREADPOOL_SIZE to 16.
  const builderClient = createClient({ connection: builder } as never);
  // The engine's allocator keeps the pages a large INSERT freed resident for seconds, and successive large INSERTs
  // pile them up: they are handed back after such an INSERT (one call, instead of a decay paid on every free).
  const purge = coalesced(() => control.command({ query: 'SYSTEM JEMALLOC PURGE' } as never));
  const insertOn = (conn: typeof writes): RawInsert => async (params) => {
    const result = await conn.chdb.rawInsert({ ...params, columns: [...params.columns] });
    if (params.values.length >= LARGE_INSERT_BYTES) purge();
    return result;
  };
  return {
    client: createClient({ connection } as never),
    builderClient,
    backupsDir,
    rawInsert: insertOn(writes),
    rawInsertFar: insertOn(farWrites),
    streamSelect: chdbSelectStream(config.chdbPath),
    close: async () => {
      await builderClient.close();
      await writes.close();
      await farWrites.close();
      await control.close();
      configured.close();
    },
    control: async (sql) => {
      await control.command({ query: sql } as never);
    },
  };
}

/** An embedded INSERT payload at least this large is followed by a purge of the engine's freed pages. */
const LARGE_INSERT_BYTES = 4 * 1024 * 1024;

/** Runs `task` now, or once more after the running one when called meanwhile; errors are dropped (a purge is best effort). */
function coalesced(task: () => Promise<unknown>): () => void {
  let running = false;
  let again = false;
  const run = (): void => {
    running = true;
    again = false;
    void task()
      .catch(() => undefined)
      .finally(() => {
        running = false;
        if (again) run();
      });
  };
  return () => {
    if (running) again = true;
    else run();
  };
}
