import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { Session } from 'chdb';

/**
 * TEST HARNESS, never shipped: ClickHouse's HTTP interface served over ONE embedded chDB session, so several
 * processes (the deployables) can share one event store where no ClickHouse server can be installed. It covers what
 * @clickhouse/client sends: the query in the body or the `query` URL parameter (then the body is data appended on a
 * new line), `param_*` bound server-side, `database`, settings as URL parameters, `default_format`, gzip both ways,
 * `X-ClickHouse-Summary`, and errors as a server answers them (status per exception type, the
 * `X-ClickHouse-Exception-Code` header, `Code: N. DB::Exception: ... (TYPE) (version V)` body). Production runs a
 * ClickHouse server.
 */

const gunzipAsync = promisify(gunzip);
const gzipAsync = promisify(gzip);

/** URL parameters the HTTP layer consumes itself; every other one is a setting of the query. */
const HTTP_PARAMS = new Set(['query', 'query_id', 'database', 'default_format', 'session_id', 'session_timeout', 'session_check', 'user', 'password', 'role', 'compress', 'decompress', 'quota_key', 'buffer_size']);
/** Settings of the server's HTTP layer that the embedded engine does not know (it would answer UNKNOWN_SETTING). */
const HTTP_SETTINGS = new Set([
  'enable_http_compression', 'http_zlib_compression_level', 'wait_end_of_query', 'send_progress_in_http_headers', 'http_headers_progress_interval_ms',
  'http_response_buffer_size', 'http_send_progress_interval_ms', 'http_response_compression_method', 'http_native_compression_disable_checksumming_on_decompress',
  'cancel_http_readonly_queries_on_client_close', 'output_format_enable_streaming', 'add_http_cors_header',
]);
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Exception type -> HTTP status, as ClickHouse's src/Server/HTTP/exceptionCodeToHTTPStatus.cpp maps them. */
const STATUS_BY_TYPE: Record<string, number> = {
  REQUIRED_PASSWORD: 401,
  ...Object.fromEntries(['UNKNOWN_USER', 'WRONG_PASSWORD', 'AUTHENTICATION_FAILED', 'SET_NON_GRANTED_ROLE', 'ACCESS_DENIED'].map((t) => [t, 403])),
  ...Object.fromEntries(
    [
      'BAD_ARGUMENTS', 'CANNOT_COMPILE_REGEXP', 'CANNOT_PARSE_TEXT', 'CANNOT_PARSE_ESCAPE_SEQUENCE', 'CANNOT_PARSE_QUOTED_STRING', 'CANNOT_PARSE_DATE',
      'CANNOT_PARSE_DATETIME', 'CANNOT_PARSE_NUMBER', 'CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING', 'CANNOT_PARSE_IPV4', 'CANNOT_PARSE_IPV6',
      'CANNOT_PARSE_INPUT_ASSERTION_FAILED', 'CANNOT_PARSE_UUID', 'DUPLICATE_COLUMN', 'ILLEGAL_COLUMN', 'UNKNOWN_ELEMENT_IN_AST', 'UNKNOWN_TYPE_OF_AST_NODE',
      'THERE_IS_NO_COLUMN', 'TOO_DEEP_AST', 'TOO_BIG_AST', 'UNEXPECTED_AST_STRUCTURE', 'SYNTAX_ERROR', 'INCORRECT_DATA', 'TYPE_MISMATCH',
      'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
    ].map((t) => [t, 400]),
  ),
  ...Object.fromEntries(
    [
      'UNKNOWN_TABLE', 'UNKNOWN_FUNCTION', 'UNKNOWN_IDENTIFIER', 'UNKNOWN_TYPE', 'UNKNOWN_STORAGE', 'UNKNOWN_DATABASE', 'UNKNOWN_SETTING',
      'UNKNOWN_DIRECTION_OF_SORTING', 'UNKNOWN_AGGREGATE_FUNCTION', 'UNKNOWN_FORMAT', 'UNKNOWN_DATABASE_ENGINE', 'UNKNOWN_TYPE_OF_QUERY', 'UNKNOWN_ROLE',
    ].map((t) => [t, 404]),
  ),
  QUERY_IS_TOO_LARGE: 413,
  NOT_IMPLEMENTED: 501,
  SOCKET_TIMEOUT: 503,
  CANNOT_OPEN_FILE: 503,
  CANNOT_SCHEDULE_TASK: 503,
  HTTP_LENGTH_REQUIRED: 411,
  TIMEOUT_EXCEEDED: 408,
  UNSUPPORTED_MEDIA_TYPE: 415,
};

