import { createLogger } from '@analytics/service-kit';
import { type ScheduledJob, type Scheduler, startScheduler } from './scheduler';

// The scheduler's lease on a real PostgreSQL (TEST_DATABASE_URL, as CI sets it): one scheduler of a deployment runs
// the jobs; a standby takes over when it stops. Without DATABASE_URL (PGlite: one process) it is active at once.
const PG = process.env.TEST_DATABASE_URL;
const logger = createLogger({ level: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await sleep(20);
  }
}

const counting = (name: string, runs: string[], everyMs = 30): ScheduledJob => ({ name, everyMs, run: async () => void runs.push(name) });

describe('the scheduler without PostgreSQL (embedded key store)', () => {
  it('runs each job every everyMs, never overlapping itself, logging a failure without stopping', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    let slowRuns = 0;
    let failing = 0;
    const slow: ScheduledJob = {
      name: 'slow',
      everyMs: 10,
      run: async () => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await sleep(50);
        inFlight -= 1;
        slowRuns += 1;
      },
    };
    const broken: ScheduledJob = {
      name: 'broken',
      everyMs: 10,
      run: async () => {
        failing += 1;
        throw new Error('boom');
      },
    };
    const s = startScheduler({}, logger, [slow, broken]);
    expect(s.active).toBe(true);
    await until(() => slowRuns >= 3 && failing >= 3);
    await s.stop();
    const after = slowRuns;
    await sleep(100);
    expect(maxInFlight).toBe(1);
    expect(slowRuns).toBe(after);
  });
});

(PG ? describe : describe.skip)('two schedulers on PostgreSQL (advisory lock)', () => {
  const started: Scheduler[] = [];
  afterEach(async () => {
    for (const s of started.splice(0)) await s.stop();
  });

  it('one runs the jobs; the other takes over when the first stops', async () => {
    // A lock of this test's own: other suites on the same database hold the deployment's.
    const lockName = `scheduler-spec:${Math.random()}`;
    const runs: string[] = [];
    const a = startScheduler({ DATABASE_URL: PG }, logger, [counting('a', runs)], { leaseIntervalMs: 50, lockName });
    started.push(a);
    await until(() => a.active && runs.includes('a'));
    const b = startScheduler({ DATABASE_URL: PG }, logger, [counting('b', runs)], { leaseIntervalMs: 50, lockName });
    started.push(b);
    await sleep(400); // several of b's tries
    expect([a.active, b.active]).toEqual([true, false]);
    expect(runs).not.toContain('b');
    await a.stop();
    const stoppedAt = runs.length;
    await until(() => b.active && runs.includes('b'));
    // Nothing of a's after it stopped; only b runs from then on.
    expect(runs.slice(stoppedAt).every((r) => r === 'b')).toBe(true);
  });

  it('holds one lease per key store: schedulers of two schemas of one database are both active', async () => {
    const lockName = `scheduler-spec:${Math.random()}`;
    const inSchema = (schema: string) => {
      const u = new URL(PG!);
      u.searchParams.set('options', `-c search_path=${schema}`);
      return u.toString();
    };
    const { Client } = await import('pg');
    const admin = new Client({ connectionString: PG });
    await admin.connect();
    await admin.query('CREATE SCHEMA IF NOT EXISTS scheduler_spec_one; CREATE SCHEMA IF NOT EXISTS scheduler_spec_two');
    await admin.end();
    const runs: string[] = [];
    const a = startScheduler({ DATABASE_URL: inSchema('scheduler_spec_one') }, logger, [counting('a', runs)], { leaseIntervalMs: 50, lockName });
    const b = startScheduler({ DATABASE_URL: inSchema('scheduler_spec_two') }, logger, [counting('b', runs)], { leaseIntervalMs: 50, lockName });
    started.push(a, b);
    await until(() => a.active && b.active && runs.includes('a') && runs.includes('b'));
  });
});
