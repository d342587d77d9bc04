import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { seedPgliteDir } from '@analytics/testing';

export const ROOT = resolve(__dirname, '../../../..');
export const ADMIN_TOKEN = 'rel-admin-token-7f3a9c2e5b1d4f6a8c0e2b4d6f8a0c2e';
export const INTERNAL_SECRET = 'rel-internal-secret-1a2b3c4d5e6f7a8b9c0d';
export const IP_HASH_SECRET = 'rel-ip-hash-secret-0f9e8d7c6b5a4f3e2d1c';
export const ORIGIN = 'https://shop.example.com';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Server {
  base: string;
  port: number;
  dataDir: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr. */
  log(): string;
  /** SIGTERM (graceful: drain, flush, close); resolves with the exit code. */
  stop(): Promise<number | null>;
  /** kill -9: no drain, no flush, no close. */
  kill9(): Promise<void>;
  /** stop(), then remove DATA_DIR. */
  dispose(): Promise<void>;
}

export interface StartOptions {
  dataDir?: string;
  env?: Record<string, string>;
  /**
   * A new key store made by initdb, as on a first start, rather than copied from the template: for the tests that
   * bound memory against the idle state, whose bounds were set against what a first start leaves resident (the same
   * peak reads ~60 MiB higher over a copied store's lower idle).
   */
  initdb?: boolean;
}

/**
 * The built standalone server (dist/apps/standalone/main.js, what `npm start` execs) on a port the kernel picks
 * (PORT=0), read from its `listening` log line: a port picked here and handed over could be taken meanwhile.
 */
