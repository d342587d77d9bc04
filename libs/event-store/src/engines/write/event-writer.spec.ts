import type { EventRow } from '@analytics/schema';
import { EventWriter, type Lane } from './event-writer';

const NOW = new Date().toISOString().replace('T', ' ').slice(0, 23);
const row = (id: string) => ({ event_id: id, project_id: 'p', timestamp: NOW }) as EventRow;

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
    }, { maxRows: 3, maxDelayMs: 5000 });
    const started = Date.now();
    await Promise.all([writer.write([row('a'), row('b')]), writer.write([row('c'), row('d')]), writer.write([row('e')])]);
    // Well before the delay's flush (5 s), with room for a loaded CI machine's pauses.
    expect(Date.now() - started).toBeLessThan(2_500);
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

describe('EventWriter lanes', () => {
  const at = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 23);
  const live = (project: string, id: string) => ({ event_id: id, project_id: project, timestamp: NOW }) as EventRow;
  const far = (project: string, id: string, year = 2003) => ({ event_id: id, project_id: project, timestamp: at(Date.UTC(year, 5, 1)) }) as EventRow;

  /** An insert whose far-lane calls wait until released, recording what ran and in which lane. */
  function gatedSink() {
    const log: string[] = [];
    const gates: Array<() => void> = [];
    const insert = async (rows: EventRow[], lane: Lane) => {
      log.push(`${lane}:${rows.map((r) => r.event_id).join(',')}`);
      if (lane === 'far') await new Promise<void>((r) => gates.push(r));
    };
    return { log, insert, release: () => gates.shift()?.() };
  }
  const settled = () => new Promise((r) => setTimeout(r, 20));

  it('sends rows of the live months to the live lane and the rest to the far lane, never mixing them in one INSERT', async () => {
    const sink = gatedSink();
    const writer = new EventWriter(sink.insert, { maxDelayMs: 1 });
    const farWrite = writer.write([far('a', 'f1'), live('a', 'l0')]);
    await writer.write([live('b', 'l1')]);
    expect(sink.log).toEqual(['far:f1,l0', 'live:l1']);
    sink.release();
    await farWrite;
  });

  it("keeps live writes flowing while a far INSERT runs for seconds (a batch spread over many months)", async () => {
    const sink = gatedSink();
    const writer = new EventWriter(sink.insert, { maxDelayMs: 1 });
    const slow = writer.write([far('attacker', 'spread')]);
    for (let i = 0; i < 5; i++) await writer.write([live('bystander', `l${i}`)]);
    expect(sink.log.filter((l) => l.startsWith('live:'))).toHaveLength(5);
    sink.release();
    await slow;
  });

  it('runs one far INSERT at a time, serves projects in turn, and group-commits what waited', async () => {
    const sink = gatedSink();
    const writer = new EventWriter(sink.insert, { farPartitionsPerS: 1e6 });
    const writes = [writer.write([far('a', 'a1')]), writer.write([far('a', 'a2')]), writer.write([far('a', 'a3')]), writer.write([far('b', 'b1')])];
    await settled();
    expect(sink.log).toEqual(['far:a1']);
    sink.release();
    await settled();
    expect(sink.log).toEqual(['far:a1', 'far:b1']); // b waited one turn of a, not a's backlog
    sink.release();
    await settled();
    expect(sink.log).toEqual(['far:a1', 'far:b1', 'far:a2,a3']);
    sink.release();
    await Promise.all(writes);
  });

  it('holds only the far lane in exclusiveFar: live writes go on, far writes wait and then run before the next section', async () => {
    const sink = gatedSink();
    const writer = new EventWriter(sink.insert, { maxDelayMs: 1, farPartitionsPerS: 1e6 });
    let release!: () => void;
    const section = writer.exclusiveFar(() => new Promise<void>((r) => (release = r)));
    await settled();
    const farWrite = writer.write([far('a', 'f1')]);
    await writer.write([live('b', 'l1')]);
    await settled();
    expect(sink.log).toEqual(['live:l1']);
    const next = writer.exclusiveFar(async () => sink.log.push('section 2'));
    release();
    await section;
    await settled();
    expect(sink.log).toEqual(['live:l1', 'far:f1']);
    sink.release();
    await Promise.all([farWrite, next]);
    expect(sink.log).toEqual(['live:l1', 'far:f1', 'section 2']);
  });

  it('drains both lanes', async () => {
    const sink = gatedSink();
    const writer = new EventWriter(sink.insert, { maxDelayMs: 1 });
    let done = 0;
    void writer.write([far('a', 'f1')]).then(() => done++);
    void writer.write([live('b', 'l1')]).then(() => done++);
    const drained = writer.drain();
    await settled();
    expect(done).toBe(1);
    sink.release();
    await drained;
    expect(done).toBe(2);
  });
});

