import type { EventRow } from '@analytics/schema';

interface Pending {
  rows: EventRow[];
  resolve: () => void;
  reject: (e: unknown) => void;
}

export interface EventWriterOptions {
  /** Flush as soon as this many rows wait. */
  maxRows?: number;
  /** Or after this many milliseconds. */
  maxDelayMs?: number;
  /** INSERTs in flight at once. */
  concurrency?: number;
}

/**
 * Group commit: rows of concurrent requests go to ClickHouse in one INSERT (flush on a row count or a few ms).
 * Each write() resolves only after the INSERT holding its rows succeeded; a failed INSERT rejects every write in it.
 * A request's rows are never split across INSERTs, so a batch is all-or-nothing.
 */
export class EventWriter {
  private queue: Pending[] = [];
  private queuedRows = 0;
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  private idleWaiters: Array<() => void> = [];
  private inFlightWaiters: Array<() => void> = [];
  /** exclusive() sections running: no INSERT starts meanwhile. */
  private held = 0;
  private readonly maxRows: number;
  private readonly maxDelayMs: number;
  private readonly concurrency: number;

  constructor(
    private readonly insert: (rows: EventRow[]) => Promise<void>,
    options: EventWriterOptions = {},
  ) {
    this.maxRows = options.maxRows ?? 20_000;
    this.maxDelayMs = options.maxDelayMs ?? 2;
    this.concurrency = options.concurrency ?? 1;
  }

  write(rows: EventRow[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ rows, resolve, reject });
      this.queuedRows += rows.length;
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.queue.length === 0 || this.inFlight >= this.concurrency || this.held > 0) return;
    if (this.queuedRows >= this.maxRows) {
      this.flush();
    } else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), this.maxDelayMs);
    }
  }

  private flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.queue.length === 0 || this.inFlight >= this.concurrency || this.held > 0) return;
    const taken: Pending[] = [];
    let count = 0;
    while (this.queue.length > 0 && (count === 0 || count + this.queue[0]!.rows.length <= this.maxRows)) {
      const p = this.queue.shift()!;
      taken.push(p);
      count += p.rows.length;
    }
    this.queuedRows -= count;
    const rows = taken.length === 1 ? taken[0]!.rows : taken.flatMap((p) => p.rows);
    this.inFlight++;
    this.insert(rows).then(
      () => taken.forEach((p) => p.resolve()),
      (e: unknown) => taken.forEach((p) => p.reject(e)),
    ).finally(() => {
      this.inFlight--;
      if (this.inFlight === 0) this.inFlightWaiters.splice(0).forEach((w) => w());
      this.schedule();
      if (this.inFlight === 0 && this.queue.length === 0) this.idleWaiters.splice(0).forEach((w) => w());
    });
    this.schedule();
  }

  /**
   * Runs `fn` with no INSERT of this writer in flight: waits for the running ones, holds new ones (they queue, and
   * go as soon as `fn` is done).
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    this.held++;
    try {
      if (this.inFlight > 0) await new Promise<void>((resolve) => this.inFlightWaiters.push(resolve));
      return await fn();
    } finally {
      this.held--;
      this.schedule();
    }
  }

  /** Resolves once every accepted write has been inserted (or failed). */
  async drain(): Promise<void> {
    if (this.inFlight === 0 && this.queue.length === 0) return;
    this.flush();
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }
}
