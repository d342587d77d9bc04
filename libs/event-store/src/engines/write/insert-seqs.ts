/**
 * insert_seq bookkeeping of the INSERTs into events: one number per INSERT, increasing; the aggregate builder takes
 * only ranges whose every INSERT has finished (`committed`), and deletes wait for the INSERTs started before them.
 */
export class InsertSeqs {
  private last = 0;
  private readonly running = new Set<number>();
  /** Each resolves once every INSERT up to its seq has finished. */
  private waiters: Array<{ seq: number; resolve: () => void }> = [];

  /** insert_seq of the latest INSERT started. */
  get latest(): number {
    return this.last;
  }

  /** Highest insert_seq at or below which every INSERT has finished. */
  get committed(): number {
    let committed = this.last;
    for (const seq of this.running) committed = Math.min(committed, seq - 1);
    return committed;
  }

  /** At open: numbering continues after the highest seq stored. */
  continueAfter(maxSeq: number): void {
    this.last = maxSeq;
  }

  /** An INSERT starts: its seq. */
  begin(): number {
    const seq = ++this.last;
    this.running.add(seq);
    return seq;
  }

  /** The INSERT of `seq` has finished (written or failed). */
  end(seq: number): void {
    this.running.delete(seq);
    const committed = this.committed;
    this.waiters = this.waiters.filter((w) => (w.seq <= committed ? (w.resolve(), false) : true));
  }

  /** Resolves once every INSERT up to `seq` has finished. */
  async settled(seq: number): Promise<void> {
    if (this.committed < seq) await new Promise<void>((resolve) => this.waiters.push({ seq, resolve }));
  }
}