describe('EventWriter far-lane pacing and chunks', () => {
  const month = (project: string, id: string, m: number) => ({ event_id: id, project_id: project, timestamp: new Date(Date.UTC(2003, m, 1)).toISOString().replace('T', ' ').slice(0, 23) }) as EventRow;
  const months = (project: string, tag: string, n: number) => Array.from({ length: n }, (_, m) => month(project, `${tag}-${m}`, m));

  it("starts the far lane's next INSERT only once the months written took their share of time, whichever project is next", async () => {
    const started: Array<[string, number]> = [];
    const t0 = Date.now();
    const writer = new EventWriter(async (rows) => void started.push([rows[0]!.event_id, Date.now() - t0]), { farPartitionsPerS: 10 });
    // 5 months at 10 a second: the lane's next INSERT waits 500 ms, b's as a's.
    await writer.write(months('a', 'a1', 5));
    await Promise.all([writer.write([month('b', 'b1', 0)]), writer.write([month('a', 'a2', 0)])]);
    const at = Object.fromEntries(started);
    expect(at['b1']).toBeGreaterThanOrEqual(450);
    expect(at['a2']).toBeGreaterThanOrEqual(550); // b1's month took its 100 ms after it
    expect(started.map(([id]) => id)).toEqual(['a1-0', 'b1', 'a2']);
  });

  it('writes a request spread over more months than a chunk in several INSERTs of whole months, and resolves it after the last', async () => {
    const inserts: number[] = [];
    const writer = new EventWriter(async (rows) => void inserts.push(new Set(rows.map((r) => r.timestamp.slice(0, 7))).size), { farChunkMonths: 25, farPartitionsPerS: 1e6 });
    await writer.write(months('a', 'spread', 60).flatMap((r) => [r, { ...r, event_id: `${r.event_id}-bis` }]));
    expect(inserts).toEqual([25, 25, 10]);
  });

  it('writes the same months of the writes queued behind into the same INSERT: a month is one part however many writes fill it', async () => {
    const inserts: Array<[number, number]> = [];
    const writer = new EventWriter(async (rows) => void inserts.push([new Set(rows.map((r) => r.timestamp.slice(0, 7))).size, rows.length]), { farChunkMonths: 25, farPartitionsPerS: 1e6 });
    const first = writer.write([month('a', 'started', 0)]);
    await Promise.all([first, ...[1, 2, 3, 4].map((k) => writer.write(months('a', `w${k}`, 60)))]);
    expect(inserts).toEqual([[1, 1], [25, 100], [25, 100], [10, 40]]);
  });

  it('fails the request when one of its INSERTs fails, and goes on with the next request', async () => {
    let n = 0;
    const written: string[] = [];
    const writer = new EventWriter(async (rows) => {
      if (++n === 2) throw new Error('store down');
      written.push(...rows.map((r) => r.event_id));
    }, { farChunkMonths: 2, farPartitionsPerS: 1e6 });
    const results = await Promise.allSettled([writer.write(months('a', 'x', 5)), writer.write([month('a', 'y', 0)])]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    expect(written).toEqual(['x-0', 'x-1', 'y']); // the months written before the failure stay, as a multi-partition INSERT's do
  });

  it('drains without pacing: everything accepted is written at once', async () => {
    const done: string[] = [];
    const writer = new EventWriter(async (rows) => void done.push(rows[0]!.event_id), { farPartitionsPerS: 1 });
    await writer.write(months('a', 'a1', 10));
    void writer.write([month('a', 'a2', 0)]);
    const t = Date.now();
    await writer.drain();
    expect(done).toEqual(['a1-0', 'a2']);
    expect(Date.now() - t).toBeLessThan(1_000);
  });
});