/** A ClickHouse exception as the server reports it. */
class ServerException extends Error {
  constructor(
    readonly code: number,
    readonly type: string,
    message: string,
  ) {
    super(`Code: ${code}. DB::Exception: ${message}. (${type})`);
  }
}

/** chDB's error text already is the server's `Code: N. DB::Exception: ... (TYPE)`; anything else is an internal error. */
function asException(e: unknown): ServerException | Error {
  const text = e instanceof Error ? e.message : String(e);
  const m = /^Code: (\d+)\. DB::Exception: ([\s\S]*)\. \(([A-Z0-9_]+)\)\s*$/.exec(text.trim());
  return m ? new ServerException(Number(m[1]), m[3]!, m[2]!) : new Error(text);
}

/** A string as a SQL literal whose value is exactly the given text (what the server receives as a parameter's text). */
const literal = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const encoding = req.headers['content-encoding'];
  if (!encoding) return body;
  if (encoding === 'gzip') return gunzipAsync(body);
  throw new ServerException(1, 'UNKNOWN_EXCEPTION', `Unknown HTTP content encoding '${encoding}'`);
}

/** The statement as ClickHouse composes it: the `query` URL parameter, then the body on a new line (data of an INSERT). */
function statementOf(url: URL, body: Buffer): string {
  const param = url.searchParams.get('query');
  if (param === null) return body.toString('utf8');
  return body.length > 0 ? `${param}\n${body.toString('utf8')}` : param;
}

interface Prepared {
  sql: string;
  /** Settings this request changed, reset afterwards: the session is shared by every request. */
  changed: string[];
  database: string;
  format: string;
}

function prepare(url: URL, statement: string): Prepared {
  const pre: string[] = [];
  const changed: string[] = [];
  const database = url.searchParams.get('database') || 'default';
  if (!IDENTIFIER.test(database)) throw new ServerException(81, 'UNKNOWN_DATABASE', `Database ${database} does not exist`);
  pre.push(`USE ${database}`);
  for (const [key, value] of url.searchParams) {
    if (key.startsWith('param_')) {
      if (!IDENTIFIER.test(key)) throw new ServerException(36, 'BAD_ARGUMENTS', `Invalid query parameter name '${key}'`);
      pre.push(`SET ${key} = ${literal(value)}`);
      continue;
    }
    if (HTTP_PARAMS.has(key) || HTTP_SETTINGS.has(key)) continue;
    if (!IDENTIFIER.test(key)) throw new ServerException(115, 'UNKNOWN_SETTING', `Unknown setting '${key}'`);
    pre.push(`SET ${key} = ${literal(value)}`);
    changed.push(key);
  }
  return { sql: `${pre.join('; ')}; ${statement}`, changed, database, format: url.searchParams.get('default_format') || 'TabSeparated' };
}

const INSERT = /^\s*INSERT\b[^\n]*\bFORMAT\s+\w+[ \t]*\n/i;

/** Rows of an INSERT's inline data (the line-per-row formats the project writes): chDB reports no written count. */
function insertedRows(statement: string): number | undefined {
  const m = INSERT.exec(statement);
  if (!m) return undefined;
  let rows = 0;
  for (const line of statement.slice(m[0].length).split('\n')) if (line.trim()) rows++;
  return rows;
}