export async function startServer(options: StartOptions = {}): Promise<Server> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'rel-data-'));
  // A new server's key store starts from a copy of initdb's output (3 s less per server; what initdb itself does is
  // covered where a test passes its own dataDir, and by npm start's tests).
  if (!options.dataDir && !options.initdb && !options.env?.DATABASE_URL) await seedPgliteDir(join(dataDir, 'postgres'));
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: '0',
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    INTERNAL_SECRET,
    IP_HASH_SECRET,
    TRUST_PROXY: 'loopback',
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    NODE_OPTIONS: '',
    ...options.env,
  };
  for (const name of ['CLICKHOUSE_URL', 'DATABASE_URL', 'REDIS_URL']) if (!options.env?.[name]) delete env[name];
  const child = spawn(process.execPath, [join(ROOT, 'dist/apps/standalone/main.js')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (d) => (log += d));
  child.stderr!.on('data', (d) => (log += d));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const listeningPort = () => {
    // Whole lines only (the last may still be arriving).
    for (const line of log.split('\n').slice(0, -1)) if (line.includes('"msg":"listening"')) return (JSON.parse(line) as { port: number }).port;
    return undefined;
  };
  const deadline = Date.now() + 60_000;
  let port: number | undefined;
  let up = false;
  while (!up && Date.now() < deadline && !exited()) {
    port ??= listeningPort();
    up = port !== undefined && (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false));
    if (!up) await sleep(100);
  }
  if (!up || port === undefined) {
    child.kill('SIGKILL');
    throw new Error(`server did not start:\n${log}`);
  }
  const base = `http://127.0.0.1:${port}`;
  const waitExit = async (ms: number) => {
    const t = Date.now();
    while (!exited() && Date.now() - t < ms) await sleep(50);
  };
  const stop = async () => {
    if (!exited()) {
      child.kill('SIGTERM');
      await waitExit(30_000);
      if (!exited()) child.kill('SIGKILL');
      await waitExit(5_000);
    }
    return child.exitCode;
  };
  return {
    base,
    port,
    dataDir,
    child,
    log: () => log,
    stop,
    async kill9() {
      child.kill('SIGKILL');
      await waitExit(10_000);
    },
    async dispose() {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Response<T = Record<string, unknown>> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

/** One HTTP call; `body` objects are sent as JSON, strings and buffers as they are. */
export async function call<T = Record<string, unknown>>(
  base: string,
  method: string,
  path: string,
  { key, body, headers = {} }: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Response<T>> {
  const h: Record<string, string> = { ...headers };
  if (key !== undefined) h.authorization = `Bearer ${key}`;
  let payload: string | Buffer | undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) payload = body;
  else if (body !== undefined) payload = JSON.stringify(body);
  if (payload !== undefined && !Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) h['content-type'] = 'application/json';
  // Bounded: a hang shows as a failure naming the request, not as a test timeout.
  const res = await fetch(base + path, { method, headers: h, body: payload, signal: AbortSignal.timeout(30_000) }).catch((e: unknown) => {
    throw new Error(`${method} ${path}: ${(e as Error).message}`, { cause: e });
  });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed as T, text, headers: res.headers };
}

export interface ProjectKeys {
  id: string;
  pk: string;
  sk: string;
  rk: string;
}

export async function createProject(base: string, name = 'rel', origins = [ORIGIN]): Promise<ProjectKeys> {
  const r = await call<{ project: { id: string }; keys: { pk: string; sk: string; rk: string } }>(base, 'POST', '/admin/projects', {
    key: ADMIN_TOKEN,
    body: { name, allowed_origins: origins },
  });
  if (r.status !== 201) throw new Error(`create project: ${r.status} ${r.text}`);
  return { id: r.body.project.id, ...r.body.keys };
}

export async function createKey(base: string, projectId: string, kind: string): Promise<string> {
  const r = await call<{ key: string }>(base, 'POST', `/admin/projects/${projectId}/keys`, { key: ADMIN_TOKEN, body: { kind } });
  if (r.status !== 201) throw new Error(`create key: ${r.status} ${r.text}`);
  return r.body.key;
}

// The embedded stores of a STOPPED server, read in a child process: chDB binds one data directory per process
// and PGlite holds its directory exclusively.
const CHDB_SCRIPT = `
const { Session } = require('chdb');
const s = new Session(process.argv[1]);
process.stdout.write(s.query(process.argv[2], 'JSONEachRow'));
s.close?.();`;

export function queryEvents<T = Record<string, unknown>>(dataDir: string, sql: string): T[] {
  const out = execFileSync(process.execPath, ['-e', CHDB_SCRIPT, join(dataDir, 'clickhouse'), sql], { cwd: ROOT, maxBuffer: 1 << 30, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  return out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as T);
}

const DUMP_SCRIPT = `
const { Session } = require('chdb');
const s = new Session(process.argv[1]);
const q = (sql) => s.query(sql, 'JSONEachRow').split('\\n').filter(Boolean).map((l) => JSON.parse(l));
const tables = q("SELECT database, name FROM system.tables WHERE database NOT IN ('system','INFORMATION_SCHEMA','information_schema') AND engine NOT IN ('MaterializedView','View')");
const out = {};
for (const t of tables) out[t.database + '.' + t.name] = s.query('SELECT * FROM \`' + t.database + '\`.\`' + t.name + '\`', 'TSVWithNames');
// Binary columns as hex too, so a raw address stored as bytes would show as well.
out['events.hex'] = s.query("SELECT hex(ip_hash) FROM analytics.events", 'TSV');
s.close?.();
process.stdout.write(JSON.stringify(out));`;

/** Every non-view table of every database of the event store, as text (harness.mjs's dumpStore). */
export function dumpEventStore(dataDir: string): Record<string, string> {
  const out = execFileSync(process.execPath, ['-e', DUMP_SCRIPT, join(dataDir, 'clickhouse')], { cwd: ROOT, maxBuffer: 1 << 30, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  return JSON.parse(out) as Record<string, string>;
}

const PGLITE_SCRIPT = `
(async () => {
  const { PGlite } = require('@electric-sql/pglite');
  const db = await PGlite.create(process.argv[1]);
  const { rows } = await db.query("SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog','information_schema') AND table_type = 'BASE TABLE'");
  const out = {};
  for (const t of rows) out[t.table_schema + '.' + t.table_name] = JSON.stringify((await db.query('SELECT * FROM "' + t.table_schema + '"."' + t.table_name + '"')).rows);
  await db.close();
  process.stdout.write(JSON.stringify(out));
})();`;

/** Every table of the embedded key store (PGlite), as JSON text. */
export function dumpKeyStore(dataDir: string): Record<string, string> {
  const out = execFileSync(process.execPath, ['-e', PGLITE_SCRIPT, join(dataDir, 'postgres')], { cwd: ROOT, maxBuffer: 1 << 30, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  return JSON.parse(out) as Record<string, string>;
}
