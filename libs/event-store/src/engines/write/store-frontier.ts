import type { ClickHouseClient } from '@clickhouse/client';
import { type Frontier, type FrontierStep, NEWEST_PROGRESS_ROW, type WriterBound } from './aggregate-builder';

export interface StoreFrontierOptions {
  db: string;
  client: ClickHouseClient;
  /**
   * Microseconds: no INSERT lands later than this after it took its seq (writers take seqs on the store's clock and
   * INSERTs run under max_execution_time), so a writer unseen for longer has nothing left to land below now - margin.
   */
  marginUs?: number;
  /** An INSERT still short of its rows after this long is taken as it stands (a writer died or failed mid-INSERT). */
  settleMs?: number;
  clock?: () => number;
}

/**
 * A server's INSERT runs under this max_execution_time (s): none finishes later than this after it took its seq, give or
 * take the wait for a connection, which FINISH_WINDOW_US leaves room for.
 */
export const INSERT_MAX_EXECUTION_S = 30;
/** An INSERT that finished after a moment took its seq less than this before it (µs): what a read scans beyond `covered`. */
export const FINISH_WINDOW_US = 60 * 1_000_000;

/** Insert_seq values of a server are microseconds of the store's clock (write-side.ts, WriterSlots). */
export const DEFAULT_MARGIN_US = 10 * 60 * 1_000_000;
export const DEFAULT_SETTLE_MS = 60_000;

interface Seen {
  w: string;
  s: string;
  n: string;
  r: string;
}

/**
 * A server's frontier: many writers (ingest processes, a few slots each, one INSERT in flight per slot), so the order
 * is read from the store. An INSERT is complete when the rows stored with its (insert_writer, insert_seq) number its
 * insert_rows; a writer's range ends before its first INSERT that is not complete, so nothing it builds can still grow.
 * An INSERT that stays short for settleMs (its writer died or its INSERT failed half way, and the writer took a new
 * id: nothing of it can still land after that) is built as it stands.
 */
export class StoreFrontier implements Frontier {
  private readonly marginUs: number;
  private readonly settleMs: number;
  private readonly clock: () => number;
  /** At the last scan: how long ago (store clock) the oldest INSERT not built then took its seq, in ms (0: none). */
  lagMs = 0;
  /** `${writer}:${seq}` of INSERTs seen short of their rows, and since when. */
  private readonly short = new Map<string, number>();

  constructor(private readonly options: StoreFrontierOptions) {
    this.marginUs = options.marginUs ?? DEFAULT_MARGIN_US;
    this.settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
    this.clock = options.clock ?? Date.now;
  }

  async next(built: ReadonlyMap<number, number>, floor: number, maxRows: number): Promise<FrontierStep | undefined> {
    const { nowUs, seen } = await unbuiltInserts(this.options.client, this.options.db, built, floor);
    const byWriter = new Map<number, Seen[]>();
    let oldest = Infinity;
    for (const row of seen) {
      oldest = Math.min(oldest, Number(row.s));
      const w = Number(row.w);
      const list = byWriter.get(w);
      if (list) list.push(row);
      else byWriter.set(w, [row]);
    }
    this.lagMs = oldest === Infinity ? 0 : Math.max(0, (nowUs - oldest) / 1000);
    const bounds: WriterBound[] = [];
    const now = this.clock();
    let rows = 0;
    /** Complete INSERTs left out for the range's size: the step then covers less than everything finished now. */
    let cut = false;
    /** Per writer with events still unbuilt after this range, what it will have built: the new floor stays below. */
    let lowestOpen = Infinity;
    const stillShort = new Set<string>();
    for (const [writer, inserts] of byWriter) {
      // A writer not seen before: every row of it is above the floor (see next's floor).
      const from = built.get(writer) ?? floor;
      let to = from;
      for (const ins of inserts) {
        const seq = Number(ins.s);
        const key = `${writer}:${seq}`;
        const complete = Number(ins.n) >= Number(ins.r);
        if (!complete) {
          const since = this.short.get(key) ?? now;
          stillShort.add(key);
          this.short.set(key, since);
          if (now - since < this.settleMs) break;
        }
        if (rows > 0 && rows + Number(ins.n) > maxRows) {
          cut = true;
          break;
        }
        rows += Number(ins.n);
        to = seq;
      }
      if (to > from) bounds.push({ writer, from, to });
      if (to < Number(inserts[inserts.length - 1]!.s)) lowestOpen = Math.min(lowestOpen, to);
    }
    for (const key of this.short.keys()) if (!stillShort.has(key)) this.short.delete(key);
    const nextFloor = Math.max(floor, Math.min(nowUs - this.marginUs, lowestOpen));
    const after = new Map(built);
    for (const b of bounds) after.set(b.writer, b.to);
    // A writer with nothing left unbuilt and everything at or below the floor is never read again: its rows are below
    // every later scan, and a live writer's next seq is above now - margin (it would come back as a new writer).
    const prune = [...after].filter(([w, seq]) => seq <= nextFloor && !byWriter.has(w)).map(([w]) => w);
    // An INSERT short of its rows is still in flight (or died): it finished after the scan, or never will.
    return { bounds, floor: nextFloor, prune, covered: cut ? undefined : nowUs };
  }
}

