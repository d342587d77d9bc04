import { ApiError, type ExportParams } from '@analytics/schema';
import { EventStore } from '../event-store';
import { buildExportEvents, exportEvents } from './export-events.query';
import { type ReadLimits, ExportIdleError } from '../engines/read/read-limits';
import { CONTENDED_IDLE_MS } from '../engines/read/read-side';
import { useTestStore } from '../test-support/test-store';
import { testRow } from '../test-support/test-rows';

let store: EventStore;
let dir: string;
// Reads stop after 1 s, exports after 3 s: an export runs under its own (longer) limit, EXPORT_MAX_EXECUTION_S.
useTestStore((opened) => ({ store, dir } = opened), { read: { maxExecutionS: 1, exportMaxExecutionS: 3 } });

const P = '00000000-0000-4000-8000-0000000000e1';
const OTHER = '00000000-0000-4000-8000-0000000000e2';
const D = Date.UTC(2026, 0, 5);
const params = (o: Partial<ExportParams> = {}): ExportParams => ({ from: D, to: D + 86_400_000, format: 'ndjson', ...o });

async function collect(projectId: string, p: ExportParams): Promise<string> {
  const chunks: Buffer[] = [];
  await exportEvents(store, projectId, p, { signal: new AbortController().signal, write: async (c) => void chunks.push(Buffer.from(c)) });
  return Buffer.concat(chunks).toString('utf8');
}

describe('exportEvents', () => {
  beforeAll(async () => {
    await store.write([
      testRow(P, { at: D + 2000, event_name: 'late', user_id: "x' OR 1=1 --" }),
      testRow(P, { at: D + 1000, event_name: 'early' }),
      testRow(P, { at: D - 1, event_name: 'before the range' }),
      testRow(OTHER, { at: D + 1500, event_name: 'other project' }),
    ]);
  });

  it('binds every value: the SQL holds placeholders only, and the filters still select', async () => {
    const stmt = buildExportEvents(store.eventsTable, P, params({ user_id: "x' OR 1=1 --", source: 'a\\b', format: 'csv' }));
    expect(stmt.sql).not.toContain('OR 1=1');
    expect(stmt.sql).not.toContain(P);
    expect(stmt.sql).toContain('e.project_id = {p:UUID}');
    expect(stmt.format).toBe('CSVWithNames');
    expect(stmt.params).toMatchObject({ p: P, user_id: "x' OR 1=1 --", source: 'a\\b' });
    const rows = (await collect(P, params({ user_id: "x' OR 1=1 --" }))).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => r.event_name)).toEqual(['late']);
  });

  it("oldest first, within [from, to), the key's project only, timestamps as /v1/query writes them", async () => {
    const rows = (await collect(P, params())).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => [r.event_name, r.timestamp])).toEqual([
      ['early', '2026-01-05T00:00:01.000Z'],
      ['late', '2026-01-05T00:00:02.000Z'],
    ]);
  });

  it('stops an export at its own time limit (EXPORT_MAX_EXECUTION_S), not the reads\', as 400 query_too_expensive', async () => {
    const forever = `SELECT sum(cityHash64(number)) AS s FROM numbers(100000000000) WHERE {p:UUID} != toUUID('00000000-0000-0000-0000-000000000000')`;
    const read = await store.read(P, forever, { p: P }).catch((e: unknown) => e);
    expect((read as ApiError).toBody()).toMatchObject({ error: 'query_too_expensive', details: { limit: 'max_execution_time', bound: '1 s' } });
    const t0 = Date.now();
    const exported = await store
      .exportTo(P, { sql: forever, params: { p: P }, format: 'JSONEachRow' }, { signal: new AbortController().signal, write: async () => undefined })
      .catch((e: unknown) => e);
    expect(exported).toBeInstanceOf(ApiError);
    expect((exported as ApiError).toBody()).toMatchObject({ error: 'query_too_expensive', details: { limit: 'max_execution_time', bound: '3 s' } });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2_500);
  }, 30_000);
});

