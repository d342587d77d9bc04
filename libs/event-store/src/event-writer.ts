import type { EventRow } from '@analytics/schema';
import { isLiveWrite } from './lanes';

interface Pending {
  rows: EventRow[];
  resolve: () => void;
  reject: (e: unknown) => void;
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
  /** Far-lane INSERTs in flight at once over all projects (one per project at most). */
  farConcurrency?: number;
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

/**
 * Group commit in two lanes. Live rows of concurrent requests go to ClickHouse in one INSERT (flush on a row count or
 * a few ms). A request with rows outside the live months (a batch spread over many months, a backfill) waits in its
 * project's far lane: one INSERT per project at a time, projects served in turn, at most `farConcurrency` at once,
 * so its seconds-long INSERTs never hold up the live lane. Each write() resolves only after the INSERT holding its
 * rows succeeded; a failed INSERT rejects every write in it. A request's rows are never split across INSERTs, so a
 * batch is all-or-nothing.
 */
export class EventWriter {
  private readonly live: Pending[] = [];
  private liveRows = 0;
  private liveInFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Far writes per project, and the projects waiting for a far turn in arrival order. */
  private readonly far = new Map<string, Pending[]>();
  private readonly farTurns: string[] = [];
  private readonly farRunning = new Set<string>();
  /** exclusiveFar() holds the far lane: no far INSERT starts meanwhile. */
  private farHeld = false;
  private farSections: Promise<unknown> = Promise.resolve();
  private idleWaiters: Array<() => void> = [];
  private farIdleWaiters: Array<() => void> = [];
  private readonly maxRows: number;
  private readonly maxDelayMs: number;
  private readonly concurrency: number;
  private readonly farConcurrency: number;
  private readonly clock: () => number;

  constructor(
    private readonly insert: (rows: EventRow[], lane: Lane) => Promise<void>,
    options: EventWriterOptions = {},
  ) {
    this.maxRows = options.maxRows ?? 20_000;
    this.maxDelayMs = options.maxDelayMs ?? 2;
    this.concurrency = options.concurrency ?? 1;
    this.farConcurrency = options.farConcurrency ?? 1;
    this.clock = options.clock ?? Date.now;
  }

  /** Writes one request's rows (all of one project); resolves once they are in the table. */
  write(rows: EventRow[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const pending = { rows, resolve, reject };
      if (isLiveWrite(rows, this.clock())) {
        this.live.push(pending);
        this.liveRows += rows.length;
        this.scheduleLive();
      } else {
        const project = rows[0]!.project_id;
        const queue = this.far.get(project);
        if (queue) queue.push(pending);
        else {
          this.far.set(project, [pending]);
          if (!this.farRunning.has(project)) this.farTurns.push(project);
        }
        this.scheduleFar();
      }
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
    this.run(taken, rows, 'live').finally(() => {
      this.liveInFlight--;
      this.scheduleLive();
      this.notifyIdle();
    });
    this.scheduleLive();
  }

  private scheduleFar(): void {
    while (!this.farHeld && this.farRunning.size < this.farConcurrency && this.farTurns.length > 0) {
      const project = this.farTurns.shift()!;
      const queue = this.far.get(project)!;
      const { taken, rows } = takeUpTo(queue, this.maxRows);
      if (queue.length === 0) this.far.delete(project);
      this.farRunning.add(project);
      this.run(taken, rows, 'far').finally(() => {
        this.farRunning.delete(project);
        // Back in line behind the projects that waited meanwhile.
        if (this.far.has(project)) this.farTurns.push(project);
        if (this.farRunning.size === 0) this.farIdleWaiters.splice(0).forEach((w) => w());
        this.scheduleFar();
        this.notifyIdle();
      });
    }
  }

  private run(taken: Pending[], rows: EventRow[], lane: Lane): Promise<void> {
    return this.insert(rows, lane).then(
      () => taken.forEach((p) => p.resolve()),
      (e: unknown) => taken.forEach((p) => p.reject(e)),
    );
  }

  private get idle(): boolean {
    return this.liveInFlight === 0 && this.live.length === 0 && this.farRunning.size === 0 && this.far.size === 0;
  }

  private notifyIdle(): void {
    if (this.idle) this.idleWaiters.splice(0).forEach((w) => w());
  }

  /**
   * Runs `fn` with no far-lane INSERT in flight: waits for the running ones and holds new ones (they queue, and go as
   * soon as `fn` is done, before the next section). The live lane never waits for it.
   */
  exclusiveFar<T>(fn: () => Promise<T>): Promise<T> {
    const section = this.farSections.then(async () => {
      this.farHeld = true;
      try {
        if (this.farRunning.size > 0) await new Promise<void>((resolve) => this.farIdleWaiters.push(resolve));
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

  /** Resolves once every accepted write has been inserted (or failed). */
  async drain(): Promise<void> {
    if (this.idle) return;
    this.flushLive();
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }
}
