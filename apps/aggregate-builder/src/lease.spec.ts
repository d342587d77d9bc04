import { randomBytes } from 'node:crypto';
import { BuilderLease } from '@analytics/runtime';
import { createLogger } from '@analytics/service-kit';

// The builder's lease on a real PostgreSQL (TEST_DATABASE_URL, as CI sets it; PGlite has one session, so nothing to
// share a lock with): one holder per event-store database, a standby takes over when the holder's session ends.
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

(PG ? describe : describe.skip)('the aggregate builder lease (PostgreSQL advisory lock)', () => {
  const leases: BuilderLease[] = [];
  afterEach(async () => {
    for (const l of leases.splice(0)) await l.stop();
  });

  function lease(database: string, log: string[], name: string): BuilderLease {
    const l = new BuilderLease({ databaseUrl: PG!, database, logger, intervalMs: 50 }, {
      acquired: async (confirm) => {
        await confirm();
        log.push(`${name} builds`);
      },
      lost: async () => void log.push(`${name} stops`),
    });
    leases.push(l);
    return l;
  }

  it('lets one process build; a standby takes over once the holder releases it, and confirm() fails for a non-holder', async () => {
    const db = `lease_${randomBytes(4).toString('hex')}`;
    const log: string[] = [];
    const [a, b] = [lease(db, log, 'a'), lease(db, log, 'b')];
    a.start();
    await until(() => a.held);
    b.start();
    await sleep(300); // several of b's tries
    expect([a.held, b.held]).toEqual([true, false]);
    await expect(b.confirm()).rejects.toThrow('the lease is not held');
    await a.stop();
    // held is true once b has the lock; its acquired hook (a confirm round trip, then the log line) runs after that.
    await until(() => b.held && log.length === 3);
    expect(log).toEqual(['a builds', 'a stops', 'b builds']);
  });

  it('holds one lease per event-store database', async () => {
    const log: string[] = [];
    const [a, b] = [lease(`lease_${randomBytes(4).toString('hex')}`, log, 'a'), lease(`lease_${randomBytes(4).toString('hex')}`, log, 'b')];
    a.start();
    b.start();
    await until(() => a.held && b.held);
  });
});
