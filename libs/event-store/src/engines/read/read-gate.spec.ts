import { ApiError } from '@analytics/schema';
import { ReadGate, type ReadGateLimits } from './read-gate';

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};
const codeOf = (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof ApiError ? e.code : String(e)));
const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

const ONE_TURN: ReadGateLimits = { concurrency: 1, perProject: 4, queuePerProject: 32, queueWaitMs: 60_000 };
const FAIRNESS = { halfLifeMs: 10_000, preemptRatio: 2, preemptMarginMs: 100 };

/**
 * Plays a script against a gate on a fake clock (jest's timers: the queue waits and the gate's re-checks fire as the
 * clock moves) and returns what happened, each entry at its ms. Steps:
 *   `A:a1`   read a1 of project A arrives (`A:a1#`: it sets no preempt, as a read past its deadline)
 *   `+500`   500 ms pass
 *   `-a1`    read a1 ends (its statement finished, or stopped after a preemption)
 * Entries: `a1@0` a1 started, `a1!@2000` a1 told to stop, `a1 rate_limited@..` refused.
 */
async function play(script: string[], limits: ReadGateLimits = ONE_TURN): Promise<string[]> {
  const t0 = Date.now();
  const gate = new ReadGate(limits, { ...FAIRNESS, now: () => Date.now() });
  const log: string[] = [];
  const at = () => Date.now() - t0;
  const ends = new Map<string, () => void>();
  for (const step of script) {
    if (step.startsWith('+')) jest.advanceTimersByTime(Number(step.slice(1)));
    else if (step.startsWith('-')) ends.get(step.slice(1))!();
    else {
      const [project, spec] = step.split(':') as [string, string];
      const id = spec.replace('#', '');
      const done = deferred();
      ends.set(id, done.resolve);
      void gate
        .run(project, async (turn) => {
          log.push(`${id}@${at()}`);
          if (!spec.endsWith('#')) turn.preempt = () => log.push(`${id}!@${at()}`);
          await done.promise;
        })
        .catch((e: unknown) => log.push(`${id} ${e instanceof ApiError ? e.code : String(e)}@${at()}`));
    }
    await flush();
  }
  return log;
}

/** Project B's reads b1..bn end 1 s apart, each followed by a new one (b1 and b2 arrived before): B always has one waiting. */
const backToBack = (n: number) => Array.from({ length: n }, (_, i) => ['+1000', `-b${i + 1}`, `B:b${i + 3}`]).flat();