export interface Harness {
  server: Server;
  /** Closes the HTTP server, then the chDB session. */
  close(): Promise<void>;
}

/**
 * The harness on one chDB session over `path`. Requests run one at a time: the session's current database and
 * settings are per session on the engine, so each request sets its own and resets them.
 */
export function createHarness(path: string): Harness {
  const session = new Session(path);
  const version = session.query('SELECT version()', 'TabSeparated').trim();
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => undefined);
    return run;
  };

  /** Settings the last request changed: reset at the start of the next one, in the same engine call as its own. */
  let dirty: string[] = [];
  async function run(url: URL, statement: string) {
    const prepared = prepare(url, statement);
    return serial(async () => {
      const reset = dirty.map((k) => `SET ${k} = DEFAULT; `).join('');
      dirty = prepared.changed;
      try {
        return { prepared, result: await session.queryAsync(`${reset}${prepared.sql}`, { format: prepared.format }) };
      } catch (e) {
        // chDB hands what a failed statement wrote to the session's next result (libs/event-store/src/client/chdb-serial.ts):
        // a statement of its own takes it before the next request's.
        await session.queryAsync('SELECT 1', { format: 'CSV' }).catch(() => undefined);
        throw asException(e);
      }
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://harness');
    const queryId = url.searchParams.get('query_id') || randomUUID();
    res.setHeader('X-ClickHouse-Query-Id', queryId);
    res.setHeader('X-ClickHouse-Server-Display-Name', 'clickhouse-harness');
    res.setHeader('X-ClickHouse-Timezone', 'UTC');
    if (url.pathname === '/ping') {
      res.setHeader('Content-Type', 'text/html; charset=UTF-8');
      res.end('Ok.\n');
      return;
    }
    if (url.pathname !== '/') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=UTF-8' }).end(`There is no handle ${url.pathname}\n`);
      return;
    }
    const statement = statementOf(url, req.method === 'POST' ? await readBody(req) : Buffer.alloc(0));
    if (!statement.trim()) throw new ServerException(62, 'SYNTAX_ERROR', 'Empty query');
    const { result } = await run(url, statement);
    const written = insertedRows(statement);
    const rows = String(result.rowsRead || 0);
    const bytes = String(result.bytesRead || 0);
    res.setHeader(
      'X-ClickHouse-Summary',
      JSON.stringify({
        read_rows: rows, read_bytes: bytes, written_rows: String(written ?? 0), written_bytes: written === undefined ? '0' : bytes, total_rows_to_read: '0',
        result_rows: written === undefined ? rows : '0', result_bytes: written === undefined ? bytes : '0', elapsed_ns: String(Math.round((result.elapsed ?? 0) * 1e9)),
      }),
    );
    res.setHeader('Content-Type', 'text/plain; charset=UTF-8');
    let out = Buffer.from(result.bytes());
    if (url.searchParams.get('enable_http_compression') === '1' && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      out = await gzipAsync(out);
      res.setHeader('Content-Encoding', 'gzip');
    }
    res.end(out);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      const ex = e instanceof ServerException ? e : asException(e);
      const code = ex instanceof ServerException ? ex.code : 1001;
      const type = ex instanceof ServerException ? ex.type : 'STD_EXCEPTION';
      const message = ex instanceof ServerException ? ex.message : `Code: 1001. DB::Exception: ${ex.message}. (STD_EXCEPTION)`;
      if (res.headersSent) return void res.destroy();
      res.removeHeader('Content-Encoding');
      res.writeHead(STATUS_BY_TYPE[type] ?? 500, { 'Content-Type': 'text/plain; charset=UTF-8', 'X-ClickHouse-Exception-Code': String(code) });
      res.end(`${message} (version ${version})\n`);
    });
  });
  return {
    server,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => {
          session.close();
          done();
        });
      }),
  };
}
