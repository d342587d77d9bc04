import { ApiError } from '@analytics/schema';

export interface ReadGateLimits {
  /** Reads running at once in the whole process. */
  concurrency: number;
  /** Reads of one project running at once. */
  perProject: number;
  /** Reads of one project waiting for their turn; more are 429 rate_limited at once. */
  queuePerProject: number;
  /** How long a read may wait for its turn before it is 429 rate_limited. */
  queueWaitMs: number;
}

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout;
}

/** A running read's turn. */
export interface ReadTurn {
  /** The project had other reads running or queued when this one started: it may be preempted for a quiet project. */
  bursting: boolean;
  /** Set by the read: how to cancel it. The gate calls it at most once, when a quiet project's read would wait. */
  preempt?: () => void;
  preempted: boolean;
}

const busy = () => new ApiError('rate_limited', { retry_after_s: 1 });

/**
 * Admits reads fairly between projects: at most `concurrency` at once and `perProject` per project; the rest wait in
 * one queue per project, and each free turn goes to the waiting project served longest ago, so a project firing many
 * heavy reads delays another project's read by at most one turn, never by its whole backlog.
 */
export class ReadGate {
  private running = 0;
  private readonly inFlight = new Map<string, number>();
  private readonly waiting = new Map<string, Waiter[]>();
  // When each active project last started a read: the next turn goes to the one served longest ago.
  private readonly servedAt = new Map<string, number>();
  private tick = 0;
  private readonly turns = new Set<ReadTurn>();

  constructor(readonly limits: ReadGateLimits) {}

  async run<T>(projectId: string, fn: (turn: ReadTurn) => Promise<T>): Promise<T> {
    const queued = this.waiting.get(projectId)?.length ?? 0;
    if (queued === 0 && this.canStart(projectId)) this.start(projectId);
    else await this.wait(projectId);
    const turn: ReadTurn = { bursting: (this.inFlight.get(projectId) ?? 0) > 1 || (this.waiting.get(projectId)?.length ?? 0) > 0, preempted: false };
    this.turns.add(turn);
    try {
      return await fn(turn);
    } finally {
      this.turns.delete(turn);
      this.running--;
      const n = (this.inFlight.get(projectId) ?? 1) - 1;
      if (n > 0) this.inFlight.set(projectId, n);
      else this.inFlight.delete(projectId);
      if (this.isQuiet(projectId)) this.servedAt.delete(projectId);
      this.dispatch();
    }
  }

  /** Reads waiting for their turn, every project together (GET /metrics: analytics_read_queue_depth). */
  get queued(): number {
    let n = 0;
    for (const q of this.waiting.values()) n += q.length;
    return n;
  }

  /** Whether a waiting read would start if one of the project's turns ended now (it waits behind that turn). */
  wanted(projectId: string): boolean {
    for (const p of this.waiting.keys()) if (p === projectId || (this.inFlight.get(p) ?? 0) < this.limits.perProject) return true;
    return false;
  }

  /** Whether a project has no read running or waiting. */
  isQuiet(projectId: string): boolean {
    return !this.inFlight.has(projectId) && !this.waiting.has(projectId);
  }

  private canStart(projectId: string): boolean {
    return this.running < this.limits.concurrency && (this.inFlight.get(projectId) ?? 0) < this.limits.perProject;
  }

  private start(projectId: string): void {
    this.running++;
    this.inFlight.set(projectId, (this.inFlight.get(projectId) ?? 0) + 1);
    this.servedAt.set(projectId, ++this.tick);
  }

  private wait(projectId: string): Promise<void> {
    const queue = this.waiting.get(projectId) ?? [];
    if (queue.length >= this.limits.queuePerProject) return Promise.reject(busy());
    // A quiet project's read does not wait behind a bursting project's: one of those is cancelled and queued again.
    if (this.isQuiet(projectId)) {
      const victim = [...this.turns].find((t) => t.bursting && t.preempt && !t.preempted);
      if (victim) {
        victim.preempted = true;
        victim.preempt!();
      }
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          this.start(projectId);
          resolve();
        },
        timer: setTimeout(() => {
          const q = this.waiting.get(projectId) ?? [];
          q.splice(q.indexOf(waiter), 1);
          if (q.length === 0) this.waiting.delete(projectId);
          if (this.isQuiet(projectId)) this.servedAt.delete(projectId);
          reject(busy());
        }, this.limits.queueWaitMs),
      };
      queue.push(waiter);
      this.waiting.set(projectId, queue);
    });
  }

  private dispatch(): void {
    while (this.running < this.limits.concurrency) {
      let next: string | undefined;
      for (const p of this.waiting.keys()) {
        if ((this.inFlight.get(p) ?? 0) >= this.limits.perProject) continue;
        if (next === undefined || (this.servedAt.get(p) ?? 0) < (this.servedAt.get(next) ?? 0)) next = p;
      }
      if (next === undefined) return;
      const queue = this.waiting.get(next)!;
      const waiter = queue.shift()!;
      if (queue.length === 0) this.waiting.delete(next);
      waiter.start();
    }
  }
}
