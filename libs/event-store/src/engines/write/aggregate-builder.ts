import type { ClickHouseClient } from '@clickhouse/client';
import { AGGREGATES, BUILD_SETTINGS, aggregateSelect } from '../../tables/aggregates';
import { BUILD_TAG_PREFIX, cancelTagSetting, newCancelTag } from '../../primitives/cancel-tag';
import { SourcesDaily } from './sources-daily-refresh';

/** One writer's part of a range: its INSERTs with insert_seq in (from, to]. */
export interface WriterBound {
  writer: number;
  from: number;
  to: number;
}

/** What the next range may hold, from a frontier (see Frontier). */
export interface FrontierStep {
  /** Writers whose built seq moves, and to where. */
  bounds: WriterBound[];
  /** Every event with insert_seq at or below it is built once the range is (it never goes down). */
  floor: number;
  /** Writers to forget: fully built, idle, and below the floor (their rows are never read again). */
  prune: number[];
  /**
   * The store's clock (microseconds) at the scan, when this step takes every INSERT complete then (nothing was left
   * out for the range's size): once it is built, every INSERT finished before that moment is in the aggregates.
   */
  covered?: number;
}

/**
 * Where the finished INSERTs end, per writer. The embedded store's frontier is its own bookkeeping (one writer, this
 * process); a server's reads the store (store-frontier.ts): many writers, each INSERT proven complete by its rows.
 */
export interface Frontier {
  next(built: ReadonlyMap<number, number>, floor: number, maxRows: number): Promise<FrontierStep | undefined>;
}

export interface AggregateBuilderOptions {
  /** Database of the tables (an identifier, checked by the store). */
  db: string;
  /** A connection of its own (reads and inserts never wait behind it). */
  client: ClickHouseClient;
  /**
   * The embedded store: highest insert_seq such that every INSERT with a seq at or below it has finished (this
   * process is the one writer, 0). Unset on a server, where `frontier` says it.
   */
  committedSeq?: () => number;
  /** A server's frontier (store-frontier.ts); the embedded store's is built from committedSeq. */
  frontier?: Frontier;
  /** Cluster: INSERT ... SELECT through the Distributed tables, each shard folding its own events. */
  cluster?: boolean;
  /** Events per range at most (a range is at least one INSERT). */
  maxRangeRows?: number;
  /** A failed build, logged by the store's owner; the range is retried. */
  onError?: (e: unknown) => void;
  /** sources_daily: a day is recomputed at most this often (ms); reads compute a stale day meanwhile. */
  sourcesRefreshMs?: number;
  /** Cancels a running statement of the builder by its cancel tag (from another connection): halt() uses it. */
  cancel?: (tag: string) => Promise<void>;
  /** Called before every statement that writes: throws when this builder may no longer build (its lease is gone). */
  confirm?: () => Promise<void>;
  /**
   * A server: after a range is built, its progress row is written again marked done, so that reads in other
   * processes know what the aggregates hold (the embedded store's reads ask this builder).
   */
  recordDone?: boolean;
}

/** A range recorded in aggregate_progress: each writer's state before and after it, and its stamp (built_seq). */
interface Range {
  stamp: number;
  floor: number;
  /** FrontierStep.covered of the step it came from (the last one's when it left INSERTs out). */
  covered: number;
  before: Map<number, number>;
  after: Map<number, number>;
  bounds: WriterBound[];
}

/**
 * A server's idle builder records how far it has looked at most this often (microseconds): a read-your-writes read
 * (AGGREGATE_WAIT_MS) scans the INSERTs since then minus a minute, so this bounds that scan, and an idle builder
 * writes a progress row (a part, then a merge) no more often than this.
 */
const HEARTBEAT_US = 10_000_000;

/** The writer of every INSERT the embedded store makes. */
export const EMBEDDED_WRITER = 0;

/**
 * Builds the aggregates from events off the request path, exactly once, in both store modes: a range (per writer, the
 * INSERTs between what it built and its frontier) is recorded before it is built, and after a crash rebuilt only in
 * the tables and months that lack it (the event store's README, "The builder, exactly once" and "One builder, every mode").
 */