/**
 * The INSERTs above what is built (a known writer's rows above its built seq, another's above the floor): per
 * (writer, seq) the rows stored and the rows it was sent with, and the store's clock, in one round trip (an aggregate
 * without GROUP BY answers one row, also when nothing is unbuilt: an idle builder's tick is one query). Only seqs
 * above the floor are read: the minmax index on insert_seq skips every granule below it.
 */
async function unbuiltInserts(client: ClickHouseClient, db: string, built: ReadonlyMap<number, number>, floor: number): Promise<{ nowUs: number; seen: Seen[] }> {
  const writers = [...built.keys()];
  const rs = await client.query({
    query: [
      'SELECT toString(toUnixTimestamp64Micro(now64(6))) AS now, groupArray((toString(w), toString(s), n, r)) AS inserts',
      'FROM (',
      '  SELECT insert_writer AS w, insert_seq AS s, count() AS n, any(insert_rows) AS r',
      `  FROM ${db}.events`,
      '  WHERE insert_seq > {floor:UInt64} AND insert_seq > transform(insert_writer, {writers:Array(UInt64)}, {builts:Array(UInt64)}, toUInt64({floor:UInt64}))',
      '  GROUP BY insert_writer, insert_seq',
      ')',
    ].join('\n'),
    query_params: { floor, writers, builts: writers.map((w) => built.get(w)!) },
    format: 'JSONEachRow',
  });
  const [row] = await rs.json<{ now: string; inserts: Array<[string, string, string | number, string | number]> }>();
  // Per writer in seq order (the frontier walks each writer's INSERTs in order); groupArray keeps no order.
  const seen = row!.inserts
    .map(([w, s, n, r]) => ({ w, s, n: String(n), r: String(r) }))
    .sort((a, b) => Number(a.w) - Number(b.w) || Number(a.s) - Number(b.s));
  return { nowUs: Number(row!.now), seen };
}

/**
 * A read's check, in one round trip: the complete INSERTs not built yet by the state of the newest aggregate_progress
 * row (after it if done, before it if not), among those that can have finished after what that row covers (seqs above
 * `covered` minus FINISH_WINDOW_US, and above the floor).
 */
export async function completeUnbuilt(client: ClickHouseClient, db: string): Promise<Array<{ w: number; s: number }>> {
  const rs = await client.query({
    query: [
      'WITH (',
      '  SELECT (if(done = 1, floor, floor_from), covered, writers, if(done = 1, tos, froms))',
      `  FROM ${db}.aggregate_progress ${NEWEST_PROGRESS_ROW}`,
      ') AS p, ifNull(p.1, 0) AS floor_, ifNull(p.2, 0) AS covered_',
      'SELECT toString(insert_writer) AS w, toString(insert_seq) AS s, count() AS n, any(insert_rows) AS r',
      `FROM ${db}.events`,
      'WHERE insert_seq > greatest(floor_, if(covered_ > {window:UInt64}, covered_ - {window:UInt64}, 0))',
      '  AND insert_seq > transform(insert_writer, p.3, p.4, floor_)',
      'GROUP BY insert_writer, insert_seq HAVING n >= r',
    ].join('\n'),
    query_params: { window: FINISH_WINDOW_US },
    format: 'JSONEachRow',
  });
  return (await rs.json<{ w: string; s: string }>()).map((r) => ({ w: Number(r.w), s: Number(r.s) }));
}
