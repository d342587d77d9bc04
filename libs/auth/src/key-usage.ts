import type { KeyStore } from './key-store';

/**
 * When each key was last accepted, for GET /admin/projects/:id/keys: noted in memory on every accepted request and
 * written in one UPDATE a minute (FLUSH_MS), so the ingest path never waits on a key-store write.
 */
export class KeyUsage {
  static readonly FLUSH_MS = 60_000;
  private used = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: KeyStore,
    private readonly now: () => number = Date.now,
    private readonly onError: (e: unknown) => void = () => {},
  ) {}

  seen(prefix: string): void {
    this.used.set(prefix, this.now());
  }

  start(flushMs = KeyUsage.FLUSH_MS): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
  }

  /** Writes what was noted since the last flush; a failure puts it back for the next one. */
  async flush(): Promise<void> {
    const batch = this.used;
    this.used = new Map();
    try {
      await this.store.recordKeyUse(batch);
    } catch (e) {
      for (const [prefix, at] of batch) if (!this.used.has(prefix)) this.used.set(prefix, at);
      this.onError(e);
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
