/**
 * The engine time each project used recently: the ms its reads held a turn, each ms weighted 2^(-age / halfLifeMs),
 * so a project's usage halves every half-life once it stops reading. The read gate orders and preempts by it.
 */
export class ReadUsage {
  /** The usage of the turns already ended, as of `at`. */
  private readonly past = new Map<string, { ms: number; at: number }>();
  private sweptAt = 0;

  constructor(readonly halfLifeMs: number) {}

  /** The usage of a project's ended turns at `now`. */
  ended(projectId: string, now: number): number {
    const p = this.past.get(projectId);
    return p ? p.ms * this.decay(now - p.at) : 0;
  }

  /** What a turn held since `startedAt` weighs at `now`: the integral of the decay over its run (about its ms, when short). */
  held(startedAt: number, now: number): number {
    return (this.halfLifeMs / Math.LN2) * (1 - this.decay(now - startedAt));
  }

  /** Records a turn held from `startedAt` to `now`. */
  add(projectId: string, startedAt: number, now: number): void {
    this.past.set(projectId, { ms: this.ended(projectId, now) + this.held(startedAt, now), at: now });
    // Forget the projects whose usage has decayed to nothing, at most once a half-life (the map holds the recent ones).
    if (now - this.sweptAt < this.halfLifeMs) return;
    this.sweptAt = now;
    for (const id of this.past.keys()) if (this.ended(id, now) < 1) this.past.delete(id);
  }

  private decay(ms: number): number {
    return 2 ** (-Math.max(0, ms) / this.halfLifeMs);
  }
}
