import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { type EventRow, UpstreamUnavailableError } from '@analytics/schema';
import { type ClickHouseHandle, connectClickHouse } from './client/client';
import type { EventWriter, EventWriterOptions, Lane } from './engines/write/event-writer';
import type { ExportSink, ExportStatement } from './queries/export-events.query';
import { serverSelectStream } from './client/export-stream';
import { ForgetQueue } from './engines/maintenance/forget-queue';
import { assertIdentifier, localTableOf, migrateEventStore } from './tables/migrate';
import { DEFAULT_READ_LIMITS } from './engines/read/read-limits';
import { ReadSide } from './engines/read/read-side';
import { type ReadTables, readTablesOf } from './tables/read-tables';
import type { SourcesDaily } from './engines/write/sources-daily-refresh';
import { classifyStoreError } from './client/store-error';
import { type BuilderConfig, WriteSide } from './engines/write/write-side';
import type { EventStoreConfig } from './event-store-config';

/**
 * An export's engine blocks (megabytes) go to its sink in slices of this size: the client's progress is seen slice by
 * slice, so a slow but steady client is never taken for an idle one while one block drains.
 */
const EXPORT_SLICE_BYTES = 64 * 1024;

// Tools, benchmarks and tests insert through the store's column list, which libs/schema derives from the column descriptor.
export { EVENT_INSERT_COLUMNS } from '@analytics/schema';
export { classifyStoreError } from './client/store-error';

/**
 * The event store: ClickHouse (server or embedded chDB), its migrations, and a front over its two sides: writes
 * (group-commit writer, insert_seq, aggregate builder: write-side.ts) and reads (fair admission, limits, preemption:
 * read-side.ts).
 */
export class EventStore {
  /** Forgets, batched into one mutation per interval. */
  readonly forgets: ForgetQueue;
  readonly client: ClickHouseClient;
  readonly db: string;
  readonly cluster: string | undefined;
  private readonly handle: ClickHouseHandle;
  private readonly writes: WriteSide;
  private readonly reads: ReadSide;
  private readonly builderConfig: BuilderConfig;

  private constructor(handle: ClickHouseHandle, config: EventStoreConfig, writerOptions: EventWriterOptions) {
    this.handle = handle;
    this.client = handle.client;
    this.builderConfig = { aggregateIntervalMs: config.aggregateIntervalMs, sourcesRefreshMs: config.sourcesRefreshMs, onAggregateError: config.onAggregateError };
    this.db = assertIdentifier(config.database, 'CLICKHOUSE_DATABASE');
    this.cluster = config.cluster ? assertIdentifier(config.cluster, 'CLICKHOUSE_CLUSTER') : undefined;
    const control = handle.control ?? (async (sql: string) => void (await this.client.command({ query: sql })));
    this.writes = new WriteSide({
      handle,
      db: this.db,
      table: this.eventsTable,
      cluster: this.cluster !== undefined,
      clusterName: this.cluster,
      server: handle.builderClient === undefined,
      aggregateWaitMs: config.aggregateWaitMs,
      control,
      // A server takes concurrent INSERTs on its connection pool; chDB runs one at a time per connection (one per lane).
      writer: { concurrency: config.url ? 4 : 1, ...writerOptions },
    });
    const limits = { ...DEFAULT_READ_LIMITS, ...config.read };
    this.reads = new ReadSide(
      { ...limits, concurrency: limits.concurrency || (config.url ? 8 : 1) },
      { select: (query, params) => this.select(query, params), control, caughtUp: () => this.writes.beforeAggregateRead() },
    );
    this.forgets = new ForgetQueue(this, config.forget);
  }

  /** Opens the store and applies pending migrations. */
  static async open(config: EventStoreConfig, writerOptions: EventWriterOptions = {}, handle?: ClickHouseHandle): Promise<EventStore> {
    const store = handle ? new EventStore(handle, config, writerOptions) : EventStore.connect(config, writerOptions);
    try {
      await migrateEventStore(store.client, { db: store.db, cluster: store.cluster, builder: store.handle.builderClient !== undefined });
      await store.writes.startBuilder(config);
    } catch (e) {
      await store.handle.close?.().catch(() => undefined);
      await store.client.close().catch(() => undefined);
      throw e;
    }
    return store;
  }

  /** The store without touching the schema (no migrations, no round trip): for tools and fault tests. */
  static connect(config: EventStoreConfig, writerOptions: EventWriterOptions = {}): EventStore {
    return new EventStore(connectClickHouse(config), config, writerOptions);
  }

