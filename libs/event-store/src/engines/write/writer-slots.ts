import { randomBytes } from 'node:crypto';

/** What a server's INSERT carries besides its rows: its writer, its seq, and its row count (migration 012). */
export interface InsertStamp {
  writer: number;
  seq: number;
  rows: number;
}

interface Slot {
  writer: number;
  last: number;
}

/** A random writer id: 48 bits, never 0 (the embedded store's one writer). */
function newWriterId(): number {
  return randomBytes(6).readUIntBE(0, 6) || 1;
}

/**
 * A server's writers (the event store's README, "One builder, every mode"). Each INSERT takes a free slot, so a slot has one INSERT in
 * flight at a time, and its seqs increase: microseconds of the store's clock (the offset measured at open), at least
 * one more than the slot's last. A slot whose INSERT failed is dropped, its id never used again: whatever of that
 * INSERT the store still commits is the writer's last, and the builder takes it as it stands once it settles.
 */
export class WriterSlots {
  private readonly free: Slot[] = [];
  private offsetUs = 0;

  constructor(private readonly clock: () => number = Date.now) {}

  /** The store's clock minus this process's, in microseconds. */
  setClockOffset(us: number): void {
    this.offsetUs = us;
  }

  /** Now on the store's clock, in microseconds. */
  storeNowUs(): number {
    return Math.floor(this.clock() * 1000 + this.offsetUs);
  }

  async with<T>(rows: number, run: (stamp: InsertStamp) => Promise<T>): Promise<T> {
    const slot = this.free.pop() ?? { writer: newWriterId(), last: 0 };
    const seq = Math.max(slot.last + 1, this.storeNowUs());
    slot.last = seq;
    const result = await run({ writer: slot.writer, seq, rows });
    this.free.push(slot);
    return result;
  }
}
