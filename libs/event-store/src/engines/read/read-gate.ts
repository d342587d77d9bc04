import { ApiError } from '@analytics/schema';
import { ReadUsage } from './read-usage';

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

/** How the gate weighs projects against each other (the event store's README, "Fair reads"); tests pass a clock of their own. */
export interface ReadGateFairness {
  /** A project's recent engine time halves every this many ms while it holds no turn. */
  halfLifeMs: number;
  /** A running read is cancelled for another project's waiting read only when its project's recent engine time is over preemptRatio x the waiter's + preemptMarginMs. */
  preemptRatio: number;
  preemptMarginMs: number;
  /** Monotonic milliseconds. */
  now: () => number;
}

export const DEFAULT_READ_FAIRNESS: ReadGateFairness = { halfLifeMs: 10_000, preemptRatio: 2, preemptMarginMs: 100, now: () => performance.now() };

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout;
}

/** A running read's turn. */
export interface ReadTurn {
  readonly projectId: string;
  readonly startedAt: number;
  /** Set by the read: how to cancel it. The gate calls it at most once, when a far lighter project's read waits for a turn. */
  preempt?: () => void;
  preempted: boolean;
}

const busy = () => new ApiError('rate_limited', { retry_after_s: 1 });

/**
 * Admits reads fairly between projects by the engine time each used recently (ReadUsage: the wall time of its turns,
 * halving every half-life): at most `concurrency` at once and `perProject` per project; the rest wait in one queue per
 * project, and each free turn goes to the waiting project that used the least (ties: the one served longest ago). When
 * every turn is taken, a waiting read cancels the running read of a project that used far more (over preemptRatio x
 * its own + preemptMarginMs; the read queues again), so a cheap dashboard does not wait out another project's expensive
 * read. The heavy project is not starved: while it waits its usage decays and the busy projects' grows, so it comes
 * first again, and a read is preemptible only until its deadline (ReadSide), after which it runs to the end.
 */
export class ReadGate {
  private readonly fair: ReadGateFairness;
  private readonly usage: ReadUsage;
  private held = 0;
  private readonly turns = new Map<string, Set<ReadTurn>>();
  private readonly waiting = new Map<string, Waiter[]>();
  // When each active project last started a read: among equal usages, the next turn goes to the one served longest ago.
  private readonly servedAt = new Map<string, number>();
  private tick = 0;
  private recheck?: NodeJS.Timeout;

  constructor(
    readonly limits: ReadGateLimits,
    fairness: Partial<ReadGateFairness> = {},
  ) {
    this.fair = { ...DEFAULT_READ_FAIRNESS, ...fairness };
    this.usage = new ReadUsage(this.fair.halfLifeMs);
  }

