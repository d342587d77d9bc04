import { randomUUID } from 'node:crypto';
import { type ClickHouseClient, ClickHouseError } from '@clickhouse/client';
import { EVENT_INSERT_COLUMNS, type EventRow, UpstreamUnavailableError } from '@analytics/schema';
import { type EventStoreConfig, type RawInsert, connectClickHouse } from './client';
import { EventWriter, type EventWriterOptions } from './event-writer';
import { insertEventRows } from './insert-rows';
import { ReadGate } from './read-gate';
import { DEFAULT_READ_LIMITS, type ReadLimits, clickHouseCodeOf, readLimitError, readSettingsClause } from './read-limits';
import { assertIdentifier, localTableOf, migrateEventStore } from './migrate';

// Tools, benchmarks and tests insert through the store's column list, which libs/schema derives from the column descriptor.
export { EVENT_INSERT_COLUMNS } from '@analytics/schema';

const QUERY_WAS_CANCELLED = 394;

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
  readonly db: string;
  readonly cluster: string | undefined;

  private readonly readLimits: ReadLimits;
  private readonly gate: ReadGate;
  private readonly readSettings: string;
  /** Statements beside the reads (KILL QUERY of a preempted read); the tags in them are our own UUIDs. */
  private readonly control: (sql: string) => Promise<void>;

  private constructor(
    readonly client: ClickHouseClient,
    config: EventStoreConfig,
    writerOptions: EventWriterOptions,
    private readonly rawInsert?: RawInsert,
    private readonly closeHandle?: () => Promise<void>,
    control?: (sql: string) => Promise<void>,
  ) {
    this.control = control ?? (async (sql) => void (await this.client.command({ query: sql })));
    const limits = { ...DEFAULT_READ_LIMITS, ...config.read };
    this.readLimits = { ...limits, concurrency: limits.concurrency || (config.url ? 8 : 1) };
    this.gate = new ReadGate(this.readLimits);
    this.readSettings = readSettingsClause(this.readLimits);
    this.db = assertIdentifier(config.database, 'CLICKHOUSE_DATABASE');
    this.cluster = config.cluster ? assertIdentifier(config.cluster, 'CLICKHOUSE_CLUSTER') : undefined;
    this.writer = new EventWriter((rows) => this.insertRows(rows), { concurrency: config.url ? 4 : 1, ...writerOptions });
  }

  /** Opens the store and applies pending migrations. */
  static async open(config: EventStoreConfig, writerOptions: EventWriterOptions = {}): Promise<EventStore> {
    const store = EventStore.connect(config, writerOptions);
    try {
      await migrateEventStore(store.client, { db: store.db, cluster: store.cluster });
    } catch (e) {
      await store.client.close().catch(() => undefined);
      throw e;
    }
    return store;
  }

  /** The store without touching the schema (no migrations, no round trip): for tools and fault tests. */
  static connect(config: EventStoreConfig, writerOptions: EventWriterOptions = {}): EventStore {
    const { client, rawInsert, close, control } = connectClickHouse(config);
    return new EventStore(client, config, writerOptions, rawInsert, close, control);
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
  async insertRows(rows: EventRow[]): Promise<void> {
    try {
      await insertEventRows(
        {
          client: this.client,
          rawInsert: this.rawInsert,
          table: this.eventsTable,
          columns: EVENT_INSERT_COLUMNS,
          settings: this.cluster ? { insert_deduplicate: 0, insert_distributed_sync: 1 } : undefined,
        },
        rows,
      );
    } catch (e) {
      throw classifyStoreError(e);
    }
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

  /** Flushes pending writes, then closes the client. */
  async close(): Promise<void> {
    await this.writer.drain();
    await this.closeHandle?.();
    await this.client.close();
  }
}
