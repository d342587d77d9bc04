import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import type { EventRow } from '@analytics/schema';
import type { RawInsert } from '../../client/client';
import { MAX_PARTITIONS_PER_INSERT } from '../../primitives/lanes';
import type { InsertStamp } from './writer-slots';

const PARTITIONS = { max_partitions_per_insert_block: String(MAX_PARTITIONS_PER_INSERT) };

export interface InsertTarget {
  client: ClickHouseClient;
  rawInsert?: RawInsert;
  table: string;
  columns: readonly (keyof EventRow)[];
  settings?: ClickHouseSettings;
  /** insert_seq of this INSERT (the embedded store's aggregate builder): sent as the EPHEMERAL insert_seq_in. */
  seq?: number;
  /** A server's INSERT: its writer, seq and row count, sent as insert_seq_in, insert_writer_in and insert_rows_in. */
  stamp?: InsertStamp;
  /**
   * A cluster: the stamp goes to the ordinary columns insert_seq, insert_writer and insert_rows (a Distributed table
   * forwards no EPHEMERAL input to the shards; migration 012's clustered file).
   */
  stampColumns?: 'inputs' | 'stored';
}

/**
 * One row as an array in column order, then the INSERT's seq (and a server's writer and row count) when set: JSONCompactEachRow, which ClickHouse
 * parses about twice as fast as JSONEachRow.
 */
function compactValues(row: EventRow, columns: readonly (keyof EventRow)[], extra: readonly number[]): unknown[] {
  const values = new Array<unknown>(columns.length + extra.length);
  for (let i = 0; i < columns.length; i++) values[i] = row[columns[i]!];
  for (let i = 0; i < extra.length; i++) values[columns.length + i] = extra[i];
  return values;
}

/**
 * One INSERT of event rows in JSONCompactEachRow. The embedded engine gets the payload as one Buffer through its raw
 * insert (no stream, no SQL string built around the data); a server gets the same format through the client.
 */
export async function insertEventRows(target: InsertTarget, rows: readonly EventRow[]): Promise<void> {
  const { client, rawInsert, table, columns, settings, seq, stamp, stampColumns = 'inputs' } = target;
  const stampNames = stampColumns === 'stored' ? ['insert_seq', 'insert_writer', 'insert_rows'] : ['insert_seq_in', 'insert_writer_in', 'insert_rows_in'];
  const [names, extra]: [readonly string[], number[]] = stamp
    ? [[...columns, ...stampNames], [stamp.seq, stamp.writer, stamp.rows]]
    : seq === undefined
      ? [columns, []]
      : [[...columns, 'insert_seq_in'], [seq]];
  if (rawInsert) {
    let text = '';
    for (const row of rows) text += `${JSON.stringify(compactValues(row, columns, extra))}\n`;
    await rawInsert({ table, values: Buffer.from(text), format: 'JSONCompactEachRow', columns: names, settings: PARTITIONS });
    return;
  }
  await client.insert({
    table,
    values: rows.map((row) => compactValues(row, columns, extra)),
    format: 'JSONCompactEachRow',
    columns: names as unknown as [string, ...string[]],
    clickhouse_settings: { ...PARTITIONS, ...settings },
  });
}
