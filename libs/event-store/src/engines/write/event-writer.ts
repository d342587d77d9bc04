import type { EventRow } from '@analytics/schema';
import { isLiveWrite } from '../../primitives/lanes';

interface Pending {
  rows: EventRow[];
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** A far-lane write: its rows not written yet, by month partition ('YYYY-MM'), in arrival order. */
interface FarPending extends Pending {
  months: Map<string, EventRow[]>;
}

/** `live`: rows of the current months, group-committed across projects; `far`: the rest, per project (lanes.ts). */
export type Lane = 'live' | 'far';

export interface EventWriterOptions {
  /** Flush as soon as this many rows wait. */
  maxRows?: number;
  /** Or after this many milliseconds. */
  maxDelayMs?: number;
  /** Live-lane INSERTs in flight at once. */
  concurrency?: number;
  /** Month partitions one far-lane INSERT writes at most: a request spread over more goes in several. */
  farChunkMonths?: number;
  /**
   * Month partitions the far lane writes per second, sustained, over all projects: each part costs the engine file
   * work, merges and aggregate builds that live traffic needs the cores for.
   */
  farPartitionsPerS?: number;
  clock?: () => number;
}

/** Takes queued writes from the head while they fit `maxRows` (at least one): a write is never split. */
function takeUpTo(queue: Pending[], maxRows: number): { taken: Pending[]; rows: EventRow[] } {
  const taken: Pending[] = [];
  let count = 0;
  while (queue.length > 0 && (count === 0 || count + queue[0]!.rows.length <= maxRows)) {
    const p = queue.shift()!;
    taken.push(p);
    count += p.rows.length;
  }
  return { taken, rows: taken.length === 1 ? taken[0]!.rows : taken.flatMap((p) => p.rows) };
}

/** Rows grouped by month partition ('YYYY-MM' of their timestamps). */
function byMonth(rows: readonly EventRow[]): Map<string, EventRow[]> {
  const groups = new Map<string, EventRow[]>();
  for (const row of rows) {
    const month = row.timestamp.slice(0, 7);
    const group = groups.get(month);
    if (group) group.push(row);
    else groups.set(month, [row]);
  }
  return groups;
}

/** One far-lane INSERT: whole months of the head writes of one project, and which of those writes it completes. */
interface FarChunk {
  rows: EventRow[];
  months: number;
  writes: Array<{ write: FarPending; last: boolean }>;
}

/**
 * Group commit in two lanes: live rows of concurrent requests share one INSERT (a request's rows never split), and
 * rows far from today wait in their project's paced far lane so their many parts never hold up live traffic
 * (the event store's README, "The builder, exactly once"). Each write() resolves only after the INSERTs holding its rows succeeded.
 */
export class EventWriter {
  private readonly live: Pending[] = [];
  private liveRows = 0;
  private liveInFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Far writes per project, and the projects waiting for a far turn in arrival order. */
  private readonly far = new Map<string, FarPending[]>();
  private readonly farTurns: string[] = [];
  private farRunning = false;
  /** When the far lane may start its next INSERT (pacing), and the timer that wakes it then. */
  private farNextAt = 0;
  private farTimer: NodeJS.Timeout | undefined;
  /** exclusiveFar() holds the far lane: no far INSERT starts meanwhile. */
  private farHeld = false;
  private farSections: Promise<unknown> = Promise.resolve();
  /** drain(): pacing is dropped so that everything accepted is written now. */
  private draining = false;
  private idleWaiters: Array<() => void> = [];
  private farIdleWaiters: Array<() => void> = [];
  private readonly maxRows: number;
  private readonly maxDelayMs: number;
  private readonly concurrency: number;
  private readonly farChunkMonths: number;
  private readonly farPartitionsPerS: number;
  private readonly clock: () => number;

  constructor(
    private readonly insert: (rows: EventRow[], lane: Lane) => Promise<void>,
    options: EventWriterOptions = {},
  ) {
    this.maxRows = options.maxRows ?? 20_000;
    this.maxDelayMs = options.maxDelayMs ?? 2;
    this.concurrency = options.concurrency ?? 1;
    this.farChunkMonths = options.farChunkMonths ?? 25;
    this.farPartitionsPerS = options.farPartitionsPerS ?? 25;
    this.clock = options.clock ?? Date.now;
  }

  /** Writes one request's rows (all of one project); resolves once they are in the table. */
  write(rows: EventRow[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      if (isLiveWrite(rows, this.clock())) {
        this.live.push({ rows, resolve, reject });
        this.liveRows += rows.length;
        this.scheduleLive();
        return;
      }
      const project = rows[0]!.project_id;
      const pending: FarPending = { rows, resolve, reject, months: byMonth(rows) };
      const queue = this.far.get(project);
      if (queue) queue.push(pending);
      else {
        this.far.set(project, [pending]);
        this.farTurns.push(project);
      }
      this.scheduleFar();
    });
  }

