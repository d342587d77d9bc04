import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';

/** A SELECT whose output is streamed: its SQL, its bound values, and ClickHouse's output format of its bytes. */
export interface StreamedSelect {
  sql: string;
  params: Record<string, unknown>;
  format: 'JSONEachRow' | 'CSVWithNames' | 'Parquet';
}

/**
 * Runs an export's SELECT (its SQL, then `settings`: the SETTINGS clause) and yields the bytes of ClickHouse's own
 * output format as they are produced; the consumer pulls (backpressure), and `signal` stops it.
 */
export type SelectStream = (stmt: StreamedSelect, settings: string, signal: AbortSignal) => AsyncIterable<Uint8Array>;

/** A server: the HTTP response's own byte stream (`exec`), in the format the statement names. */
export function serverSelectStream(client: ClickHouseClient): SelectStream {
  return async function* (stmt, settings, signal) {
    const { stream } = await client.exec({ query: `${stmt.sql} ${settings} FORMAT ${stmt.format}`, query_params: stmt.params, abort_signal: signal });
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) yield chunk;
    } finally {
      stream.destroy();
    }
  };
}

type ChdbSession = InstanceType<typeof import('chdb').Session>;

const PARQUET_ROW_GROUPS = 'output_format_parquet_row_group_size = 65536, output_format_parquet_row_group_size_bytes = 33554432';

/** Only our own temp directories are written into SQL (INTO OUTFILE): a path of these characters, checked. */
const SAFE_PATH = /^[\w/.-]+$/;

/**
 * The embedded engine. Its client connection hands a result over as one buffer, so an export runs on a chDB session of
 * its own (one stream per session; the reads' connection is not held) and reads the engine's chunked output
 * (queryStreamBind: one block of rows a chunk, fetched when the consumer asks). Each chunk is a complete output of its
 * block: JSONEachRow chunks concatenate as they are, CSVWithNames repeats its header in each (sent once), and each
 * Parquet chunk would be a file of its own, so Parquet is written by the engine to a temporary file (INTO OUTFILE,
 * row group by row group: memory stays bounded) which is then streamed and deleted.
 */
export function chdbSelectStream(path: string): SelectStream {
  const { Session } = require('chdb') as typeof import('chdb');
  return async function* (stmt, settings, signal) {
    const session: ChdbSession = new Session(path);
    try {
      if (stmt.format === 'Parquet') yield* parquetViaFile(session, stmt, settings, signal);
      else yield* chunked(session, stmt, settings, signal);
    } finally {
      session.close();
    }
  };
}

async function* chunked(session: ChdbSession, stmt: StreamedSelect, settings: string, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  const stream = session.queryStreamBind(`${stmt.sql} ${settings}`, stmt.params, { format: stmt.format, signal });
  let header: Buffer | undefined;
  try {
    for await (const chunk of stream) {
      // The chunk's bytes are already a JavaScript buffer (the native fetch copied them out): viewed, not copied again.
      const raw = chunk.raw();
      let bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
      if (stmt.format === 'CSVWithNames') {
        if (header === undefined) header = bytes.subarray(0, bytes.indexOf(0x0a) + 1);
        else if (bytes.subarray(0, header.length).equals(header)) bytes = bytes.subarray(header.length);
      }
      if (bytes.length > 0) yield bytes;
    }
  } catch (e) {
    throw withEngineCode(e);
  } finally {
    if (!stream.closed) stream.cancel();
  }
}

/**
 * chDB's stream errors carry the engine's message (`Code: 159. DB::Exception: ...`) but drop the code its other errors
 * carry (which the read limits map to 400 query_too_expensive): read from the message as chDB reads it for those.
 */
function withEngineCode(e: unknown): unknown {
  if (!(e instanceof Error) || typeof (e as { clickhouseCode?: unknown }).clickhouseCode === 'number') return e;
  const code = /\bCode: (\d+)\./.exec(e.message)?.[1];
  return code === undefined ? e : Object.assign(e, { clickhouseCode: Number(code) });
}

async function* parquetViaFile(session: ChdbSession, stmt: StreamedSelect, settings: string, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  const dir = mkdtempSync(join(tmpdir(), 'export-'));
  try {
    const file = join(dir, 'export.parquet');
    if (!SAFE_PATH.test(file)) throw new Error(`export: temporary path ${file} has characters it may not have in SQL`);
    // Row groups of a bounded size: the writer holds one in memory (by default up to a million rows).
    await session.queryBindAsync(`${stmt.sql} INTO OUTFILE '${file}' FORMAT Parquet ${settings}, ${PARQUET_ROW_GROUPS}`, stmt.params, { signal });
    signal.throwIfAborted();
    yield* createReadStream(file, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
