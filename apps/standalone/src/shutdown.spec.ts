import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Started, startNode } from '@analytics/topology';

// SIGTERM with an open GET /v1/live stream: the built entry point (what `npm start` runs) ends the stream and exits
// at once. The stream used to keep the server's close waiting until the 20 s force exit (exit code 1).
const ROOT = resolve(__dirname, '../../..');

describe('npm start stopping', () => {
  let dataDir: string;
  let started: Started | undefined;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'shutdown-'));
  });
  afterAll(() => {
    if (started?.proc.exitCode === null) started.proc.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('ends open live streams at SIGTERM and exits 0 within a few seconds, not at the 20 s force exit', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', PORT: '0', LOG_LEVEL: 'info', LOG_FORMAT: 'json', DATA_DIR: dataDir };
    for (const k of ['ADMIN_TOKEN', 'IP_HASH_SECRET', 'INTERNAL_SECRET', 'CLICKHOUSE_URL', 'DATABASE_URL', 'REDIS_URL', 'CLICKHOUSE_DATABASE']) delete env[k];
    started = await startNode('standalone', ['dist/apps/standalone/main.js'], { cwd: ROOT, env });
    const base = `http://127.0.0.1:${started.port}`;
    const admin = JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8')).ADMIN_TOKEN as string;
    const created = await fetch(`${base}/admin/projects`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'shutdown' }) });
    expect(created.status).toBe(201);
    const { keys } = (await created.json()) as { keys: { rk: string } };

    // The stream is open once its first message arrived; it ends (the response completes) when the server stops.
    let text = '';
    const streamEnded = new Promise<void>((done, fail) => {
      const req = request(`${base}/v1/live`, { headers: { authorization: `Bearer ${keys.rk}` } }, (res) => {
        expect(res.statusCode).toBe(200);
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => done());
        res.on('error', fail);
      });
      req.on('error', fail);
      req.end();
    });
    for (const until = Date.now() + 20_000; !/^data: \{/m.test(text) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
    expect(text).toMatch(/^data: \{/m);

    const exited = new Promise<number | null>((done) => started!.proc.once('exit', (code) => done(code)));
    const t0 = Date.now();
    started.proc.kill('SIGTERM');
    await streamEnded;
    const code = await exited;
    expect({ code, ms: Date.now() - t0 < 10_000 }).toEqual({ code: 0, ms: true });
  });
});
