import type { EventRow } from '@analytics/schema';
import { EventWriter } from './event-writer';

const row = (id: string) => ({ event_id: id }) as EventRow;

describe('EventWriter (group commit)', () => {
  it('puts rows of concurrent writes into one insert and resolves each after it', async () => {
    const inserts: string[][] = [];
    const writer = new EventWriter(async (rows) => {
      inserts.push(rows.map((r) => r.event_id));
    }, { maxDelayMs: 5 });
    await Promise.all([writer.write([row('a')]), writer.write([row('b'), row('c')]), writer.write([row('d')])]);
    expect(inserts).toEqual([['a', 'b', 'c', 'd']]);
  });

  it('flushes at once on the row threshold and never splits one write across inserts', async () => {
    const inserts: number[] = [];
    const writer = new EventWriter(async (rows) => {
      inserts.push(rows.length);
    }, { maxRows: 3, maxDelayMs: 1000 });
    const started = Date.now();
    await Promise.all([writer.write([row('a'), row('b')]), writer.write([row('c'), row('d')]), writer.write([row('e')])]);
    expect(Date.now() - started).toBeLessThan(900);
    expect(inserts.reduce((a, b) => a + b, 0)).toBe(5);
    expect(inserts).toEqual([2, 3]);
  });

  it('rejects every write of a failed insert and keeps serving later writes', async () => {
    let fail = true;
    const written: string[] = [];
    const writer = new EventWriter(async (rows) => {
      if (fail) throw new Error('store down');
      written.push(...rows.map((r) => r.event_id));
    }, { maxDelayMs: 2 });
    const results = await Promise.allSettled([writer.write([row('a')]), writer.write([row('b')])]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await writer.write([row('c')]);
    expect(written).toEqual(['c']);
  });

  it('keeps at most `concurrency` inserts in flight and drains before close', async () => {
    let inFlight = 0;
    let peak = 0;
    const writer = new EventWriter(async () => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((r) => setTimeout(r, 10));
      inFlight--;
    }, { maxRows: 1, concurrency: 2 });
    const writes = Array.from({ length: 6 }, (_, i) => writer.write([row(String(i))]));
    await writer.drain();
    await Promise.all(writes);
    expect(peak).toBe(2);
    expect(inFlight).toBe(0);
  });
});
