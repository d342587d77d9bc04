import { EVENT_INSERT_COLUMNS, type EventRow } from '@analytics/schema';
import { AggregateBuilder } from './aggregate-builder';
import { killByTag } from './cancel-tag';
import type { ClickHouseHandle, EventStoreConfig } from './client';
import { EventWriter, type EventWriterOptions, type Lane } from './event-writer';
import { insertEventRows } from './insert-rows';
import { InsertSeqs } from './insert-seqs';
import type { SourcesDaily } from './sources-daily';
import { classifyStoreError } from './store-error';

/** How long close() lets the builder catch up before it stops after the range under way (shutdown stays within ~20 s). */
const CLOSE_BUILD_MS = 5_000;

export interface WriteSideOptions {
  handle: ClickHouseHandle;
  db: string;
  /** Table the INSERTs go to: `events`, the Distributed table in a cluster. */
  table: string;
  /** Cluster mode: inserts are sent synchronously to the shards and never deduplicated. */
  cluster: boolean;
  /** Runs a statement beside the others: the builder's statement is cancelled through it at close. */
  control: (sql: string) => Promise<void>;
  writer: EventWriterOptions;
}

/**
 * The write side of the event store: the group-commit writer, the insert_seq of every INSERT, and (embedded store)
 * the aggregate builder that folds finished seq ranges into the aggregates.
 */
export class WriteSide {
  readonly writer: EventWriter;
  private readonly seqs = new InsertSeqs();
  /** Embedded store (after startBuilder()); unset on a server, where materialized views build the aggregates. */
  private builder: AggregateBuilder | undefined;
  /** Set while quiesced() runs: INSERTs wait for it. */
  private held: Promise<void> | undefined;
  /** When each INSERT the builder has not built yet finished (acknowledged), by seq: the aggregate lag. */
  private readonly finishedAt = new Map<number, number>();

  constructor(private readonly options: WriteSideOptions) {
    this.writer = new EventWriter((rows, lane) => this.insertRows(rows, lane), options.writer);
  }

  /**
   * Embedded store, after the migrations: builds what a crash left unbuilt (before any forget or retention can delete
   * it), then folds new INSERTs in every aggregateIntervalMs. Nothing on a server.
   */
  async startBuilder(config: Pick<EventStoreConfig, 'aggregateIntervalMs' | 'sourcesRefreshMs' | 'onAggregateError'>): Promise<void> {
    const client = this.options.handle.builderClient;
    if (!client) return;
    const builder = new AggregateBuilder({
      db: this.options.db,
      client,
      committedSeq: () => this.seqs.committed,
      onError: config.onAggregateError,
      sourcesRefreshMs: config.sourcesRefreshMs,
      cancel: (tag) => this.options.control(killByTag(tag)),
    });
    const { maxSeq } = await builder.init();
    this.seqs.continueAfter(maxSeq);
    await builder.catchUp();
    builder.start(config.aggregateIntervalMs ?? 1000);
    this.builder = builder;
  }

  get buildsAggregates(): boolean {
    return this.builder !== undefined;
  }

  get sourcesDaily(): SourcesDaily | undefined {
    return this.builder?.sources;
  }

  async aggregatesCaughtUp(): Promise<void> {
    await this.builder?.catchUp();
  }

  async refreshSources(all: boolean): Promise<number> {
    if (!this.builder) return 0;
    await this.builder.catchUp();
    return this.builder.refreshSources(all);
  }

  write(rows: EventRow[]): Promise<void> {
    return this.writer.write(rows);
  }

  async insertRows(rows: EventRow[], lane: Lane = 'live'): Promise<void> {
    const { handle, table, cluster } = this.options;
    await this.insertWith(rows.length, (seq) =>
      insertEventRows(
        {
          client: handle.client,
          rawInsert: lane === 'far' ? handle.rawInsertFar : handle.rawInsert,
          table,
          columns: EVENT_INSERT_COLUMNS,
          settings: cluster ? { insert_deduplicate: 0, insert_distributed_sync: 1 } : undefined,
          seq,
        },
        rows,
      ),
    );
  }

  async insertWith(rows: number, run: (seq: number | undefined) => Promise<unknown>): Promise<void> {
    // A backup under way holds new INSERTs (their acknowledgements wait) so events and aggregates are one moment.
    while (this.held) await this.held;
    const seq = this.builder ? this.seqs.begin() : undefined;
    if (seq !== undefined) this.builder!.noteInsert(seq, rows);
    try {
      await run(seq);
    } catch (e) {
      throw classifyStoreError(e);
    } finally {
      if (seq !== undefined) {
        this.seqs.end(seq);
        this.finishedAt.set(seq, Date.now());
        this.forgetBuilt();
      }
    }
  }

  /** Milliseconds since the oldest finished INSERT the builder has not built yet (0: caught up, or no builder). */
  aggregateLagMs(now: number): number {
    if (!this.builder) return 0;
    const built = this.builder.builtSeq;
    let oldest = Infinity;
    for (const [seq, at] of this.finishedAt) {
      if (seq <= built) this.finishedAt.delete(seq);
      else oldest = Math.min(oldest, at);
    }
    return oldest === Infinity ? 0 : Math.max(0, now - oldest);
  }

  /** Drops the built INSERTs at the front (finish order is about seq order); aggregateLagMs drops the rest. */
  private forgetBuilt(): void {
    const built = this.builder?.builtSeq ?? Infinity;
    for (const seq of this.finishedAt.keys()) {
      if (seq > built) break;
      this.finishedAt.delete(seq);
    }
  }

  async settleForDelete(): Promise<number | undefined> {
    if (!this.builder) return undefined;
    const seq = this.seqs.latest;
    await this.seqs.settled(seq);
    await this.builder.catchUp();
    return seq;
  }

  /**
   * Runs `fn` at one moment of the store: no INSERT in flight (new ones wait; the writer keeps accepting), everything
   * acknowledged built into the aggregates, and no build or sources_daily refresh running. A backup runs in it.
   */
  async quiesced<T>(fn: () => Promise<T>): Promise<T> {
    while (this.held) await this.held;
    let release!: () => void;
    this.held = new Promise((r) => (release = r));
    try {
      await this.seqs.settled(this.seqs.latest);
      const builder = this.builder;
      if (!builder) return await fn();
      await builder.catchUp();
      return await builder.exclusive(fn);
    } finally {
      this.held = undefined;
      release();
    }
  }

  /** Writes everything accepted so far. */
  async drain(): Promise<void> {
    await this.writer.drain();
  }

  /**
   * Lets the builder build what was acknowledged, within a bound, then halts it; the rest (a backlog of far-lane
   * ranges, a failing store) is built by the next open, as after a crash.
   */
  async stopBuilder(): Promise<void> {
    const builder = this.builder;
    if (!builder) return;
    builder.stop();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([builder.catchUp().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, CLOSE_BUILD_MS)))]);
    clearTimeout(timer);
    await builder.halt();
    // A tick's sources_daily refresh runs on the builder's connection, about to close.
    await builder.idle();
  }
}