describe('ReadGate', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  it.each<{ name: string; script: string[]; expected: string[]; limits?: ReadGateLimits }>([
    {
      name: 'serves projects of equal usage round-robin: a light read runs after one turn, not after a burst\'s backlog',
      script: ['A:a1', 'A:a2', 'A:a3', 'A:a4', 'B:b1', '-a1', '-b1', '-a2', '-a3'],
      expected: ['a1@0', 'b1@0', 'a2@0', 'a3@0', 'a4@0'],
    },
    {
      name: 'gives the free turn to the waiting project that used the engine least recently (B none, C 1 s, A 3 s)',
      script: ['A:a1', '+3000', '-a1', 'C:c1', '+1000', '-c1', 'X:x1', 'A:a2', 'C:c2', 'B:b1', '-x1', '-b1', '-c2'],
      expected: ['a1@0', 'c1@3000', 'x1@4000', 'b1@4000', 'c2@4000', 'a2@4000'],
    },
    {
      name: 'lets usage decay: 4 s of reads 21.5 s ago weigh less than 1.5 s just now',
      script: ['A:a1', '+4000', '-a1', '+20000', 'C:c1', '+1500', '-c1', 'X:x1', 'C:c2', 'A:a2', '-x1', '-a2'],
      expected: ['a1@0', 'c1@24000', 'x1@25500', 'a2@25500', 'c2@25500'],
    },
    {
      name: "cancels a heavy project's lone running read for a light project's read, which runs next; the read queued again waits behind it",
      script: ['A:a1', '+2000', 'B:b1', '-a1', 'A:a1r', '-b1'],
      expected: ['a1@0', 'a1!@2000', 'b1@2000', 'a1r@2000'],
    },
    {
      name: 'cancels nothing while the running project used at most 2x the waiter\'s engine time + 100 ms',
      script: ['B:b0', '+1000', '-b0', 'A:a1', '+1500', 'B:b1', '+300', '-a1'],
      expected: ['b0@0', 'a1@1000', 'b1@2800'],
    },
    {
      name: 'checks again as the running read grows: a light read waits at most until the heavy one crosses the bar, then cancels it',
      script: ['A:a1', '+50', 'B:b1', '+49', '+2', '-a1'],
      expected: ['a1@0', 'a1!@101', 'b1@101'],
    },
    {
      name: 'never cancels a read that set no preempt (past its deadline): it runs to the end',
      script: ['A:a1#', '+5000', 'B:b1', '+1000', '-a1'],
      expected: ['a1@0', 'b1@6000'],
    },
    {
      name: "cancels nothing for a read held back by its own project's limit",
      script: ['A:a1', 'B:b0', '+3000', 'B:b1', '-b0', '-a1'],
      expected: ['a1@0', 'b0@0', 'b1@3000'],
      limits: { concurrency: 2, perProject: 1, queuePerProject: 8, queueWaitMs: 60_000 },
    },
    {
      name: "cancels one heavy read per light read that waits, the heaviest project's latest first",
      script: ['A:a1', '+500', 'A:a2', '+2000', 'B:b1', 'B:b2', 'B:b3', '-a2', '-a1'],
      expected: ['a1@0', 'a2@500', 'a2!@2500', 'a1!@2500', 'b1@2500', 'b2@2500'],
      limits: { concurrency: 2, perProject: 4, queuePerProject: 8, queueWaitMs: 60_000 },
    },
    // A's 10 s weigh 7.2 s as it ends; t s of B's weigh 14.4 x (1 - x) s while A's have decayed to 7.2 x x, x = 2^(-t/10): equal at t = 5.85.
    {
      name: 'does not starve a heavy project: its waiting read goes first once its decayed usage is below the busy project\'s',
      script: ['A:a1', '+10000', '-a1', 'B:b1', 'B:b2', 'A:a2', ...backToBack(7)],
      expected: ['a1@0', 'b1@10000', 'b2@11000', 'b3@12000', 'b4@13000', 'b5@14000', 'b6@15000', 'a2@16000'],
    },
    {
      name: 'answers 429 rate_limited to a read that waited READ_QUEUE_WAIT_MS without a turn',
      script: ['A:a1#', 'B:b1', '+999', '+1'],
      expected: ['a1@0', 'b1 rate_limited@1000'],
      limits: { concurrency: 1, perProject: 4, queuePerProject: 8, queueWaitMs: 1_000 },
    },
  ])('$name', async ({ script, expected, limits }) => {
    expect(await play(script, limits)).toEqual(expected);
  });

  it("tells whether a waiting read would start if one of a project's turns ended", async () => {
    const gate = new ReadGate({ concurrency: 2, perProject: 1, queuePerProject: 8, queueWaitMs: 5_000 });
    const holdA = deferred();
    const holdB = deferred();
    const running = [gate.run('a', () => holdA.promise), gate.run('b', () => holdB.promise)];
    expect([gate.wanted('a'), gate.wanted('b')]).toEqual([false, false]);
    // b's second read waits behind b's own turn only: a's ending would not start it.
    const b2 = gate.run('b', async () => undefined);
    expect([gate.wanted('a'), gate.wanted('b')]).toEqual([false, true]);
    // c waits for any turn.
    const c = gate.run('c', async () => undefined);
    expect([gate.wanted('a'), gate.wanted('b')]).toEqual([true, true]);
    holdA.resolve();
    holdB.resolve();
    await Promise.all([...running, b2, c]);
    expect(gate.wanted('a')).toBe(false);
  });

  it('reports the reads waiting for their turn, every project together (analytics_read_queue_depth)', async () => {
    const gate = new ReadGate({ concurrency: 1, perProject: 1, queuePerProject: 8, queueWaitMs: 5_000 });
    const hold = deferred();
    const first = gate.run('a', () => hold.promise);
    expect(gate.queued).toBe(0);
    const waiting = [gate.run('a', async () => undefined), gate.run('b', async () => undefined), gate.run('b', async () => undefined)];
    expect(gate.queued).toBe(3);
    hold.resolve();
    await Promise.all([first, ...waiting]);
    expect(gate.queued).toBe(0);
  });

  it('caps reads in flight per project and answers 429 rate_limited beyond its queue or after the wait', async () => {
    const gate = new ReadGate({ concurrency: 10, perProject: 2, queuePerProject: 1, queueWaitMs: 50 });
    const hold = deferred();
    let running = 0;
    let peak = 0;
    const read = () =>
      gate.run('p', async () => {
        peak = Math.max(peak, ++running);
        await hold.promise;
        running--;
      });
    const first = [read(), read()];
    const queued = codeOf(read());
    const overflow = await codeOf(read());
    expect(overflow).toBe('rate_limited');
    jest.advanceTimersByTime(50);
    expect(await queued).toBe('rate_limited'); // waited 50 ms without a turn
    expect(await codeOf(gate.run('other', async () => 'x'))).toBe('ok'); // another project is not held up
    hold.resolve();
    await Promise.all(first);
    expect(peak).toBe(2);
  });

  it("measures a project's usage as its turns' wall time, halving every half-life, running turns included", async () => {
    let now = 0;
    const gate = new ReadGate(ONE_TURN, { ...FAIRNESS, now: () => now });
    const hold = deferred();
    const read = gate.run('a', async () => {
      now += 1_000;
      expect(gate.usageOf('a')).toBeCloseTo(14_427 * (1 - 2 ** -0.1), 0); // held 1 s: its decayed integral, ~966 ms
      await hold.promise;
    });
    await flush();
    hold.resolve();
    await read;
    const ended = gate.usageOf('a');
    now += 10_000;
    expect(gate.usageOf('a')).toBeCloseTo(ended / 2, 6);
    expect(gate.usageOf('never-read')).toBe(0);
  });
});
