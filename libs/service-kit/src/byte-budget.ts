/**
 * A process-wide budget of bytes in flight (request bodies being read, parsed and written). A request takes bytes as
 * they arrive and waits for room up to a deadline, so memory stays bounded under any concurrency instead of growing
 * with the sum of the bodies.
 *
 * Each take names its holders (a project, a client address): no holder may hold more than `share` bytes at once, so
 * one project or one address filling its share never makes another one's request wait. A waiter is granted as soon
 * as it fits, in arrival order among those that fit: one held back by its own holder's share does not hold back the
 * waiters behind it.
 */
export class ByteBudget {
  private used = 0;
  private readonly held = new Map<string, number>();
  private readonly queue: Array<{ bytes: number; holders: readonly string[]; grant: () => void }> = [];
  /** The most one holder may hold at once (the whole capacity unless given). */
  readonly share: number;

  constructor(
    readonly capacity: number,
    share: number = capacity,
  ) {
    this.share = Math.min(share, capacity);
  }

  get inUse(): number {
    return this.used;
  }

  /** What `holder` holds now. */
  heldBy(holder: string): number {
    return this.held.get(holder) ?? 0;
  }

  /**
   * A release function once `bytes` are reserved for `holders`, or null when they could not be within `waitMs`. A take
   * larger than the capacity (or, with holders, than the share) is clamped to it, so it is still served when alone.
   */
  acquire(bytes: number, waitMs: number, holders: readonly string[] = []): Promise<(() => void) | null> {
    const want = Math.min(bytes, holders.length > 0 ? this.share : this.capacity);
    const now = this.tryAcquire(want, holders);
    if (now) return Promise.resolve(now);
    return new Promise((resolve) => {
      const entry = {
        bytes: want,
        holders,
        grant: () => {
          clearTimeout(timer);
          resolve(this.take(want, holders));
        },
      };
      const timer = setTimeout(() => {
        this.queue.splice(this.queue.indexOf(entry), 1);
        resolve(null);
      }, waitMs);
      this.queue.push(entry);
    });
  }

  /** A release function when `bytes` fit at once, else null (every waiter is one that did not fit: see drain). */
  tryAcquire(bytes: number, holders: readonly string[] = []): (() => void) | null {
    return this.fits(bytes, holders) ? this.take(bytes, holders) : null;
  }

  private fits(bytes: number, holders: readonly string[]): boolean {
    return this.used + bytes <= this.capacity && holders.every((h) => this.heldBy(h) + bytes <= this.share);
  }

  private take(bytes: number, holders: readonly string[]): () => void {
    this.used += bytes;
    for (const h of holders) this.held.set(h, this.heldBy(h) + bytes);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= bytes;
      for (const h of holders) {
        const left = this.heldBy(h) - bytes;
        if (left > 0) this.held.set(h, left);
        else this.held.delete(h);
      }
      this.drain();
    };
  }

  private drain(): void {
    for (let i = 0; i < this.queue.length; ) {
      const w = this.queue[i]!;
      if (this.fits(w.bytes, w.holders)) {
        this.queue.splice(i, 1);
        w.grant();
      } else i++;
    }
  }
}