export class AggregateBuilder {
  /** Per writer, the highest insert_seq built. */
  private built = new Map<number, number>();
  /** built_seq of the last range built (the aggregates' stamp). */
  private stamp = 0;
  private floor = 0;
  /** FrontierStep.covered of the last range built (or heartbeat recorded). */
  private covered = 0;
  /** A range recorded in aggregate_progress and not yet fully built (after a crash or a failed INSERT). */
  private pending: Range | undefined;
  private running: Promise<boolean> | undefined;
  /** Embedded store: rows per seq of INSERTs this process made and the builder has not built yet (ranges are cut by rows). */
  private readonly sizes = new Map<number, number>();
  private readonly maxRangeRows: number;
  private readonly frontier: Frontier;
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
    if (options.frontier) this.frontier = options.frontier;
    else if (options.committedSeq) this.frontier = { next: async (built) => this.embeddedStep(built) };
    else throw new Error('AggregateBuilder: committedSeq (embedded store) or frontier (server)');
  }

  /** The embedded store: highest seq of its one writer whose events are in every aggregate. */
  get builtSeq(): number {
    return this.built.get(EMBEDDED_WRITER) ?? 0;
  }

  /** built_seq of the last range built. */
  get builtStamp(): number {
    return this.stamp;
  }

  /** The state after the last range built: per writer its built seq, and the floor. */
  get state(): { built: ReadonlyMap<number, number>; floor: number; stamp: number } {
    return { built: this.built, floor: this.floor, stamp: this.stamp };
  }

  /** sources_daily's keeper (after init): reads tell it the stale days they found. */
  get sources(): SourcesDaily | undefined {
    return this.sourcesDaily;
  }

  /** Reads the state after a restart: the last recorded range is re-checked before anything else is built. */
  async init(): Promise<{ maxSeq: number }> {
    const last = await readProgress(this.options.client, this.options.db);
    if (last) {
      ({ built: this.built, stamp: this.stamp, floor: this.floor } = progressState(last));
      this.covered = last.covered;
    }
    if (last && !last.done) {
      // What the range covers was not recorded before it was built: the next step says it again.
      this.pending = { stamp: last.stamp, floor: last.floor, covered: last.covered, before: last.before, after: last.after, bounds: boundsOf(last.before, last.after, last.floorFrom) };
    }
    let maxSeq = 0;
    if (this.options.committedSeq) {
      // The embedded store: sizes of the INSERTs not built yet, to cut ranges by rows (the minmax index on insert_seq
      // skips older granules).
      maxSeq = this.pending?.after.get(EMBEDDED_WRITER) ?? 0;
      for (const r of await this.query<{ s: string; n: string }>(
        `SELECT insert_seq AS s, count() AS n FROM ${this.options.db}.events WHERE insert_seq > {built:UInt64} GROUP BY s`,
        { built: this.builtSeq },
      )) {
        this.sizes.set(Number(r.s), Number(r.n));
        maxSeq = Math.max(maxSeq, Number(r.s));
      }
    }
    this.sourcesDaily = new SourcesDaily({ db: this.options.db, client: this.options.client, refreshMs: this.options.sourcesRefreshMs ?? 60_000 });
    await this.sourcesDaily.markUnrefreshed();
    return { maxSeq };
  }

  /** The embedded store: an INSERT of `rows` events got `seq` (called before it runs). */
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
   * Recomputes the due days of sources_daily (all of them with `all`), between builds: the aggregates then hold exactly
   * the ranges up to the stamp each refreshed day is recorded with.
   */
  async refreshSources(all = false): Promise<number> {
    return this.serial(async () => {
      if (this.pending || this.stopped || !this.sourcesDaily) return 0;
      await this.options.confirm?.();
      return this.sourcesDaily.refresh(this.stamp, Date.now(), all);
    });
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

  /**
   * Resolves once every INSERT that had finished when it was called is in the aggregates (the embedded store), or once
   * the frontier has nothing more to build (a server: every INSERT proven complete is built).
   */
  async catchUp(): Promise<void> {
    const target = this.options.committedSeq?.();
    while (!this.halted) {
      if (target !== undefined && !this.pending && this.builtSeq >= target) return;
      if (!this.running) {
        this.running = this.serial(() => this.buildNext()).finally(() => (this.running = undefined));
      }
      if (!(await this.running)) return;
    }
  }

  /** Builds the pending range, or records and builds the next one; false when there was nothing to build. */
  private async buildNext(): Promise<boolean> {
    if (!this.pending) {
      const step = await this.frontier.next(this.built, this.floor, this.maxRangeRows);
      if (!step || step.bounds.length === 0) {
        if (step?.covered !== undefined && this.options.recordDone && step.covered - this.covered >= HEARTBEAT_US) await this.heartbeat(step);
        return false;
      }
      const after = new Map(this.built);
      for (const b of step.bounds) after.set(b.writer, b.to);
      for (const w of step.prune) after.delete(w);
      const range: Range = {
        stamp: Math.max(this.stamp + 1, ...step.bounds.map((b) => b.to)),
        floor: Math.max(this.floor, step.floor),
        covered: step.covered ?? this.covered,
        before: this.built,
        after,
        bounds: step.bounds,
      };
      await this.record(range, false);
      this.pending = range;
      await this.build(range, false);
    } else {
      await this.build(this.pending, true);
    }
    const done = this.pending;
    if (this.options.recordDone) await this.record(done, true);
    if (done.bounds.length > 0) await this.sourcesDaily?.noteBuilt(rangeWhere(done.bounds));
    for (const seq of this.sizes.keys()) if (seq <= (done.after.get(EMBEDDED_WRITER) ?? 0)) this.sizes.delete(seq);
    this.built = done.after;
    this.stamp = done.stamp;
    this.floor = done.floor;
    this.covered = done.covered;
    this.pending = undefined;
    return true;
  }

  /**
   * The range's row in aggregate_progress: written before it is built, and (recordDone) again once it is. A pruned
   * writer is in `froms` and not in `tos` (0 there).
   */
  private async record(range: Range, done: boolean, from = this.stamp, floorFrom = this.floor): Promise<void> {
    const writers = [...new Set([...range.before.keys(), ...range.after.keys()])];
    await this.command(
      `INSERT INTO ${this.options.db}.aggregate_progress (seq_from, seq_to, floor, floor_from, covered, writers, froms, tos, done) VALUES ({from:UInt64}, {to:UInt64}, {floor:UInt64}, {floor_from:UInt64}, {covered:UInt64}, {writers:Array(UInt64)}, {froms:Array(UInt64)}, {tos:Array(UInt64)}, {done:UInt8})`,
      {
        // A row not done yet says what the state before it covers; a done row what the state after it does.
        from, to: range.stamp, floor: range.floor, floor_from: floorFrom, writers, done: done ? 1 : 0, covered: done ? range.covered : this.covered,
        froms: writers.map((w) => range.before.get(w) ?? 0), tos: writers.map((w) => range.after.get(w) ?? 0),
      },
    );
  }

  /**
   * Nothing to build: the last range's done row again, with how far this scan looked (covered) and the floor. Reads
   * in other processes then know that nothing finished before `covered` is missing, without scanning the events.
   */
  private async heartbeat(step: FrontierStep): Promise<void> {
    const floor = Math.max(this.floor, step.floor);
    const covered = step.covered!;
    const same: Range = { stamp: this.stamp, floor, covered, before: this.built, after: this.built, bounds: [] };
    await this.record(same, true, this.stamp, floor);
    this.floor = floor;
    this.covered = covered;
  }

  /** The embedded store's next range: as many whole INSERTs after what it built as fit maxRangeRows (at least one). */
  private embeddedStep(built: ReadonlyMap<number, number>): FrontierStep | undefined {
    const from = built.get(EMBEDDED_WRITER) ?? 0;
    const committed = this.options.committedSeq!();
    let to = committed;
    let rows = 0;
    for (let seq = from + 1; seq <= committed; seq++) {
      rows += this.sizes.get(seq) ?? 0; // an INSERT that failed wrote nothing
      if (rows > this.maxRangeRows && seq > from + 1) {
        to = seq - 1;
        break;
      }
    }
    return to > from ? { bounds: [{ writer: EMBEDDED_WRITER, from, to }], floor: 0, prune: [] } : undefined;
  }

  private async build(range: Range, recheck: boolean): Promise<void> {
    const db = this.options.db;
    if (range.bounds.length === 0) return;
    const where = rangeWhere(range.bounds);
    const months = recheck
      ? (await this.query<{ m: number }>(`SELECT DISTINCT toYYYYMM(timestamp) AS m FROM ${db}.events WHERE ${where.sql}`, where.params)).map((r) => Number(r.m))
      : undefined;
    const settings = this.options.cluster ? `${BUILD_SETTINGS}, parallel_distributed_insert_select = 2` : BUILD_SETTINGS;
    for (const a of AGGREGATES) {
      let only = '';
      const params: Record<string, unknown> = { ...where.params, stamp: range.stamp };
      if (months) {
        if (months.length === 0) return;
        const landed = new Set(
          (
            await this.query<{ m: number }>(
              `SELECT toYYYYMM(day) AS m FROM ${db}.${a.table} WHERE toYYYYMM(day) IN {months:Array(UInt32)} GROUP BY m HAVING max(built_seq) >= {stamp:UInt64}`,
              { months, stamp: range.stamp },
            )
          ).map((r) => Number(r.m)),
        );
        const missing = months.filter((m) => !landed.has(m));
        if (missing.length === 0) continue;
        only = ' AND toYYYYMM(timestamp) IN {missing:Array(UInt32)}';
        params.missing = missing;
      }
      const select = aggregateSelect(a, `${db}.events`, `${where.sql}${only}`, ['toUInt64({stamp:UInt64}) AS built_seq']);
      await this.buildCommand(`INSERT INTO ${db}.${a.table} (${[...a.columns, 'built_seq'].join(', ')}) ${select}`, settings, params);
    }
  }

  private async query<T>(query: string, query_params: Record<string, unknown>): Promise<T[]> {
    const rs = await this.options.client.query({ query, query_params, format: 'JSONEachRow' });
    return rs.json<T>();
  }

  private async command(query: string, query_params: Record<string, unknown>): Promise<void> {
    if (this.halted) throw new Error('aggregate builder halted');
    await this.options.confirm?.();
    await this.options.client.command({ query, query_params });
  }

  /** A build statement, which halt() can cancel: it carries a cancel tag among its settings. */
  private async buildCommand(query: string, settings: string, query_params: Record<string, unknown>): Promise<void> {
    const tag = newCancelTag(BUILD_TAG_PREFIX);
    this.runningTag = tag;
    try {
      await this.command(`${query} SETTINGS ${settings}, ${cancelTagSetting(tag)}`, query_params);
    } finally {
      this.runningTag = undefined;
    }
  }
}

