import { ApiError } from '@analytics/schema';
import { ReadGate } from './read-gate';

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};
const codeOf = (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof ApiError ? e.code : String(e)));

describe('ReadGate', () => {
  it("serves projects round-robin: a quiet project's read runs after one turn, not after a busy project's backlog", async () => {
    const gate = new ReadGate({ concurrency: 1, perProject: 4, queuePerProject: 32, queueWaitMs: 5_000 });
    const order: string[] = [];
    const release = new Map<string, () => void>();
    const read = (project: string, id: string) =>
      gate.run(project, async (turn) => {
        order.push(`${id}${turn.bursting ? '*' : ''}`);
        const d = deferred();
        release.set(id, d.resolve);
        await d.promise;
      });
    const heavy = ['h1', 'h2', 'h3', 'h4'].map((id) => read('heavy', id));
    await new Promise((r) => setImmediate(r));
    const light = read('light', 'l1');
    for (const id of ['h1', 'l1', 'h2', 'h3', 'h4']) {
      while (!release.has(id)) await new Promise((r) => setImmediate(r));
      release.get(id)!();
    }
    await Promise.all([...heavy, light]);
    expect(order).toEqual(['h1', 'l1', 'h2*', 'h3*', 'h4']);
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
    expect(await queued).toBe('rate_limited'); // waited 50 ms without a turn
    expect(await codeOf(gate.run('other', async () => 'x'))).toBe('ok'); // another project is not held up
    hold.resolve();
    await Promise.all(first);
    expect(peak).toBe(2);
  });

  it("cancels a bursting project's running read when a quiet project's read would wait, and never a lone one", async () => {
    const gate = new ReadGate({ concurrency: 1, perProject: 4, queuePerProject: 32, queueWaitMs: 5_000 });
    const cancelled: string[] = [];
    const release = new Map<string, () => void>();
    const read = (project: string, id: string) =>
      gate.run(project, async (turn) => {
        const d = deferred();
        release.set(id, d.resolve);
        turn.preempt = () => {
          cancelled.push(id);
          d.resolve();
        };
        await d.promise;
      });
    const started = async (id: string) => {
      while (!release.has(id)) await new Promise((r) => setImmediate(r));
    };
    const h1 = read('heavy', 'h1');
    await started('h1');
    const l0 = read('light', 'l0'); // h1 runs alone (not bursting): the light read waits its one turn
    expect(cancelled).toEqual([]);
    const h2 = read('heavy', 'h2');
    const h3 = read('heavy', 'h3');
    release.get('h1')!();
    await started('l0');
    release.get('l0')!();
    await Promise.all([h1, l0]);
    await started('h2'); // h2 runs with h3 waiting behind it: the heavy project is bursting
    const l1 = read('light', 'l1');
    expect(cancelled).toEqual(['h2']);
    await started('l1');
    release.get('l1')!();
    await started('h3');
    release.get('h3')!();
    await Promise.all([h2, h3, l1]);
  });
});
