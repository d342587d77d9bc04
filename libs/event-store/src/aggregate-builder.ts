import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { MAX_PARTITIONS_PER_INSERT } from './insert-rows';
import { SourcesDaily } from './sources-daily';
import { UNIQUES_BY_GROUPINGS_SQL } from './uniques-by';

/** daily_rollup's grain: daily_uniques_by is built from a range's events folded to it (see below). */
const ROLLUP_GRAIN = 'project_id, day, event_name, source, medium, country, device_type';

/**
 * The aggregates' definitions (the spec's daily_rollup and sessions, and daily_uniques), as the SELECT that folds a
 * set of events into rows of each table. They are the SELECTs of the materialized views of migrations 002 and 003,
 * which built the same tables before 004 (and still do on a ClickHouse server), plus built_seq.
 */
const AGGREGATES = [
  {
    table: 'daily_rollup',
    columns: 'project_id, day, event_name, source, medium, country, device_type, events, uniques, built_seq',
    select: `project_id, toDate(timestamp) AS day, event_name, source, medium, country, device_type, count() AS events,
      uniqCombinedStateIf(anonymous_id, anonymous_id != '') AS uniques`,
    groupBy: ROLLUP_GRAIN,
  },
  {
    table: 'daily_uniques',
    columns: 'project_id, day, event_name, uniques, built_seq',
    select: `project_id, toDate(timestamp) AS day, event_name, uniqCombinedStateIf(anonymous_id, anonymous_id != '') AS uniques`,
    groupBy: 'project_id, day, event_name',
  },
  {
    // Migration 006: per (day, event_name or '' for all, dimension, value). The range's events are first folded to
    // daily_rollup's grain (one small sketch per grain row), then the ARRAY JOIN emits each grain row once per
    // grouping it counts in and the sketches are merged: expanding the events themselves 9x held every expanded row
    // (with its anonymous_id) in memory at once. The tuples are the migration's backfill's (UNIQUES_BY_GROUPINGS_SQL).
    table: 'daily_uniques_by',
    columns: 'project_id, day, event_name, dim, dim_value, uniques, built_seq',
    from: (events: string, where: string) => `(SELECT project_id, toDate(timestamp) AS day, event_name, source, medium, country, device_type,
      uniqCombinedStateIf(anonymous_id, anonymous_id != '') AS u FROM ${events} WHERE ${where} GROUP BY ${ROLLUP_GRAIN})
      ARRAY JOIN ${UNIQUES_BY_GROUPINGS_SQL} AS t`,
    select: `project_id, day, t.1 AS by_event, t.2 AS by_dim, t.3 AS by_value, uniqCombinedMergeState(u) AS uniques`,
    groupBy: 'project_id, day, by_event, by_dim, by_value',
  },
  {
    table: 'sessions',
    columns: 'project_id, day, session_key, session_id, anonymous_id, entry, first_ts, last_ts, events, paid_events, built_seq',
    select: `project_id, toDate(timestamp) AS day, cityHash64(session_id, anonymous_id) AS session_key, session_id, anonymous_id,
      min(concat(leftPad(toString(toUnixTimestamp64Milli(timestamp)), 15, '0'), leftPad(toString(length(source)), 5, '0'), source, medium)) AS entry,
      min(timestamp) AS first_ts, max(timestamp) AS last_ts, count() AS events, countIf(medium = 'paid') AS paid_events`,
    groupBy: 'project_id, day, session_id, anonymous_id',
  },
] as const;

/**
 * One INSERT ... SELECT writes ONE part per month partition (a part is committed atomically): its output is squashed
 * into a single block (min_insert_block_size_* far above any range's size, one insert thread). A range holds at most
 * maxRangeRows events, so that block stays small.
 */
const ONE_BLOCK = `max_partitions_per_insert_block = ${MAX_PARTITIONS_PER_INSERT}, min_insert_block_size_rows = 1000000000000, min_insert_block_size_bytes = 1000000000000, max_insert_threads = 1, max_threads = 1, insert_deduplicate = 0`;

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
  /** Cancels a running statement of the builder by its query_id (from another connection): halt() uses it. */
  cancel?: (queryId: string) => Promise<void>;
}

