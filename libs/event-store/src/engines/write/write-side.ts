import { EVENT_INSERT_COLUMNS, type EventRow } from '@analytics/schema';
import { AggregateBuilder, progressState, readProgress } from './aggregate-builder';
import { killBuildsSql, killByTag } from '../../primitives/cancel-tag';
import type { ClickHouseHandle } from '../../client/client';
import { EventWriter, type EventWriterOptions, type Lane } from './event-writer';
import { insertEventRows } from './insert-rows';
import { InsertSeqs } from './insert-seqs';
import type { SourcesDaily } from './sources-daily-refresh';
import { classifyStoreError } from '../../client/store-error';
import { INSERT_MAX_EXECUTION_S, StoreFrontier, completeUnbuilt } from './store-frontier';
import { type InsertStamp, WriterSlots } from './writer-slots';

/** Stops `builder`'s timer and lets it build what has finished, for `ms` at most (0: not at all). */
async function catchUpWithin(builder: AggregateBuilder, ms: number): Promise<void> {
  builder.stop();
  if (ms <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([builder.catchUp().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** A server: how long a delete (forget, retention) or aggregatesCaughtUp() waits for the builder at least. */
export const SETTLE_WAIT_MS = 5_000;

/** How long close() lets the builder catch up before it stops after the range under way (shutdown stays within ~20 s). */
const CLOSE_BUILD_MS = 5_000;

/** How the aggregate builder runs, in the process that builds. */
export interface BuilderConfig {
  /** Embedded store: how often the aggregate builder folds new events into the aggregates (AGGREGATE_INTERVAL_MS). */
  aggregateIntervalMs?: number;
  /** Embedded store: a day of sources_daily is recomputed at most this often (SOURCES_REFRESH_MS). */
  sourcesRefreshMs?: number;
  /** A failed aggregate build (it is retried): for the owner's log. */
  onAggregateError?: (e: unknown) => void;
}

export interface WriteSideOptions {
  handle: ClickHouseHandle;
  db: string;
  /** Table the INSERTs go to: `events`, the Distributed table in a cluster. */
  table: string;
  /** Cluster mode: inserts are sent synchronously to the shards and never deduplicated. */
  cluster: boolean;
  /** Cluster mode: the cluster's name (the builder's statements are cancelled ON CLUSTER). */
  clusterName?: string;
  /** A ClickHouse server: many writers (WriterSlots), and the builder runs in the process that holds the lease. */
  server: boolean;
  /**
   * A server, in a process that does not build: how long a read of the aggregates waits for the builder to build what
   * was acknowledged before it (AGGREGATE_WAIT_MS). 0 or unset: reads do not wait (they answer from what is built, at
   * most about one builder tick behind); deletes and aggregatesCaughtUp() always wait (at least SETTLE_WAIT_MS).
   */
  aggregateWaitMs?: number;
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
  /** A server's writers: one INSERT in flight per slot. */
  private readonly slots = new WriterSlots();
  /** A server, while this process builds: the builder's frontier (its lag). */
  private frontier: StoreFrontier | undefined;
  /** The embedded store (after startBuilder()); a server while this process holds the builder's lease (startBuilding()). */
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
   * it), then folds new INSERTs in every aggregateIntervalMs. A server: only measures the store's clock for the writer
   * slots' seqs; the builder starts with the lease (startBuilding()).
   */
  async startBuilder(config: BuilderConfig): Promise<void> {
    if (this.options.server) {
      await this.measureClock();
      return;
    }
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

  /**
   * A server: this process builds the aggregates from now on (it holds the builder's lease; `confirm` throws once it
   * may no longer build). What a crash left half built is finished first, as on the embedded store.
   */
  async startBuilding(config: BuilderConfig & { confirm?: () => Promise<void>; settleMs?: number }): Promise<void> {
    if (!this.options.server) throw new Error('startBuilding: a server only (the embedded store builds from open)');
    if (this.builder) return;
    const { handle, db, cluster } = this.options;
    // The store's side of the lease: a build statement the previous holder left running (it lost the lease, or died
    // with the statement under way) is cancelled and waited for before this one reads what has landed.
    await this.options.control(killBuildsSql(this.options.clusterName)).catch(() => undefined);
    const frontier = new StoreFrontier({ db, client: handle.client, settleMs: config.settleMs });
    const builder = new AggregateBuilder({
      db,
      client: handle.client,
      frontier,
      cluster,
      recordDone: true,
      confirm: config.confirm,
      onError: config.onAggregateError,
      sourcesRefreshMs: config.sourcesRefreshMs,
      cancel: (tag) => this.options.control(killByTag(tag, this.options.clusterName)),
    });
    await builder.init();
    // Building from here on (analytics_aggregate_builder_active), the backlog first.
    this.builder = builder;
    this.frontier = frontier;
    builder.start(config.aggregateIntervalMs ?? 1000);
    await builder.catchUp();
  }

  /** This process builds the aggregates now (the embedded store always; a server while it holds the lease). */
  get building(): boolean {
    return this.builder !== undefined;
  }

  /**
   * A server: this process stops building. On a lost lease at once (the statement under way is cancelled; the next
   * holder finishes the range); at a shutdown (`catchUpMs`) after letting it build what is finished, within that bound.
   */
  async stopBuilding(catchUpMs = 0): Promise<void> {
    const builder = this.builder;
    if (!builder || !this.options.server) return;
    await catchUpWithin(builder, catchUpMs);
    this.builder = undefined;
    this.frontier = undefined;
    await builder.halt();
    await builder.idle();
  }

  /** The store's clock minus this process's: a server's insert seqs are the store's microseconds. */
  private async measureClock(): Promise<void> {
    const before = Date.now();
    const rs = await this.options.handle.client.query({ query: 'SELECT toString(toUnixTimestamp64Micro(now64(6))) AS now', format: 'JSONEachRow' });
    const [row] = await rs.json<{ now: string }>();
    const local = ((before + Date.now()) / 2) * 1000;
    this.slots.setClockOffset(Math.round(Number(row!.now) - local));
  }

  get buildsAggregates(): boolean {
    return this.builder !== undefined || this.options.server;
  }

  get sourcesDaily(): SourcesDaily | undefined {
    return this.builder?.sources;
  }

  /**
   * Resolves once what was acknowledged before the call is in the aggregates: this process builds it (the embedded
   * store, or a server's lease holder), or (a server, not building) the builder elsewhere has, within
   * max(AGGREGATE_WAIT_MS, SETTLE_WAIT_MS). Deletes, backups, tests and benchmarks settle with it.
   */
  async aggregatesCaughtUp(): Promise<void> {
    if (this.builder) await this.builder.catchUp();
    else if (this.options.server) await this.waitForBuilder(Math.max(this.options.aggregateWaitMs ?? 0, SETTLE_WAIT_MS));
  }

  /**
   * Before a read of the aggregates. The embedded store (and a server's lease holder) builds what has finished first:
   * the read sees every acknowledged event. A server's other processes wait for the builder only with
   * AGGREGATE_WAIT_MS > 0; by default they read what is built, which the builder keeps at most one tick
   * (AGGREGATE_INTERVAL_MS) and one build behind: one round trip per read instead of two, and no wait for the next tick
   * under live ingest (the event store's README, "One builder, every mode").
   */
  async beforeAggregateRead(): Promise<void> {
    if (this.builder) await this.builder.catchUp();
    else if (this.options.server && (this.options.aggregateWaitMs ?? 0) > 0) await this.waitForBuilder(this.options.aggregateWaitMs!);
  }

  /**
   * A server, in a process that does not build: waits until the builder (another process) has built every INSERT that
   * finished before this call (everything acknowledged before it), or `waitMs` has passed (then the answer may miss
   * the newest events: the builder is behind or down, which its metrics show). The builder records how far its
   * last scan looked (`covered`, the store's clock): one query looks, among the INSERTs that can have finished since
   * (seqs above covered minus FINISH_WINDOW_US), for complete ones not built yet; when there are, it waits for them.
   */
  private async waitForBuilder(waitMs: number): Promise<void> {
    const { client } = this.options.handle;
    const db = this.options.db;
    const startedUs = this.slots.storeNowUs();
    const waiting = await completeUnbuilt(client, db);
    if (waiting.length === 0) return;
    const deadline = Date.now() + waitMs;
    for (;;) {
      await new Promise((r) => setTimeout(r, 20));
      const p = await readProgress(client, db);
      if (!p) continue;
      const { built, floor } = progressState(p);
      const left = waiting.filter(({ w, s }) => s > floor && s > (built.get(w) ?? 0));
      if (left.length === 0 || (p.done && p.covered >= startedUs) || Date.now() >= deadline) return;
    }
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
    const { handle, table, cluster, server } = this.options;
    await this.insertWith(rows.length, (seq, stamp) =>
      insertEventRows(
        {
          client: handle.client,
          rawInsert: lane === 'far' ? handle.rawInsertFar : handle.rawInsert,
          table,
          columns: EVENT_INSERT_COLUMNS,
          // A server: the INSERT is bounded in the engine, so nothing of it lands long after its seq (store-frontier.ts).
          settings: { ...(cluster ? { insert_deduplicate: 0, insert_distributed_sync: 1 } : {}), ...(server ? { max_execution_time: INSERT_MAX_EXECUTION_S } : {}) },
          seq,
          stamp,
          stampColumns: cluster ? 'stored' : 'inputs',
        },
        rows,
      ),
    );
  }

  /**
   * One INSERT of about `rows` rows made by `run`, which sends `seq` as insert_seq_in and, on a server, the stamp's
   * writer and row count as insert_writer_in and insert_rows_in (insertRows does).
   */
  async insertWith(rows: number, run: (seq: number | undefined, stamp?: InsertStamp) => Promise<unknown>): Promise<void> {
    if (this.options.server) {
      try {
        await this.slots.with(rows, (stamp) => run(stamp.seq, stamp));
      } catch (e) {
        throw classifyStoreError(e);
      }
      return;
    }
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
    if (this.options.server) return this.frontier?.lagMs ?? 0;
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
    if (this.options.server) {
      // Every INSERT acknowledged so far is built before the delete (the delete itself names no seq: many writers).
      await this.aggregatesCaughtUp();
      return undefined;
    }
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
    if (this.options.server) {
      // The next holder of the lease rechecks a range left unfinished, as after a crash.
      await this.stopBuilding(CLOSE_BUILD_MS);
      return;
    }
    await catchUpWithin(builder, CLOSE_BUILD_MS);
    await builder.halt();
    // A tick's sources_daily refresh runs on the builder's connection, about to close.
    await builder.idle();
  }
}