describe('an export whose consumer stops taking its bytes', () => {
  const never = { signal: new AbortController().signal, write: () => new Promise<void>(() => undefined) };
  const running = (s: EventStore) => s.select<{ n: string }>("SELECT count() AS n FROM system.processes WHERE Settings['log_comment'] != '' AND query LIKE '%AS timestamp%'", {}).then((r) => Number(r[0]!.n));

  /** Another store over the same database, with its own export limits. */
  async function withLimits(read: Partial<ReadLimits>, test: (s: EventStore) => Promise<void>): Promise<void> {
    const s = await EventStore.open({ chdbPath: dir, database: store.db, read });
    try {
      await test(s);
    } finally {
      await s.close();
    }
  }

  /** Settles `p` as what it resolved or rejected with, and when (ms after `t0`). */
  const settled = (p: Promise<unknown>, t0: number) => p.then((v) => ({ v, at: Date.now() - t0 }), (v: unknown) => ({ v, at: Date.now() - t0 }));

  it('ends it with ExportIdleError after EXPORT_IDLE_TIMEOUT_S, its statement gone and its turn free', async () => {
    await withLimits({ exportIdleTimeoutS: 1, exportMaxExecutionS: 60 }, async (s) => {
      const t0 = Date.now();
      const { v, at } = await settled(exportEvents(s, P, params(), never), t0);
      expect(v).toBeInstanceOf(ExportIdleError);
      expect(at).toBeGreaterThanOrEqual(900);
      expect(at).toBeLessThan(8_000);
      const deadline = Date.now() + 5_000;
      while ((await running(s)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(await running(s)).toBe(0);
      // One export per project: the next one runs at once.
      const chunks: Buffer[] = [];
      await exportEvents(s, P, params(), { signal: new AbortController().signal, write: async (c) => void chunks.push(Buffer.from(c)) });
      expect(Buffer.concat(chunks).toString('utf8').trim().split('\n')).toHaveLength(2);
    });
  }, 180_000);

  it('ends it at EXPORT_MAX_EXECUTION_S counted from its turn, the wait on the consumer included (400 query_too_expensive)', async () => {
    await withLimits({ exportIdleTimeoutS: 60, exportMaxExecutionS: 2 }, async (s) => {
      const t0 = Date.now();
      const { v, at } = await settled(exportEvents(s, P, params(), never), t0);
      expect(v).toBeInstanceOf(ApiError);
      expect((v as ApiError).toBody()).toMatchObject({ error: 'query_too_expensive', details: { limit: 'max_execution_time', bound: '2 s' } });
      expect(at).toBeGreaterThanOrEqual(1_900);
      expect(at).toBeLessThan(10_000);
    });
  }, 180_000);

  it(`gives its turn up after ${CONTENDED_IDLE_MS} ms idle only while another export waits for it`, async () => {
    await withLimits({ exportIdleTimeoutS: 60, exportMaxExecutionS: 60, exportConcurrency: 1, queueWaitMs: 60_000 }, async (s) => {
      const t0 = Date.now();
      const held = settled(exportEvents(s, P, params(), never), t0);
      // Nobody waits: idle past CONTENDED_IDLE_MS, it keeps its turn (EXPORT_IDLE_TIMEOUT_S is 60 s here).
      const first = await Promise.race([held, new Promise((r) => setTimeout(() => r('running'), CONTENDED_IDLE_MS + 1_000))]);
      expect(first).toBe('running');
      // Another project's export waits for the only turn: the idle one is cut for it.
      const t1 = Date.now();
      const chunks: Buffer[] = [];
      await exportEvents(s, OTHER, params(), { signal: new AbortController().signal, write: async (c) => void chunks.push(Buffer.from(c)) });
      expect(Date.now() - t1).toBeLessThan(10_000);
      expect(JSON.parse(Buffer.concat(chunks).toString('utf8'))).toMatchObject({ event_name: 'other project' });
      expect((await held).v).toBeInstanceOf(ExportIdleError);
    });
  }, 90_000);
});
