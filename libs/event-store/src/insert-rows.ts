import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import { type EventRow, LIMITS } from '@analytics/schema';
import type { RawInsert } from './client';

const monthOf = (ms: number) => new Date(ms).getUTCFullYear() * 12 + new Date(ms).getUTCMonth();
/**
 * Month partitions one INSERT may touch: every month of the accepted timestamps (1200), not ClickHouse's default 100,
 * over which the whole group-committed INSERT fails (a 500 for every request in it).
 */
export const MAX_PARTITIONS_PER_INSERT = monthOf(LIMITS.timestamp.max - 1) - monthOf(LIMITS.timestamp.min) + 1;
const PARTITIONS = { max_partitions_per_insert_block: String(MAX_PARTITIONS_PER_INSERT) };

export interface InsertTarget {
  client: ClickHouseClient;
  rawInsert?: RawInsert;
  table: string;
  columns: readonly (keyof EventRow)[];
  settings?: ClickHouseSettings;
  /** insert_seq of this INSERT (the embedded store's aggregate builder): sent as the EPHEMERAL insert_seq_in. */
  seq?: number;
}

/**
 * One row as an array in column order, then `seq` (insert_seq_in) when set: JSONCompactEachRow, which ClickHouse
 * parses about twice as fast as JSONEachRow.
 */
function compactValues(row: EventRow, columns: readonly (keyof EventRow)[], seq: number | undefined): unknown[] {
  const values = new Array<unknown>(columns.length + (seq === undefined ? 0 : 1));
  for (let i = 0; i < columns.length; i++) values[i] = row[columns[i]!];
  if (seq !== undefined) values[columns.length] = seq;
  return values;
}

/**
 * One INSERT of event rows in JSONCompactEachRow. The embedded engine gets the payload as one Buffer through its raw
 * insert (no stream, no SQL string built around the data); a server gets the same format through the client.
 */
export async function insertEventRows(target: InsertTarget, rows: readonly EventRow[]): Promise<void> {
  const { client, rawInsert, table, columns, settings, seq } = target;
  const names: readonly string[] = seq === undefined ? columns : [...columns, 'insert_seq_in'];
  if (rawInsert) {
    let text = '';
    for (const row of rows) text += `${JSON.stringify(compactValues(row, columns, seq))}\n`;
    await rawInsert({ table, values: Buffer.from(text), format: 'JSONCompactEachRow', columns: names, settings: PARTITIONS });
    return;
  }
  await client.insert({
    table,
    values: rows.map((row) => compactValues(row, columns, seq)),
    format: 'JSONCompactEachRow',
    columns: names as unknown as [string, ...string[]],
    clickhouse_settings: { ...PARTITIONS, ...settings },
  });
}