/** The builder's recorded state: the newest aggregate_progress row (a row from before 012 is writer 0's range). */
export interface Progress {
  from: number;
  stamp: number;
  floor: number;
  floorFrom: number;
  /** The store's clock (µs): every INSERT finished before it is in the state this row describes (0: not known). */
  covered: number;
  /** The range is built (a server's builder marks it); else it may still be under way. */
  done: boolean;
  before: Map<number, number>;
  after: Map<number, number>;
}

/** The state a progress row describes: after its range once done, before it while not (completeUnbuilt's SQL says the same). */
export function progressState(p: Progress): { built: Map<number, number>; stamp: number; floor: number } {
  return p.done ? { built: p.after, stamp: p.stamp, floor: p.floor } : { built: p.before, stamp: p.from, floor: p.floorFrom };
}

/**
 * The newest aggregate_progress row: the highest stamp, its done row before its not-done one, the latest heartbeat
 * (covered) among done rows of one stamp. readProgress and completeUnbuilt (store-frontier.ts) read it.
 */
export const NEWEST_PROGRESS_ROW = 'ORDER BY seq_to DESC, done DESC, covered DESC LIMIT 1';

export async function readProgress(client: ClickHouseClient, db: string): Promise<Progress | undefined> {
  const rs = await client.query({
    query: `SELECT seq_from, seq_to, floor, floor_from, covered, writers, froms, tos, done FROM ${db}.aggregate_progress ${NEWEST_PROGRESS_ROW}`,
    format: 'JSONEachRow',
  });
  const [row] = await rs.json<{ seq_from: string; seq_to: string; floor: string; floor_from: string; covered: string; writers: string[]; froms: string[]; tos: string[]; done: number }>();
  if (!row) return undefined;
  const from = Number(row.seq_from);
  const stamp = Number(row.seq_to);
  const done = Number(row.done) === 1;
  // Only an embedded store's row from before 012 has no writers and is not done (a server's heartbeat before its first
  // range has none either, and is done).
  if (row.writers.length === 0 && !done) {
    return { from, stamp, floor: 0, floorFrom: 0, covered: 0, done, before: new Map([[EMBEDDED_WRITER, from]]), after: new Map([[EMBEDDED_WRITER, stamp]]) };
  }
  const zip = (seqs: string[]) => new Map(row.writers.map((w, i) => [Number(w), Number(seqs[i])] as const).filter(([, seq]) => seq > 0));
  return { from, stamp, floor: Number(row.floor), floorFrom: Number(row.floor_from), covered: Number(row.covered), done, before: zip(row.froms), after: zip(row.tos) };
}

