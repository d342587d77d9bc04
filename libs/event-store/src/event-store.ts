import { randomUUID } from 'node:crypto';
import { type ClickHouseClient, ClickHouseError } from '@clickhouse/client';
import { EVENT_INSERT_COLUMNS, type EventRow, UpstreamUnavailableError } from '@analytics/schema';
import { type ClickHouseHandle, type EventStoreConfig, connectClickHouse } from './client';
import { AggregateBuilder } from './aggregate-builder';
import { EventWriter, type EventWriterOptions, type Lane } from './event-writer';
import { ForgetQueue } from './forget-queue';
import { insertEventRows } from './insert-rows';
import { ReadGate } from './read-gate';
import type { SourcesDaily } from './sources-daily';
import { DEFAULT_READ_LIMITS, type ReadLimits, clickHouseCodeOf, readLimitError, readSettingsClause } from './read-limits';
import { assertIdentifier, localTableOf, migrateEventStore } from './migrate';

// Tools, benchmarks and tests insert through the store's column list, which libs/schema derives from the column descriptor.
export { EVENT_INSERT_COLUMNS } from '@analytics/schema';

const QUERY_WAS_CANCELLED = 394;
/** How long close() lets the builder catch up before it stops after the range under way (shutdown stays within ~20 s). */
const CLOSE_BUILD_MS = 5_000;

/** Keeps errors the store answered with; anything else on the way (network, timeout) is the store being unreachable. */
export function classifyStoreError(e: unknown): unknown {
  if (e instanceof ClickHouseError || e instanceof UpstreamUnavailableError) return e;
  // chDB's own errors carry a ClickHouse code: the engine answered.
  if (clickHouseCodeOf(e) !== undefined) return e;
  return new UpstreamUnavailableError('event store', e);
}

/** The event store: ClickHouse (server or embedded chDB), its migrations, the group-commit writer. */
export class EventStore {
  readonly writer: EventWriter;
  /** Forgets, batched into one mutation per interval. */
  readonly forgets: ForgetQueue;
  readonly client: ClickHouseClient;
  readonly db: string;
  readonly cluster: string | undefined;
  private readonly builderClient: ClickHouseClient | undefined;

  private readonly readLimits: ReadLimits;
  private readonly gate: ReadGate;
  private readonly readSettings: string;
  /** Statements beside the reads (KILL QUERY of a preempted read); the tags in them are our own UUIDs. */
  private readonly control: (sql: string) => Promise<void>;
  /**
   * Embedded store (after open()): builds the aggregates off the request path from insert_seq ranges. Unset on a
   * server, where materialized views build them on every INSERT.
   */
  private aggregateBuilder: AggregateBuilder | undefined;
  /** insert_seq of the latest INSERT started, and those still running (the builder only takes finished ones). */
  private lastSeq = 0;
  private readonly runningSeqs = new Set<number>();

  private readonly handle: ClickHouseHandle;
  /** INSERTs waiting to be settled (settled()): each resolves once every INSERT up to its seq has finished. */
  private settleWaiters: Array<{ seq: number; resolve: () => void }> = [];

  private constructor(handle: ClickHouseHandle, config: EventStoreConfig, writerOptions: EventWriterOptions) {
    this.handle = handle;
    this.client = handle.client;
    this.builderClient = handle.builderClient;
    this.control = handle.control ?? (async (sql) => void (await this.client.command({ query: sql })));
    const limits = { ...DEFAULT_READ_LIMITS, ...config.read };
    this.readLimits = { ...limits, concurrency: limits.concurrency || (config.url ? 8 : 1) };
    this.gate = new ReadGate(this.readLimits);
    this.readSettings = readSettingsClause(this.readLimits);
    this.db = assertIdentifier(config.database, 'CLICKHOUSE_DATABASE');
    this.cluster = config.cluster ? assertIdentifier(config.cluster, 'CLICKHOUSE_CLUSTER') : undefined;
    // A server takes concurrent INSERTs on its connection pool; chDB runs one at a time per connection (one per lane).
    this.writer = new EventWriter((rows, lane) => this.insertRows(rows, lane), { concurrency: config.url ? 4 : 1, ...writerOptions });
    this.forgets = new ForgetQueue(this, config.forget);
  }