interface Range {
  from: number;
  to: number;
}

/**
 * Builds daily_rollup, daily_uniques and sessions from events off the request path, exactly once, in large blocks.
 *
 * Every INSERT into events carries insert_seq (EventStore numbers them). The builder takes the closed range
 * (built, committed] of seqs, possibly cut to maxRangeRows events, and:
 * 1. records (from, to] in aggregate_progress, before anything else;
 * 2. per aggregate table, INSERTs ... SELECTs the range's events, folded, each row stamped built_seq = to;
 * 3. moves `built` to `to`.
 * A crash (or a failed INSERT) can leave a range half built: some tables, or some month partitions of a table, hold
 * its rows and others not. Each table's part per month is atomic (one block, see ONE_BLOCK), and built_seq tells
 * whether it landed: before building a range again, the builder asks each table, per month the range's events touch,
 * for max(built_seq), and builds only the months that lack `to`. No row is lost or counted twice.
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
  /** query_id of the build statement running, if any. */
  private runningId: string | undefined;

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
    );
    if (last) {
      this.built = Number(last.seq_from);
      this.pending = { from: Number(last.seq_from), to: Number(last.seq_to) };
    }
    // Sizes of the INSERTs not built yet, to cut ranges by rows (the minmax index on insert_seq skips older granules).
    let maxSeq = this.pending?.to ?? 0;
    for (const r of await this.query<{ s: string; n: string }>(
      `SELECT insert_seq AS s, count() AS n FROM ${this.options.db}.events WHERE insert_seq > ${this.built} GROUP BY s`,
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
    if (this.runningId) await this.options.cancel?.(this.runningId).catch(() => undefined);
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
      await this.command(`INSERT INTO ${this.options.db}.aggregate_progress (seq_from, seq_to) VALUES (${range.from}, ${range.to})`);
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
    const inRange = `insert_seq > ${range.from} AND insert_seq <= ${range.to}`;
    const months = recheck
      ? (await this.query<{ m: number }>(`SELECT DISTINCT toYYYYMM(timestamp) AS m FROM ${this.options.db}.events WHERE ${inRange}`)).map((r) => Number(r.m))
      : undefined;
    for (const a of AGGREGATES) {
      let only = '';
      if (months) {
        if (months.length === 0) return;
        const landed = new Set(
          (
            await this.query<{ m: number }>(
              `SELECT toYYYYMM(day) AS m FROM ${this.options.db}.${a.table} WHERE toYYYYMM(day) IN (${months.join(',')}) GROUP BY m HAVING max(built_seq) >= ${range.to}`,
            )
          ).map((r) => Number(r.m)),
        );
        const missing = months.filter((m) => !landed.has(m));
        if (missing.length === 0) continue;
        only = ` AND toYYYYMM(timestamp) IN (${missing.join(',')})`;
      }
      await this.command(
        `INSERT INTO ${this.options.db}.${a.table} (${a.columns}) SELECT ${a.select}, toUInt64(${range.to}) AS built_seq FROM ${'from' in a ? a.from(`${this.options.db}.events`, `${inRange}${only}`) : `${this.options.db}.events WHERE ${inRange}${only}`} GROUP BY ${a.groupBy} SETTINGS ${ONE_BLOCK}`,
      );
    }
  }

  private async query<T>(sql: string): Promise<T[]> {
    const rs = await this.options.client.query({ query: sql, format: 'JSONEachRow' });
    return rs.json<T>();
  }

  private async command(sql: string): Promise<void> {
    if (this.halted) throw new Error('aggregate builder halted');
    const id = randomUUID();
    this.runningId = id;
    try {
      await this.options.client.command({ query: sql, query_id: id });
    } finally {
      this.runningId = undefined;
    }
  }
}
