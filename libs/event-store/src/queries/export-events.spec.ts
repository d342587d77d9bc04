import { ApiError, type ExportParams } from '@analytics/schema';
import type { EventStore } from '../event-store';
import { buildExportEvents, exportEvents } from './export-events.query';
import { useTestStore } from '../test-support/test-store';
import { testRow } from '../test-support/test-rows';

let store: EventStore;
// Reads stop after 1 s, exports after 3 s: an export runs under its own (longer) limit, EXPORT_MAX_EXECUTION_S.
useTestStore((opened) => ({ store } = opened), { read: { maxExecutionS: 1, exportMaxExecutionS: 3 } });

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