  /**
   * Embedded store: `BACKUP DATABASE` of our database to File(`name`) under the engine's backups directory, at one
   * moment (WriteSide.quiesced: no INSERT in flight, aggregates caught up, builder idle). Returns the directory written.
   * The engine writes its files 0644 in 0755 folders; the backups directory is 0700 first, so nobody else can reach
   * them before the caller restricts them.
   */
  async backup(name: string): Promise<string> {
    const { backupsDir, builderClient } = this.handle;
    if (!backupsDir || !builderClient) throw new Error('BACKUP through the service needs the embedded store; on a server use BACKUP ... TO S3 (docs/operations.md)');
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new Error(`backup name ${JSON.stringify(name)}: letters, digits, . _ - only`);
    await mkdir(backupsDir, { recursive: true, mode: 0o700 });
    await chmod(backupsDir, 0o700);
    // The builder's connection: the statement runs inside its chain, and reads and INSERTs keep their own connections.
    // BACKUP takes its destination as a literal (no query parameter there): the name is checked above.
    await this.writes.quiesced(() => builderClient.command({ query: `BACKUP DATABASE ${this.db} TO File('${name}')` }));
    return join(backupsDir, name);
  }

  /** Reads waiting for their turn at the read gate (GET /metrics: analytics_read_queue_depth). */
  get readQueueDepth(): number {
    return this.reads.queued;
  }

  /**
   * Seconds the aggregate builder is behind: since the oldest acknowledged INSERT it has not built yet finished (GET
   * /metrics: analytics_aggregate_lag_seconds). 0 when caught up; on a server, the builder's process reports it (since
   * the oldest INSERT it had not built at its last scan took its seq) and every other process 0.
   */
  aggregateLagSeconds(now = Date.now()): number {
    return this.writes.aggregateLagMs(now) / 1000;
  }

  /** The group-commit writer (EventWriter): the far lane is held through it around a partition drop. */
  get writer(): EventWriter {
    return this.writes.writer;
  }

  /**
   * Resolves once every event acknowledged so far is in the aggregates (the embedded store's builder catches up;
   * on a server the views built them with the INSERT). Reads call it, so an answer from an aggregate agrees with the
   * raw events it was read beside.
   */
  aggregatesCaughtUp(): Promise<void> {
    return this.writes.aggregatesCaughtUp();
  }

  /** The aggregate builder builds the aggregates and the tables of 004-006 exist: every store from migration 012 on. */
  get buildsAggregates(): boolean {
    return this.writes.buildsAggregates;
  }

  /** This process builds the aggregates now: the embedded store always, a server while it holds the builder's lease. */
  get buildingAggregates(): boolean {
    return this.writes.building;
  }

  /** The embedded chDB engine (not a ClickHouse server). */
  get embedded(): boolean {
    return this.handle.builderClient !== undefined;
  }

  /**
   * A ClickHouse server: this process builds the aggregates from now on, having taken the builder's lease (`confirm`
   * throws once it no longer holds it). apps/aggregate-builder and a standalone service on a server call it.
   */
  startBuilding(options: { confirm?: () => Promise<void>; settleMs?: number } = {}): Promise<void> {
    return this.writes.startBuilding({ ...this.builderConfig, ...options });
  }

  /**
   * A server: stops building; another holder takes over where this one stopped. At once when the lease was lost; at a
   * shutdown, `catchUpMs` lets it build what has finished first (within that bound).
   */
  stopBuilding(catchUpMs = 0): Promise<void> {
    return this.writes.stopBuilding(catchUpMs);
  }

  /** The keeper of sources_daily (GET /v1/sources per day) in the process that builds; undefined in every other. */
  get sourcesDaily(): SourcesDaily | undefined {
    return this.writes.sourcesDaily;
  }

  /**
   * In the process that builds: recomputes the sources_daily days that are due (every day waiting, with `all`), after
   * the builder's catch-up. The builder does it on every tick; benchmarks and tests call it to settle.
   */
  refreshSources(all = false): Promise<number> {
    return this.writes.refreshSources(all);
  }

  /**
   * Table that inserts and reads go to: `events`, which in cluster mode is the Distributed table over the shards'
   * `events_local` (inserts are sharded by EVENTS_SHARDING_KEY and sent synchronously: insert_distributed_sync=1).
   */
  get eventsTable(): string {
    return `${this.db}.events`;
  }

  /** The tables reads name (the queries' Reader port): Distributed ones in a cluster, the builder's tables where they exist. */
  get tables(): ReadTables {
    return readTablesOf(this);
  }