  async run<T>(projectId: string, fn: (turn: ReadTurn) => Promise<T>): Promise<T> {
    const turn = !this.waiting.has(projectId) && this.canStart(projectId) ? this.start(projectId) : await this.wait(projectId);
    try {
      return await fn(turn);
    } finally {
      this.end(turn);
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
    for (const p of this.waiting.keys()) if (p === projectId || this.inFlight(p) < this.limits.perProject) return true;
    return false;
  }

  /** A project's recent engine time in ms: its ended turns and the ones it holds, decayed (ReadUsage). */
  usageOf(projectId: string, now = this.fair.now()): number {
    let u = this.usage.ended(projectId, now);
    for (const t of this.turns.get(projectId) ?? []) u += this.usage.held(t.startedAt, now);
    return u;
  }

  private inFlight(projectId: string): number {
    return this.turns.get(projectId)?.size ?? 0;
  }

  private canStart(projectId: string): boolean {
    return this.held < this.limits.concurrency && this.inFlight(projectId) < this.limits.perProject;
  }

  private start(projectId: string): ReadTurn {
    const turn: ReadTurn = { projectId, startedAt: this.fair.now(), preempted: false };
    this.held++;
    const held = this.turns.get(projectId) ?? new Set<ReadTurn>();
    held.add(turn);
    this.turns.set(projectId, held);
    this.servedAt.set(projectId, ++this.tick);
    return turn;
  }

  private end(turn: ReadTurn): void {
    this.held--;
    const held = this.turns.get(turn.projectId)!;
    held.delete(turn);
    if (held.size === 0) this.turns.delete(turn.projectId);
    this.usage.add(turn.projectId, turn.startedAt, this.fair.now());
    this.forgetIfQuiet(turn.projectId);
  }

  private forgetIfQuiet(projectId: string): void {
    if (!this.turns.has(projectId) && !this.waiting.has(projectId)) this.servedAt.delete(projectId);
  }

  private wait(projectId: string): Promise<ReadTurn> {
    const queue = this.waiting.get(projectId) ?? [];
    if (queue.length >= this.limits.queuePerProject) return Promise.reject(busy());
    const turn = new Promise<ReadTurn>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          resolve(this.start(projectId));
        },
        timer: setTimeout(() => {
          queue.splice(queue.indexOf(waiter), 1);
          if (queue.length === 0) this.waiting.delete(projectId);
          this.forgetIfQuiet(projectId);
          reject(busy());
        }, this.limits.queueWaitMs),
      };
      queue.push(waiter);
      this.waiting.set(projectId, queue);
    });
    this.preemptIfDue();
    return turn;
  }

  private dispatch(): void {
    const now = this.fair.now();
    while (this.held < this.limits.concurrency) {
      let next: string | undefined;
      let least = Infinity;
      for (const p of this.waiting.keys()) {
        if (this.inFlight(p) >= this.limits.perProject) continue;
        const u = this.usageOf(p, now);
        if (u < least || (u === least && (this.servedAt.get(p) ?? 0) < (this.servedAt.get(next!) ?? 0))) [next, least] = [p, u];
      }
      if (next === undefined) break;
      const queue = this.waiting.get(next)!;
      const waiter = queue.shift()!;
      if (queue.length === 0) this.waiting.delete(next);
      waiter.start();
    }
    this.preemptIfDue();
  }

  /**
   * Reads that wait for a turn only (their project has room) and find none free cancel the running reads of far heavier
   * projects, the heaviest first, one per such read; when none is heavy enough yet, checks again once the heaviest
   * running one may have become so (it grows while it runs).
   */
  private preemptIfDue(): void {
    clearTimeout(this.recheck);
    this.recheck = undefined;
    const now = this.fair.now();
    let demand = 0;
    let lightest = Infinity;
    let lightestProject: string | undefined;
    for (const [p, queue] of this.waiting) {
      const ready = Math.min(queue.length, this.limits.perProject - this.inFlight(p));
      if (ready <= 0) continue;
      demand += ready;
      const u = this.usageOf(p, now);
      if (u < lightest) [lightest, lightestProject] = [u, p];
    }
    if (demand === 0) return;
    let freeing = this.limits.concurrency - this.held;
    const candidates: Array<{ turn: ReadTurn; usage: number }> = [];
    for (const [p, held] of this.turns) {
      const usage = this.usageOf(p, now);
      for (const turn of held) {
        if (turn.preempted) freeing++;
        else if (turn.preempt && p !== lightestProject) candidates.push({ turn, usage });
      }
    }
    // The heaviest project first; of its reads, the one started last (the least work lost).
    candidates.sort((a, b) => b.usage - a.usage || b.turn.startedAt - a.turn.startedAt);
    const bar = this.fair.preemptRatio * lightest + this.fair.preemptMarginMs;
    for (const { turn, usage } of candidates) {
      if (demand <= freeing) return;
      if (usage <= bar) {
        // It grows by at most its project's running reads per ms: not over the bar before this.
        const ms = Math.max(1, Math.ceil((bar - usage) / this.inFlight(turn.projectId)));
        this.recheck = setTimeout(() => this.preemptIfDue(), ms);
        this.recheck.unref();
        return;
      }
      turn.preempted = true;
      turn.preempt!();
      freeing++;
    }
  }
}