  private scheduleLive(): void {
    if (this.live.length === 0 || this.liveInFlight >= this.concurrency) return;
    if (this.liveRows >= this.maxRows) {
      this.flushLive();
    } else if (!this.timer) {
      this.timer = setTimeout(() => this.flushLive(), this.maxDelayMs);
    }
  }

  private flushLive(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.live.length === 0 || this.liveInFlight >= this.concurrency) return;
    const { taken, rows } = takeUpTo(this.live, this.maxRows);
    this.liveRows -= rows.length;
    this.liveInFlight++;
    this.insert(rows, 'live')
      .then(
        () => taken.forEach((p) => p.resolve()),
        (e: unknown) => taken.forEach((p) => p.reject(e)),
      )
      .finally(() => {
        this.liveInFlight--;
        this.scheduleLive();
        this.notifyIdle();
      });
    this.scheduleLive();
  }

  /**
   * The next months of the head write of a project's queue (up to farChunkMonths, and maxRows unless it is the first),
   * with the rows of those months of every write queued behind it: a month is one part however many writes fill it.
   */
  private takeFarChunk(queue: FarPending[]): FarChunk {
    const chunk: FarChunk = { rows: [], months: 0, writes: [] };
    const [head, ...behind] = queue as [FarPending, ...FarPending[]];
    const chosen: string[] = [];
    for (const [month, rows] of head.months) {
      if (chosen.length === this.farChunkMonths || (chosen.length > 0 && chunk.rows.length + rows.length > this.maxRows)) break;
      chosen.push(month);
      for (const row of rows) chunk.rows.push(row);
    }
    chunk.months = chosen.length;
    for (const month of chosen) head.months.delete(month);
    chunk.writes.push({ write: head, last: head.months.size === 0 });
    for (const write of behind) {
      let took = false;
      for (const month of chosen) {
        const rows = write.months.get(month);
        if (!rows || chunk.rows.length + rows.length > this.maxRows) continue;
        for (const row of rows) chunk.rows.push(row);
        write.months.delete(month);
        took = true;
      }
      if (took) chunk.writes.push({ write, last: write.months.size === 0 });
    }
    return chunk;
  }

  private scheduleFar(): void {
    if (this.farHeld || this.farRunning || this.farTurns.length === 0) return;
    const wait = this.draining ? 0 : this.farNextAt - this.clock();
    if (wait > 0) {
      this.farTimer ??= setTimeout(() => {
        this.farTimer = undefined;
        this.scheduleFar();
      }, wait);
      return;
    }
    const project = this.farTurns.shift()!;
    const queue = this.far.get(project)!;
    const chunk = this.takeFarChunk(queue);
    this.farRunning = true;
    this.farNextAt = this.clock() + (chunk.months / this.farPartitionsPerS) * 1000;
    const done = (failed: unknown) => {
      for (const { write, last } of chunk.writes) {
        if (failed === undefined && !last) continue;
        const i = queue.indexOf(write);
        if (i >= 0) queue.splice(i, 1);
        if (failed === undefined) write.resolve();
        else write.reject(failed);
      }
    };
    this.insert(chunk.rows, 'far')
      .then(
        () => done(undefined),
        (e: unknown) => done(e ?? new Error('far-lane INSERT failed')),
      )
      .finally(() => {
        this.farRunning = false;
        // Back in line behind the projects that waited meanwhile.
        if (queue.length > 0) this.farTurns.push(project);
        else this.far.delete(project);
        this.farIdleWaiters.splice(0).forEach((w) => w());
        this.scheduleFar();
        this.notifyIdle();
      });
  }

  private get idle(): boolean {
    return this.liveInFlight === 0 && this.live.length === 0 && !this.farRunning && this.far.size === 0;
  }

  private notifyIdle(): void {
    if (this.idle) this.idleWaiters.splice(0).forEach((w) => w());
  }

  /**
   * Runs `fn` with no far-lane INSERT in flight: waits for the running one and holds new ones (they queue, and go as
   * soon as `fn` is done, before the next section). The live lane never waits for it.
   */
  exclusiveFar<T>(fn: () => Promise<T>): Promise<T> {
    const section = this.farSections.then(async () => {
      this.farHeld = true;
      try {
        if (this.farRunning) await new Promise<void>((resolve) => this.farIdleWaiters.push(resolve));
        return await fn();
      } finally {
        this.farHeld = false;
        this.scheduleFar();
        // Far writes queued during the section start before the next section holds the lane again.
        await new Promise((r) => setImmediate(r));
      }
    });
    this.farSections = section.catch(() => undefined);
    return section;
  }

  /** Resolves once every accepted write has been inserted (or failed), the far lane's unpaced. */
  async drain(): Promise<void> {
    if (this.idle) return;
    this.draining = true;
    clearTimeout(this.farTimer);
    this.farTimer = undefined;
    this.flushLive();
    this.scheduleFar();
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }
}