  /** Opens the store and applies pending migrations. */
  static async open(config: EventStoreConfig, writerOptions: EventWriterOptions = {}): Promise<EventStore> {
    const store = EventStore.connect(config, writerOptions);
    try {
      await migrateEventStore(store.client, { db: store.db, cluster: store.cluster, builder: store.builderClient !== undefined });
      if (store.builderClient) {
        const builder = new AggregateBuilder({
          db: store.db,
          client: store.builderClient,
          committedSeq: () => store.committedSeq(),
          onError: config.onAggregateError,
          sourcesRefreshMs: config.sourcesRefreshMs,
          // query_ids are our own UUIDs
          cancel: (id) => store.control(`KILL QUERY WHERE query_id = '${id}' ASYNC`),
        });
        const { maxSeq } = await builder.init();
        store.lastSeq = maxSeq;
        // What a crash left unbuilt is built before the store is used (before any forget or retention can delete it).
        await builder.catchUp();
        builder.start(config.aggregateIntervalMs ?? 1000);
        store.aggregateBuilder = builder;
      }
    } catch (e) {
      await store.handle.close?.().catch(() => undefined);
      await store.client.close().catch(() => undefined);
      throw e;
    }
    return store;
  }

  /** Highest insert_seq at or below which every INSERT has finished. */
  private committedSeq(): number {
    let committed = this.lastSeq;
    for (const seq of this.runningSeqs) committed = Math.min(committed, seq - 1);
    return committed;
  }

  /**
   * Resolves once every event acknowledged so far is in the aggregates (the embedded store's builder catches up;
   * on a server the views built them with the INSERT). Reads call it, so an answer from an aggregate agrees with the
   * raw events it was read beside.
   */
  async aggregatesCaughtUp(): Promise<void> {
    await this.aggregateBuilder?.catchUp();
  }

  /** Embedded store (after open()): the aggregate builder builds the aggregates, and the tables of 004-006 exist. */
  get buildsAggregates(): boolean {
    return this.aggregateBuilder !== undefined;
  }

  /** Embedded store: the keeper of sources_daily (GET /v1/sources per day); undefined on a server. */
  get sourcesDaily(): SourcesDaily | undefined {
    return this.aggregateBuilder?.sources;
  }

  /**
   * Embedded store: recomputes the sources_daily days that are due (every day waiting, with `all`), after the
   * builder's catch-up. The builder does it on every tick; benchmarks and tests call it to settle.
   */
  async refreshSources(all = false): Promise<number> {
    if (!this.aggregateBuilder) return 0;
    await this.aggregateBuilder.catchUp();
    return this.aggregateBuilder.refreshSources(all);
  }

  /** The store without touching the schema (no migrations, no round trip): for tools and fault tests. */
  static connect(config: EventStoreConfig, writerOptions: EventWriterOptions = {}): EventStore {
    return new EventStore(connectClickHouse(config), config, writerOptions);
  }

  /**
   * Table that inserts and reads go to: `events`, which in cluster mode is the Distributed table over the shards'
   * `events_local` (inserts are sharded by EVENTS_SHARDING_KEY and sent synchronously: insert_distributed_sync=1).
   */
  get eventsTable(): string {
    return `${this.db}.events`;
  }

  /** Table holding the rows, for mutations and partition drops: `events_local` (ON CLUSTER) in cluster mode. */
  get localEventsTable(): string {
    return `${this.db}.${localTableOf(this, 'events')}`;
  }

  /** One INSERT of rows, straight to the table (the writer's sink; benchmarks use it as the raw rate). */
  async insertRows(rows: EventRow[], lane: Lane = 'live'): Promise<void> {
    await this.insertWith(rows.length, (seq) =>
      insertEventRows(
        {
          client: this.client,
          rawInsert: lane === 'far' ? this.handle.rawInsertFar : this.handle.rawInsert,
          table: this.eventsTable,
          columns: EVENT_INSERT_COLUMNS,
          settings: this.cluster ? { insert_deduplicate: 0, insert_distributed_sync: 1 } : undefined,
          seq,
        },
        rows,
      ),
    );
  }

