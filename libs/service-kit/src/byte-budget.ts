/**
 * A process-wide budget of bytes in flight (request bodies being read, parsed and written), first come first served.
 * A request waits for its share up to a deadline, so memory stays bounded under any concurrency instead of growing
 * with the sum of the bodies.
 */
export class ByteBudget {
  private used = 0;
  private readonly queue: Array<{ bytes: number; grant: () => void }> = [];

  constructor(readonly capacity: number) {}

  get inUse(): number {
    return this.used;
  }

  /** A release function once `bytes` (at most the capacity) are reserved, or null when they could not be within `waitMs`. */
  acquire(bytes: number, waitMs: number): Promise<(() => void) | null> {
    const want = Math.min(bytes, this.capacity);
    if (this.queue.length === 0 && this.used + want <= this.capacity) return Promise.resolve(this.take(want));
    return new Promise((resolve) => {
      const entry = {
        bytes: want,
        grant: () => {
          clearTimeout(timer);
          resolve(this.take(want));
        },
      };
      const timer = setTimeout(() => {
        this.queue.splice(this.queue.indexOf(entry), 1);
        resolve(null);
        this.drain(); // a large waiter giving up may let smaller ones behind it in
      }, waitMs);
      this.queue.push(entry);
    });
  }

  private take(bytes: number): () => void {
    this.used += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= bytes;
      this.drain();
    };
  }

  private drain(): void {
    while (this.queue.length > 0 && this.used + this.queue[0]!.bytes <= this.capacity) this.queue.shift()!.grant();
  }
}
