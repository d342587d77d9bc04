import type { Logger } from '@analytics/service-kit';
import { AdvisoryLease } from './builder-lease';
import type { Env } from './config';

/** A job the scheduler runs every `everyMs` while this process is the active scheduler (reports, alerts). */
export interface ScheduledJob {
  name: string;
  everyMs: number;
  /** One pass. Never overlaps itself; a throw is logged and the next pass runs on time. */
  run(now: Date): Promise<void>;
}

/**
 * The scheduler's lease in the key store's PostgreSQL: pg_try_advisory_lock(hashtext('<this>:<current_schema()>')), one
 * per key store (two deployments in schemas of one database each have their own).
 */
export const SCHEDULER_LOCK_NAME = 'analytics:scheduler';

export interface SchedulerOptions {
  /** The advisory lock's name (default SCHEDULER_LOCK_NAME; a test takes one of its own). */
  lockName?: string;
  /** How often a standby tries to take the lease, and the holder checks it (ms; default 2000). */
  leaseIntervalMs?: number;
  /** At stop(), how long a pass running may go on before the lease is released anyway (ms; default 15000). */
  stopWaitMs?: number;
  clock?: () => number;
}

export interface Scheduler {
  /** Whether this process runs the jobs now (holds the lease, or is the only process). */
  readonly active: boolean;
  /** Stops starting passes, waits for the running ones (within stopWaitMs), releases the lease. */
  stop(): Promise<void>;
}

/** The job loops of an active scheduler: each job's next pass is timed from the end of the last, so none overlaps itself. */
class JobLoops {
  private timers = new Map<string, NodeJS.Timeout>();
  private running = new Set<Promise<void>>();
  /** Jobs with a pass running: a restart after a lost lease waits for it rather than starting a second. */
  private busy = new Set<string>();
  private on = false;

  constructor(
    private readonly jobs: readonly ScheduledJob[],
    private readonly logger: Logger,
    private readonly clock: () => number,
  ) {}

  start(): void {
    if (this.on) return;
    this.on = true;
    for (const job of this.jobs) if (!this.busy.has(job.name)) this.schedule(job, 0);
  }

  /** No new pass starts; resolves when the passes running have ended, or after waitMs. */
  async stop(waitMs: number): Promise<void> {
    this.on = false;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    if (this.running.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.running]), new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
  }

  private schedule(job: ScheduledJob, delayMs: number): void {
    if (!this.on || this.timers.has(job.name)) return;
    const timer = setTimeout(() => void this.pass(job), delayMs);
    timer.unref();
    this.timers.set(job.name, timer);
  }

  private async pass(job: ScheduledJob): Promise<void> {
    this.timers.delete(job.name);
    if (!this.on) return;
    this.busy.add(job.name);
    const started = this.clock();
    const run = (async () => {
      try {
        await job.run(new Date(started));
      } catch (e) {
        this.logger.error({ err: e, job: job.name }, `scheduler: ${job.name} failed; it runs again at its next pass`);
      }
    })();
    this.running.add(run);
    await run;
    this.running.delete(run);
    this.busy.delete(job.name);
    this.schedule(job, Math.max(0, job.everyMs - (this.clock() - started)));
  }
}

/**
 * Runs `jobs` in this process while it is the active scheduler of the deployment (issue 48, docs/alerts-and-reports.md
 * "Where it runs"). On PostgreSQL (DATABASE_URL) one process is active at a time, by an advisory lock in the key
 * store's database scoped to its schema (the aggregate builder's lease, another name): a standby takes over within
 * leaseIntervalMs once the holder's session ends (stopped, crashed, cut off). On the embedded key store (PGlite: one process) it is always active.
 * Jobs must still be safe to run twice (a holder cut off mid-pass may finish its pass while the next one starts):
 * the reports' send log makes a send once per recipient and period whoever runs it.
 */
export function startScheduler(env: Pick<Env, 'DATABASE_URL'>, logger: Logger, jobs: ScheduledJob[], options: SchedulerOptions = {}): Scheduler {
  const loops = new JobLoops(jobs, logger, options.clock ?? Date.now);
  const stopWaitMs = options.stopWaitMs ?? 15_000;
  if (!env.DATABASE_URL) {
    loops.start();
    logger.info({ jobs: jobs.map((j) => j.name) }, 'scheduler: active (embedded key store, one process)');
    let active = true;
    return {
      get active() {
        return active;
      },
      async stop() {
        active = false;
        await loops.stop(stopWaitMs);
      },
    };
  }
  const lease = new AdvisoryLease(
    { databaseUrl: env.DATABASE_URL, lockName: options.lockName ?? SCHEDULER_LOCK_NAME, label: 'scheduler', scope: 'schema', logger, intervalMs: options.leaseIntervalMs },
    {
      acquired: async () => loops.start(),
      // The lease's session is gone: another process may take over now. Passes running finish (the send log keeps
      // them from doubling what the next holder does).
      lost: () => loops.stop(0),
    },
  );
  lease.start();
  return {
    get active() {
      return lease.held;
    },
    async stop() {
      await loops.stop(stopWaitMs);
      await lease.stop();
    },
  };
}