  /**
   * One INSERT into events of about `rows` rows, made by `run`. With the aggregate builder it gets the next
   * insert_seq, which `run` must send as the column insert_seq_in (insertRows does; tools and benchmarks that INSERT
   * ... SELECT go through here too), and the builder folds it into the aggregates once it has finished.
   */
  async insertWith(rows: number, run: (seq: number | undefined) => Promise<unknown>): Promise<void> {
    const seq = this.aggregateBuilder ? ++this.lastSeq : undefined;
    if (seq !== undefined) {
      this.runningSeqs.add(seq);
      this.aggregateBuilder!.noteInsert(seq, rows);
    }
    try {
      await run(seq);
    } catch (e) {
      throw classifyStoreError(e);
    } finally {
      if (seq !== undefined) {
        this.runningSeqs.delete(seq);
        this.wakeSettled();
      }
    }
  }

  private wakeSettled(): void {
    const committed = this.committedSeq();
    this.settleWaiters = this.settleWaiters.filter((w) => (w.seq <= committed ? (w.resolve(), false) : true));
  }

  /**
   * Before a delete of events (forget, retention): waits until every INSERT started so far has finished and is in the
   * aggregates, and returns the highest insert_seq among them. The delete names `insert_seq <= seq`, so it removes
   * exactly rows the aggregates already count ("aggregate rows are not rewritten when events are deleted": an event
   * deleted seconds after its 202 still counts) and holds up no INSERT: later ones carry higher seqs. Undefined on a
   * server, where the views built the aggregates with each INSERT.
   */
  async settleForDelete(): Promise<number | undefined> {
    if (!this.aggregateBuilder) return undefined;
    const seq = this.lastSeq;
    if (this.committedSeq() < seq) await new Promise<void>((resolve) => this.settleWaiters.push({ seq, resolve }));
    await this.aggregateBuilder.catchUp();
    return seq;
  }

  /** Group-committed write; resolves once the rows are in the table. */
  write(rows: EventRow[]): Promise<void> {
    return this.writer.write(rows);
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
   * A read of one project's data (the read API and MCP): admitted fairly between projects (ReadGate), bounded in the
   * engine by the read limits, and a read that hits them is 400 query_too_expensive instead of a failure.
   */
  async read<T>(projectId: string, query: string, params: Record<string, unknown>): Promise<T[]> {
    const deadline = Date.now() + this.readLimits.queueWaitMs;
    // Read-your-writes for aggregates: what was acknowledged before this read is in them (a few ms of building when
    // events arrived since the builder's last tick). A failing build is the builder's to report; the read goes on.
    await this.aggregatesCaughtUp().catch(() => undefined);
    for (;;) {
      const outcome = await this.gate.run(projectId, async (turn): Promise<{ rows: T[] } | { preempted: true }> => {
        // A bursting project's read may be cancelled for a quiet project's (chDB runs them one at a time): it then
        // queues again, until its wait is over; after that it runs to the end.
        const tag = turn.bursting && Date.now() < deadline ? randomUUID() : undefined;
        if (tag) turn.preempt = () => void this.control(`KILL QUERY WHERE Settings['log_comment'] = '${tag}' ASYNC`).catch(() => undefined);
        try {
          return { rows: await this.select<T>(`${query} ${this.readSettings}${tag ? `, log_comment = '${tag}'` : ''}`, params) };
        } catch (e) {
          if (turn.preempted && clickHouseCodeOf(e) === QUERY_WAS_CANCELLED) return { preempted: true };
          throw readLimitError(e, this.readLimits) ?? e;
        }
      });
      if ('rows' in outcome) return outcome.rows;
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

  /** Flushes pending writes and forgets, then closes the client. */
  async close(): Promise<void> {
    await this.writer.drain();
    await this.forgets.idle();
    if (this.aggregateBuilder) {
      this.aggregateBuilder.stop();
      // What was acknowledged is built now, within a bound; the rest (a backlog of far-lane ranges, a failing store)
      // is built by the next open, as after a crash.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.aggregateBuilder.catchUp().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, CLOSE_BUILD_MS)))]);
      clearTimeout(timer);
      await this.aggregateBuilder.halt();
      // A tick's sources_daily refresh runs on the builder's connection, about to close.
      await this.aggregateBuilder.idle();
    }
    await this.handle.close?.();
    await this.client.close();
  }
}