/**
 * A recorded range's bounds, as the frontier gave them: a writer not in the state before it (new, or pruned and back)
 * starts at the floor before it, never at 0: what it wrote below that floor was built by earlier ranges.
 */
function boundsOf(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>, floorFrom: number): WriterBound[] {
  const bounds: WriterBound[] = [];
  for (const [writer, to] of after) {
    const from = before.get(writer) ?? floorFrom;
    if (to > from) bounds.push({ writer, from, to });
  }
  return bounds;
}

/**
 * The events of a range: per writer its seqs in (from, to], with the whole range's min and max first so the minmax
 * index on insert_seq skips every granule outside it.
 */
export function rangeWhere(bounds: readonly WriterBound[]): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { lo: Math.min(...bounds.map((b) => b.from)), hi: Math.max(...bounds.map((b) => b.to)) };
  const each = bounds.map((b, i) => {
    Object.assign(params, { [`w${i}`]: b.writer, [`f${i}`]: b.from, [`t${i}`]: b.to });
    return `(insert_writer = {w${i}:UInt64} AND insert_seq > {f${i}:UInt64} AND insert_seq <= {t${i}:UInt64})`;
  });
  return { sql: `insert_seq > {lo:UInt64} AND insert_seq <= {hi:UInt64} AND (${each.join(' OR ')})`, params };
}
