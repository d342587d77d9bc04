import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Started, startNode, stopProcess } from '@analytics/topology';
import { closeServer, listen, urlOf } from './test-service';
import { resolveSecrets } from './secrets';

// `npm run admin` (tools/admin-cli.mjs) is the operator CLI of this server: it reads the DATA_DIR/secrets.json
// that resolveSecrets writes. It runs here as an operator runs it, against a server that records every request.

const CLI = resolve(__dirname, '../../../tools/admin-cli.mjs');
const seen: Array<{ url: string; authorization: string | undefined }> = [];
let server: Server;
let dataDir: string;

beforeAll(async () => {
  server = await listen((req, res) => {
    seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"projects":[]}');
  });
});
afterAll(() => closeServer(server));
beforeEach(() => {
  seen.length = 0;
  dataDir = mkdtempSync(join(tmpdir(), 'admin-cli-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

/** Runs the CLI with DATA_DIR as its only possible token source (no --token, no ADMIN_TOKEN). */
async function runCli(...args: string[]): Promise<{ code: number | null; stderr: string }> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, DATA_DIR: dataDir };
  const child = spawn(process.execPath, [CLI, ...args, '--url', urlOf(server)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stderr };
}

describe('npm run admin without a usable admin token', () => {
  it('stops before any request with exit 2 when the server got ADMIN_TOKEN from its environment (not in secrets.json)', async () => {
    // What `ADMIN_TOKEN=… npm start` leaves on disk: the other secrets, generated, and no ADMIN_TOKEN.
    resolveSecrets(dataDir, { ADMIN_TOKEN: 'given-to-npm-start' });
    const { code, stderr } = await runCli('projects');
    expect(code).toBe(2);
    expect(stderr).toContain('--token');
    expect(stderr).toContain('ADMIN_TOKEN');
    expect(stderr).toContain(`${join(dataDir, 'secrets.json')}: no ADMIN_TOKEN in it`);
    expect(stderr).toContain('ADMIN_TOKEN=<token> npm run admin -- projects');
    expect(seen).toEqual([]);
  });

  it('stops before any request with exit 2 naming the missing secrets.json', async () => {
    const { code, stderr } = await runCli('create-project', '--name', 'shop');
    expect(code).toBe(2);
    expect(stderr).toContain(`${join(dataDir, 'secrets.json')}: file missing`);
    expect(stderr).toContain('--token <token>');
    expect(seen).toEqual([]);
  });

  it('stops before any request with exit 2 when secrets.json is not JSON', async () => {
    writeFileSync(join(dataDir, 'secrets.json'), '{"ADMIN_TOKEN":');
    const { code, stderr } = await runCli('projects');
    expect(code).toBe(2);
    expect(stderr).toContain(`${join(dataDir, 'secrets.json')}: unreadable`);
    expect(seen).toEqual([]);
  });

  it('sends the token npm start generated into secrets.json (the recording server sees requests)', async () => {
    const { secrets } = resolveSecrets(dataDir, {});
    const { code } = await runCli('projects');
    expect(code).toBe(0);
    expect(seen).toEqual([{ url: '/admin/projects', authorization: `Bearer ${secrets.ADMIN_TOKEN}` }]);
  });
});

// The tools find `npm start` from the DATA_DIR it was started with: the built entry point (what `npm start` runs) on a
// temp DATA_DIR and a free port, the real CLIs (admin, import) as child processes given no --url and no PORT.
describe('npm run admin and npm run import find the running server', () => {
  const ROOT = resolve(__dirname, '../../..');
  const IMPORT = resolve(ROOT, 'tools/import.mjs');
  let work: string;
  let serverDir: string;
  let started: Started | undefined;
  let note: { url: string; pid: number; port: number; started_at: string };

  beforeAll(async () => {
    execFileSync(process.execPath, ['tools/build.mjs'], { cwd: ROOT, stdio: 'ignore' });
    work = mkdtempSync(join(tmpdir(), 'cli-server-'));
    serverDir = join(work, 'data');
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', PORT: '0', LOG_LEVEL: 'info', LOG_FORMAT: 'json', DATA_DIR: serverDir };
    for (const k of ['ADMIN_TOKEN', 'IP_HASH_SECRET', 'INTERNAL_SECRET', 'CLICKHOUSE_URL', 'DATABASE_URL', 'REDIS_URL', 'CLICKHOUSE_DATABASE']) delete env[k];
    started = await startNode('standalone', ['dist/apps/standalone/main.js'], { cwd: ROOT, env });
    const file = join(serverDir, 'server.json');
    for (let i = 0; i < 100 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 50));
    note = JSON.parse(readFileSync(file, 'utf8'));
  }, 240_000);
  afterAll(async () => {
    await stopProcess(started?.proc);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** A tool run with only `env` (no --url unless given): its exit code, output and time taken. */
  async function tool(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
    const t0 = Date.now();
    const child = spawn(process.execPath, [script, ...args], { cwd: work, env: { PATH: process.env.PATH, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.end();
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, stdout, stderr, ms: Date.now() - t0 };
  }
  const admin = (args: string[], env: NodeJS.ProcessEnv = { DATA_DIR: serverDir }) => tool(CLI, args, env);

  it('npm start notes its address in DATA_DIR/server.json; admin finds it from DATA_DIR or --data-dir alone', async () => {
    expect(note).toEqual({ url: `http://127.0.0.1:${started!.port}`, pid: started!.proc.pid, port: started!.port, started_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
    for (const [args, env] of [[['projects'], { DATA_DIR: serverDir }], [['projects', '--data-dir', serverDir], {}]] as const) {
      const run = await admin([...args], env);
      expect([run.code, run.stderr]).toEqual([0, '']);
      expect(JSON.parse(run.stdout)).toEqual({ projects: [] });
    }
  });

  it('update-project: --add-origin and --remove-origin change one entry; --origin replaces the list and says what it replaced', async () => {
    const created = await admin(['create-project', '--name', 'origins', '--origin', 'https://a.example', '--origin', 'https://b.example']);
    expect(created.code).toBe(0);
    const id = JSON.parse(created.stdout).project.id as string;
    const origins = async () => JSON.parse((await admin(['get-project', id])).stdout).project.allowed_origins as string[];

    const added = await admin(['update-project', id, '--add-origin', 'https://c.example']);
    expect(added.code).toBe(0);
    expect(added.stderr).toContain('allowed_origins was https://a.example https://b.example; now https://a.example https://b.example https://c.example');
    expect(await origins()).toEqual(['https://a.example', 'https://b.example', 'https://c.example']);

    // As the server keeps it: lowercase, no trailing slash.
    const removed = await admin(['update-project', id, '--remove-origin', 'https://A.example/', '--remove-origin', 'https://nope.example']);
    expect(removed.code).toBe(0);
    expect(removed.stderr).toContain('https://nope.example is not in allowed_origins');
    expect(await origins()).toEqual(['https://b.example', 'https://c.example']);

    const replaced = await admin(['update-project', id, '--origin', 'https://z.example']);
    expect(replaced.code).toBe(0);
    expect(replaced.stderr).toContain('allowed_origins replaced: was https://b.example https://c.example; now https://z.example');
    expect(await origins()).toEqual(['https://z.example']);

    const both = await admin(['update-project', id, '--origin', 'https://y.example', '--add-origin', 'https://x.example']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--origin replaces the whole list');
    expect(await origins()).toEqual(['https://z.example']);
  });

  it('import takes the key from ANALYTICS_KEY (never shown), warns when it comes from --key, and refuses to run without one', async () => {
    const created = JSON.parse((await admin(['create-project', '--name', 'imported'])).stdout) as { keys: { sk: string; rk: string } };
    const file = join(work, 'events.ndjson');
    const lines = (tag: string) => ['a', 'b', 'c'].map((n, i) => JSON.stringify({ event_name: `${tag}_${n}`, timestamp: `2026-03-02T00:00:0${i}.000Z`, anonymous_id: 'x' })).join('\n');
    writeFileSync(file, `${lines('env')}\n`);
    const fromEnv = await tool(IMPORT, [file], { DATA_DIR: serverDir, ANALYTICS_KEY: created.keys.sk });
    // The one line on stderr says the enrichment is computed again (the sk_ route), nothing else.
    expect([fromEnv.code, fromEnv.stderr.trim().split('\n')]).toEqual([0, [expect.stringMatching(/^import: through POST \/v1\/batch with an sk_ key: .* computed again/)]]);
    expect(JSON.parse(fromEnv.stdout)).toMatchObject({ ok: true, events_imported: 3 });
    expect(fromEnv.stdout + fromEnv.stderr).not.toContain(created.keys.sk);

    writeFileSync(file, `${lines('flag')}\n`);
    const fromFlag = await tool(IMPORT, ['--key', created.keys.sk, file], { DATA_DIR: serverDir });
    expect(fromFlag.code).toBe(0);
    expect(fromFlag.stderr).toMatch(/warning: --key shows the key in process lists and on npm's echo line.*ANALYTICS_KEY/);

    const none = await tool(IMPORT, [file], { DATA_DIR: serverDir });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no key: set ANALYTICS_KEY=<sk_key>');

    const res = await fetch(`${note.url}/v1/query?from=2026-03-01&to=2026-03-03&limit=100`, { headers: { authorization: `Bearer ${created.keys.rk}` } });
    const names = ((await res.json()) as { rows: Array<{ event_name: string }> }).rows.map((r) => r.event_name).sort();
    expect(names).toEqual(['env_a', 'env_b', 'env_c', 'flag_a', 'flag_b', 'flag_c']);
  });

  it('a server that does not answer is named, with how it was found, within seconds (a live note, a stale note, PORT)', async () => {
    const closed = await listen(() => undefined);
    const port = (closed.address() as AddressInfo).port;
    await closeServer(closed);
    const noted = join(work, 'noted');
    mkdirSync(noted);
    // A note of a running process (this one) whose port nothing listens on.
    writeFileSync(join(noted, 'server.json'), JSON.stringify({ url: `http://127.0.0.1:${port}`, pid: process.pid, port, started_at: '2026-11-28T00:00:00.000Z' }));
    writeFileSync(join(noted, 'secrets.json'), JSON.stringify({ ADMIN_TOKEN: 'x' }));
    const viaNote = await admin(['projects'], { DATA_DIR: noted });
    expect(viaNote.code).toBe(1);
    expect(viaNote.stderr).toContain(`admin: no answer from http://127.0.0.1:${port} (ECONNREFUSED, tried 4 times)`);
    expect(viaNote.stderr).toContain(`found through: ${join(noted, 'server.json')} (noted by npm start, pid ${process.pid}`);
    expect(viaNote.ms).toBeLessThan(10_000);

    const file = join(work, 'unreachable.ndjson');
    writeFileSync(file, `${JSON.stringify({ event_name: 'x' })}\n`);
    const imported = await tool(IMPORT, [file], { DATA_DIR: noted, ANALYTICS_KEY: 'sk_live_abc_def' });
    expect(imported.code).toBe(1);
    expect(imported.stderr).toContain(`import: no answer from http://127.0.0.1:${port}`);
    expect(imported.stderr).toContain(`found through: ${join(noted, 'server.json')}`);
    expect(imported.ms).toBeLessThan(10_000);

    // A note left by a server that died (its pid no longer runs) is passed over, and said so; PORT comes next.
    const dead = spawn(process.execPath, ['-e', '0']);
    await once(dead, 'close');
    writeFileSync(join(noted, 'server.json'), JSON.stringify({ url: note.url, pid: dead.pid, port: note.port, started_at: note.started_at }));
    const stale = await admin(['projects'], { DATA_DIR: noted, PORT: String(port) });
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain(`admin: no answer from http://localhost:${port}`);
    expect(stale.stderr).toContain(`found through: PORT=${port}`);
    expect(stale.stderr).toContain(`passed over: ${join(noted, 'server.json')} names ${note.url}, but its server (pid ${dead.pid}) is not running`);
  });

  it('a clean shutdown removes the note', async () => {
    expect(existsSync(join(serverDir, 'server.json'))).toBe(true);
    await stopProcess(started?.proc);
    expect(existsSync(join(serverDir, 'server.json'))).toBe(false);
  });
});
