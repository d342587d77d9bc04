import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '@analytics/schema';
import { EventStore } from './event-store';
import { testRow } from './test-rows';

let dir: string;
let store: EventStore;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'event-store-read-limits-'));
  store = await EventStore.open({ chdbPath: dir, database: `t_${randomBytes(6).toString('hex')}`, read: { maxMemoryBytes: 1000 } });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('read limits in the engine', () => {
  it('stops a read over its memory limit with 400 query_too_expensive naming the limit; other queries and the writer are untouched', async () => {
    const projectId = '00000000-0000-4000-8000-00000000000a';
    const row = testRow(projectId, { at: Date.UTC(2026, 0, 5) });
    await store.write([row]);
    const e = await store
      .read(row.project_id, `SELECT event_name, count() AS c FROM ${store.eventsTable} WHERE project_id = {p:UUID} GROUP BY event_name`, { p: row.project_id })
      .catch((err: unknown) => err);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(400);
    expect((e as ApiError).toBody()).toMatchObject({ error: 'query_too_expensive', details: { limit: 'max_memory_usage' } });
    // The limit rides on the read's own SETTINGS clause, not on the session: plain selects and inserts still run.
    await store.write([testRow(projectId, { at: Date.UTC(2026, 0, 6), event_name: 'after' })]);
    expect(Number((await store.select<{ n: string }>(`SELECT count() AS n FROM ${store.eventsTable}`, {}))[0]!.n)).toBe(2);
  });
});
