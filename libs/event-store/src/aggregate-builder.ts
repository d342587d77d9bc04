import type { ClickHouseClient } from '@clickhouse/client';
import { AGGREGATES, BUILD_SETTINGS, aggregateSelect } from './aggregates';
import { cancelTagSetting, newCancelTag } from './cancel-tag';
import { SourcesDaily } from './sources-daily';

export interface AggregateBuilderOptions {
  /** Database of the tables (an identifier, checked by the store). */
  db: string;
  /** A connection of its own (reads and inserts never wait behind it). */
  client: ClickHouseClient;
  /** Highest insert_seq such that every INSERT with a seq at or below it has finished. */
  committedSeq: () => number;
  /** Events per range at most (a range is at least one INSERT). */
  maxRangeRows?: number;
  /** A failed build, logged by the store's owner; the range is retried. */
  onError?: (e: unknown) => void;
  /** sources_daily: a day is recomputed at most this often (ms); reads compute a stale day meanwhile. */
  sourcesRefreshMs?: number;
  /** Cancels a running statement of the builder by its cancel tag (from another connection): halt() uses it. */
  cancel?: (tag: string) => Promise<void>;
}

type Range = { from: number; to: number };

/**
 * Builds the aggregates from events off the request path, exactly once: a range of insert seqs is recorded before it
 * is built, and after a crash rebuilt only in the tables and months that lack it (README, "The builder, exactly once").
 */
export class AggregateBuilder {
  private built = 0;
  /** A range recorded in aggregate_progress and not yet fully built (after a crash or a failed INSERT). */
  private pending: Range | undefined;
  private running: Promise<void> | undefined;
  /** Rows per seq of INSERTs this process made and the builder has not built yet (ranges are cut by rows). */
  private readonly sizes = new Map<number, number>();
  private readonly maxRangeRows: number;
  private timer: NodeJS.Timeout | undefined;
  /** Builds and sources_daily refreshes run one at a time, in this chain. */
  private chain: Promise<unknown> = Promise.resolve();
  private sourcesDaily: SourcesDaily | undefined;
  /** After stop(): a tick still under way refreshes nothing more. */
  private stopped = false;
  /** After halt(): no range starts any more (the next open builds the rest). */
  private halted = false;
  /** Cancel tag of the build statement running, if any. */
  private runningTag: string | undefined;

  constructor(private readonly options: AggregateBuilderOptions) {
    this.maxRangeRows = options.maxRangeRows ?? 500_000;
  }

  /** Highest seq whose events are in every aggregate. */
  get builtSeq(): number {
    return this.built;
  }

  /** sources_daily's keeper (after init): reads tell it the stale days they found. */
  get sources(): SourcesDaily | undefined {
    return this.sourcesDaily;
  }

  /** Reads the state after a restart: the last recorded range is re-checked before anything else is built. */
  async init(): Promise<{ maxSeq: number }> {
    const [last] = await this.query<{ seq_from: string; seq_to: string }>(
      `SELECT seq_from, seq_to FROM ${this.options.db}.aggregate_progress ORDER BY seq_to DESC LIMIT 1`,
      {},
    );
    if (last) {
      this.built = Number(last.seq_from);
      this.pending = { from: Number(last.seq_from), to: Number(last.seq_to) };
    }
    // Sizes of the INSERTs not built yet, to cut ranges by rows (the minmax index on insert_seq skips older granules).
    let maxSeq = this.pending?.to ?? 0;
    for (const r of await this.query<{ s: string; n: string }>(
      `SELECT insert_seq AS s, count() AS n FROM ${this.options.db}.events WHERE insert_seq > {built:UInt64} GROUP BY s`,
      { built: this.built },
    )) {
      this.sizes.set(Number(r.s), Number(r.n));
      maxSeq = Math.max(maxSeq, Number(r.s));
    }
    this.sourcesDaily = new SourcesDaily({ db: this.options.db, client: this.options.client, refreshMs: this.options.sourcesRefreshMs ?? 60_000 }, this.built);
    return { maxSeq };
  }

  /** An INSERT of `rows` events got `seq` (called before it runs). */
  noteInsert(seq: number, rows: number): void {
    this.sizes.set(seq, rows);
  }