  /** Table holding the rows, for mutations and partition drops: `events_local` (ON CLUSTER) in cluster mode. */
  get localEventsTable(): string {
    return `${this.db}.${localTableOf(this, 'events')}`;
  }

  /** One INSERT of rows, straight to the table (the writer's sink; benchmarks use it as the raw rate). */
  insertRows(rows: EventRow[], lane: Lane = 'live'): Promise<void> {
    return this.writes.insertRows(rows, lane);
  }

  /**
   * One INSERT into events of about `rows` rows, made by `run`. With the aggregate builder it gets the next
   * insert_seq, which `run` must send as the column insert_seq_in (insertRows does; tools and benchmarks that INSERT
   * ... SELECT go through here too), and the builder folds it into the aggregates once it has finished.
   */
  insertWith(rows: number, run: (seq: number | undefined) => Promise<unknown>): Promise<void> {
    return this.writes.insertWith(rows, run);
  }

  /**
   * Before a delete of events (forget, retention): waits until every INSERT started so far has finished and is in the
   * aggregates, and returns the highest insert_seq among them. The delete names `insert_seq <= seq`, so it removes
   * exactly rows the aggregates already count ("aggregate rows are not rewritten when events are deleted": an event
   * deleted seconds after its 202 still counts) and holds up no INSERT: later ones carry higher seqs. Undefined on a
   * server, where the views built the aggregates with each INSERT.
   */
  settleForDelete(): Promise<number | undefined> {
    return this.writes.settleForDelete();
  }

  /** Group-committed write; resolves once the rows are in the table. */
  write(rows: EventRow[]): Promise<void> {
    return this.writes.write(rows);
  }

  /** Runs a read and returns its JSON rows; every value goes through query_params. */
  async select<T>(query: string, params: Record<string, unknown>): Promise<T[]> {
    try {
      const rs = await this.client.query({ query, query_params: params, format: 'JSONEachRow' });
      return await rs.json<T>();
    } catch (e) {
      throw classifyStoreError(e);
    }
  }

  /**
   * A read of one project's data (the read API and MCP): admitted fairly between projects, bounded in the engine by
   * the read limits, and a read that hits them is 400 query_too_expensive instead of a failure (read-side.ts).
   */
  read<T>(projectId: string, query: string, params: Record<string, unknown>): Promise<T[]> {
    return this.reads.read<T>(projectId, query, params);
  }

  /**
   * An export of one project's events (GET /v1/export): the statement's output streamed to `sink` slice by slice, each
   * written once the sink took the one before (memory does not grow with the export), under the export's turn, limits
   * and deadlines (read-side.ts). When the sink's signal aborts (the client went away), the stream stops, the query is
   * cancelled (KILL QUERY by its tag) and this resolves; a client that takes nothing for the idle bound ends it with
   * ExportIdleError, the wall-time limit with 400 query_too_expensive.
   */
  async exportTo(projectId: string, stmt: ExportStatement, sink: ExportSink): Promise<void> {
    const source = this.handle.streamSelect ?? serverSelectStream(this.client);
    try {
      await this.reads.export(projectId, sink.signal, async (turn) => {
        try {
          const settings = stmt.settings ? `${turn.settings}, ${stmt.settings}` : turn.settings;
          for await (const chunk of source(stmt, settings, turn.signal)) {
            for (let at = 0; at < chunk.length; at += EXPORT_SLICE_BYTES) await turn.consumed(sink.write(chunk.subarray(at, at + EXPORT_SLICE_BYTES)));
          }
        } catch (e) {
          throw classifyStoreError(e);
        }
      });
    } catch (e) {
      if (sink.signal.aborted) return;
      throw e;
    }
  }

  async command(query: string, params: Record<string, unknown> = {}): Promise<void> {
    try {
      await this.client.command({ query, query_params: params });
    } catch (e) {
      throw classifyStoreError(e);
    }
  }

  /** Readiness: the server answers a ping and a trivial query. */
  async ping(): Promise<void> {
    const r = await this.client.ping();
    if (!r.success) throw new UpstreamUnavailableError('event store', (r as { error?: unknown }).error);
    await this.select('SELECT 1 AS one', {});
  }

  /** Flushes pending writes and forgets, lets the builder catch up within a bound, then closes the connections. */
  async close(): Promise<void> {
    await this.writes.drain();
    await this.forgets.idle();
    await this.writes.stopBuilder();
    await this.handle.close?.();
    await this.client.close();
  }
}
