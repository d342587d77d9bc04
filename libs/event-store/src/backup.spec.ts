import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { EventStore } from './event-store';
import { testRow } from './test-support/test-rows';
import { useTestStore } from './test-support/test-store';

// EventStore.backup: ClickHouse's own BACKUP in chDB, at one moment of the store (no INSERT in flight, the aggregates
// caught up, the builder idle). The restore side is apps/standalone's backup.spec (npm run backup / restore).
let store: EventStore;
let dir: string;
useTestStore(
  (opened) => {
    ({ store, dir } = opened);
  },
  { aggregateIntervalMs: 60_000 },
);

const rows = (p: string, n: number, name: string) => Array.from({ length: n }, () => testRow(p, { at: Date.UTC(2026, 5, 1), event_name: name }));
const countOf = async (sql: string, p: string) => Number((await store.select<{ n: string }>(sql, { p }))[0]!.n);

describe('EventStore.backup', () => {
  it('writes BACKUP DATABASE under DATA_DIR/clickhouse/backups, with the aggregates caught up to every acknowledged event', async () => {
    const p = randomUUID();
    await store.insertRows(rows(p, 25, 'before'));
    // Not built yet: the builder ticks a minute apart.
    expect(store.aggregateLagSeconds(Date.now() + 10)).toBeGreaterThan(0);
    const written = await store.backup('b-one');
    expect(written).toBe(join(dir, 'backups', 'b-one'));
    expect(existsSync(join(written, '.backup'))).toBe(true);
    expect(store.aggregateLagSeconds()).toBe(0);
    const rollup = await countOf(`SELECT toUInt64(sum(events)) AS n FROM ${store.db}.daily_rollup WHERE project_id = {p:UUID}`, p);
    expect(rollup).toBe(25);
  });

  it('holds INSERTs that start while it runs until it is over', async () => {
    const p = randomUUID();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let insideAt = 0;
    const quiesced = (store as unknown as { writes: { quiesced<T>(fn: () => Promise<T>): Promise<T> } }).writes.quiesced(async () => {
      insideAt = Date.now();
      await gate;
    });
    while (insideAt === 0) await new Promise((r) => setTimeout(r, 5));
    let writtenAt = 0;
    const write = store.insertRows(rows(p, 5, 'held')).then(() => (writtenAt = Date.now()));
    await new Promise((r) => setTimeout(r, 100));
    expect(writtenAt).toBe(0);
    expect(await countOf(`SELECT count() AS n FROM ${store.db}.events WHERE project_id = {p:UUID}`, p)).toBe(0);
    const releasedAt = Date.now();
    release();
    await quiesced;
    await write;
    expect(writtenAt).toBeGreaterThanOrEqual(releasedAt);
    expect(await countOf(`SELECT count() AS n FROM ${store.db}.events WHERE project_id = {p:UUID}`, p)).toBe(5);
  });

  it('refuses a name that is not a plain file name (the BACKUP destination is a literal)', async () => {
    await expect(store.backup("x') TO File('y")).rejects.toThrow(/letters, digits/);
    await expect(store.backup('../escape')).rejects.toThrow(/letters, digits/);
  });
});