  /** Builds every few ms from now on, until stop(). */
  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.tick().catch((e: unknown) => this.options.onError?.(e)), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.stopped = true;
  }

  /**
   * Starts no further range and cancels the statement under way: a shutdown's time is bounded, and the range is
   * finished by the next open exactly as after a crash.
   */
  async halt(): Promise<void> {
    this.halted = true;
    if (this.runningTag) await this.options.cancel?.(this.runningTag).catch(() => undefined);
  }

  /** Resolves when no build or refresh is running (a tick's refresh may still be, after stop()). */
  async idle(): Promise<void> {
    await this.chain;
  }

  /** The timer's work: build what finished, then refresh the due days of sources_daily. */
  async tick(): Promise<void> {
    await this.catchUp();
    await this.refreshSources();
  }

  /**
   * Marks the days the built events touched and recomputes the due ones (all of them with `all`), between builds:
   * the aggregates then hold exactly the ranges up to builtSeq, the seq each refreshed day is stamped with.
   */
  async refreshSources(all = false): Promise<number> {
    return this.serial(async () => (this.pending || this.stopped || !this.sourcesDaily ? 0 : this.sourcesDaily.refresh(this.built, Date.now(), all)));
  }

  /** Runs `fn` with no build or sources_daily refresh running, and none starting until it ends. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.serial(fn);
  }

  private serial<T>(run: () => Promise<T>): Promise<T> {
    const next = this.chain.then(run, run);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Resolves once every INSERT that had finished when it was called is in the aggregates. */
  async catchUp(): Promise<void> {
    const target = this.options.committedSeq();
    while (this.built < target && !this.halted) {
      if (!this.running) {
        this.running = this.serial(() => this.buildNext()).finally(() => (this.running = undefined));
      }
      await this.running;
    }
  }

  private async buildNext(): Promise<void> {
    if (this.pending) {
      await this.build(this.pending, true);
    } else {
      const to = this.cut(this.built, this.options.committedSeq());
      if (to <= this.built) return;
      const range = { from: this.built, to };
      await this.command(`INSERT INTO ${this.options.db}.aggregate_progress (seq_from, seq_to) VALUES ({from:UInt64}, {to:UInt64})`, range);
      this.pending = range;
      await this.build(range, false);
    }
    for (const seq of this.sizes.keys()) if (seq <= this.pending!.to) this.sizes.delete(seq);
    this.built = this.pending!.to;
    this.pending = undefined;
  }

  /** The end of the next range: as many whole INSERTs after `from` as fit maxRangeRows (at least one). */
  private cut(from: number, committed: number): number {
    let rows = 0;
    for (let seq = from + 1; seq <= committed; seq++) {
      rows += this.sizes.get(seq) ?? 0; // an INSERT that failed wrote nothing
      if (rows > this.maxRangeRows && seq > from + 1) return seq - 1;
    }
    return committed;
  }

  private async build(range: Range, recheck: boolean): Promise<void> {
    const db = this.options.db;
    const inRange = 'insert_seq > {from:UInt64} AND insert_seq <= {to:UInt64}';
    const months = recheck
      ? (await this.query<{ m: number }>(`SELECT DISTINCT toYYYYMM(timestamp) AS m FROM ${db}.events WHERE ${inRange}`, range)).map((r) => Number(r.m))
      : undefined;
    for (const a of AGGREGATES) {
      let only = '';
      const params: Record<string, unknown> = { ...range };
      if (months) {
        if (months.length === 0) return;
        const landed = new Set(
          (
            await this.query<{ m: number }>(
              `SELECT toYYYYMM(day) AS m FROM ${db}.${a.table} WHERE toYYYYMM(day) IN {months:Array(UInt32)} GROUP BY m HAVING max(built_seq) >= {to:UInt64}`,
              { months, to: range.to },
            )
          ).map((r) => Number(r.m)),
        );
        const missing = months.filter((m) => !landed.has(m));
        if (missing.length === 0) continue;
        only = ' AND toYYYYMM(timestamp) IN {missing:Array(UInt32)}';
        params.missing = missing;
      }
      const select = aggregateSelect(a, `${db}.events`, `${inRange}${only}`, ['toUInt64({to:UInt64}) AS built_seq']);
      await this.buildCommand(`INSERT INTO ${db}.${a.table} (${[...a.columns, 'built_seq'].join(', ')}) ${select}`, BUILD_SETTINGS, params);
    }
  }

  private async query<T>(query: string, query_params: Record<string, unknown>): Promise<T[]> {
    const rs = await this.options.client.query({ query, query_params, format: 'JSONEachRow' });
    return rs.json<T>();
  }

  private async command(query: string, query_params: Record<string, unknown>): Promise<void> {
    if (this.halted) throw new Error('aggregate builder halted');
    await this.options.client.command({ query, query_params });
  }

  /** A build statement, which halt() can cancel: it carries a cancel tag among its settings. */
  private async buildCommand(query: string, settings: string, query_params: Record<string, unknown>): Promise<void> {
    const tag = newCancelTag();
    this.runningTag = tag;
    try {
      await this.command(`${query} SETTINGS ${settings}, ${cancelTagSetting(tag)}`, query_params);
    } finally {
      this.runningTag = undefined;
    }
  }
}
