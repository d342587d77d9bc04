import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Started, startNode, stopProcess } from '@analytics/topology';

// `npm run backup` while `npm start` serves and ingests, `npm run restore` into a new DATA_DIR, and `npm start` on it:
// the built entry point (dist/apps/standalone/main.js, what `npm start` runs) as a process on a temp DATA_DIR (secrets
// generated there), the real CLI tools as child processes.
const ROOT = resolve(__dirname, '../../..');
// Whole UTC days: answered from the aggregates. One second past midnight: counted from the raw events.
const RANGE = { from: '2020-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' };
const RAW_RANGE = { from: '2020-01-01T00:00:01Z', to: '2100-01-01T00:00:00Z' };
const UNLIMITED = { RATE_LIMIT_TRACK_PER_S: '100000', RATE_LIMIT_TRACK_BURST: '100000', RATE_LIMIT_BATCH_PER_S: '100000', RATE_LIMIT_BATCH_BURST: '100000' };

interface Running {
  started: Started;
  url: string;
  adminToken: string;
}

async function start(dataDir: string): Promise<Running> {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', PORT: '0', LOG_LEVEL: 'info', LOG_FORMAT: 'json', DATA_DIR: dataDir, ...UNLIMITED };
  for (const k of ['ADMIN_TOKEN', 'IP_HASH_SECRET', 'INTERNAL_SECRET', 'CLICKHOUSE_URL', 'DATABASE_URL', 'REDIS_URL', 'CLICKHOUSE_DATABASE']) delete env[k];
  const started = await startNode('standalone', ['dist/apps/standalone/main.js'], { cwd: ROOT, env });
  const adminToken = JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8')).ADMIN_TOKEN as string;
  return { started, url: `http://127.0.0.1:${started.port}`, adminToken };
}

const call = async (r: Running, method: string, path: string, key: string, body?: unknown) => {
  const res = await fetch(`${r.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> };
};

const runTool = (args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => done({ code: code ?? 1, stdout, stderr }));
  });

type Row = { event_name: string; value: number };
/** Events by name: from the aggregates (whole days) or from the raw events. */
const statsOf = async (r: Running, rk: string, range: typeof RANGE) => {
  const res = await call(r, 'GET', `/v1/stats?${new URLSearchParams({ ...range, group_by: 'event_name' })}`, rk);
  expect(res.status).toBe(200);
  return Object.fromEntries((res.body['rows'] as Row[]).map((row) => [row.event_name, row.value])) as Record<string, number>;
};
const total = (byName: Record<string, number>) => Object.values(byName).reduce((a, b) => a + b, 0);

beforeAll(() => {
  execFileSync(process.execPath, ['tools/build.mjs'], { cwd: ROOT, stdio: 'ignore' });
}, 180_000);

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'analytics-backup-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm run backup / npm run restore', () => {
  it('backs up while npm start ingests; npm start on the restored DATA_DIR answers with the same keys, every event acknowledged before the backup, none after it, and aggregates equal to its events', async () => {
    const original = await start(join(work, 'data'));
    let restored: Running | undefined;
    try {
      const admin = original.adminToken;
      const created = await call(original, 'POST', '/admin/projects', admin, { name: 'backed-up' });
      expect(created.status).toBe(201);
      const keys = created.body['keys'] as { sk: string; rk: string; pk: string };
      const events = (name: string, n: number) => Array.from({ length: n }, (_, i) => ({ event: name, anonymous_id: `a-${i % 7}`, url: `https://shop.example.com/p/${i % 3}?utm_source=news` }));
      expect((await call(original, 'POST', '/v1/batch', keys.sk, { events: events('before', 200) })).status).toBe(202);

      // Ingest continuously while the backup runs; remember which batches were acknowledged before it started and after it returned.
      let ingesting = true;
      const acked: Array<{ at: number; n: number }> = [];
      const ingest = (async () => {
        while (ingesting) {
          const res = await call(original, 'POST', '/v1/batch', keys.sk, { events: events('during', 3) });
          expect(res.status).toBe(202);
          acked.push({ at: Date.now(), n: 3 });
        }
      })();
      // Some batches acknowledged before the backup starts, however loaded the machine is.
      for (const until = Date.now() + 30_000; acked.length < 2 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
      const backupDir = join(work, 'backup');
      const startedAt = Date.now();
      const backup = await runTool(['tools/backup.mjs', backupDir, '--url', original.url, `--token=${admin}`]);
      const returnedAt = Date.now();
      // And some after it returned.
      for (const until = Date.now() + 30_000; !acked.some((a) => a.at > returnedAt) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
      ingesting = false;
      await ingest;
      expect(backup.stderr).toBe('');
      expect(backup.code).toBe(0);
      expect(backup.stdout).toContain(`backup written to ${backupDir}`);
      const ackedBefore = acked.filter((a) => a.at < startedAt).reduce((n, a) => n + a.n, 0);
      const ackedAfter = acked.filter((a) => a.at > returnedAt).reduce((n, a) => n + a.n, 0);
      expect(ackedBefore).toBeGreaterThan(0);
      expect(ackedAfter).toBeGreaterThan(0);

      const manifest = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8'));
      expect(manifest).toMatchObject({ format: 1, clickhouse_database: 'analytics', secrets: 'secrets.json', event_store: { engine: 'chdb' }, key_store: { engine: 'pglite' } });
      expect(manifest.node_version).toMatch(/^v\d+\./);
      expect(manifest.event_store.migrations.length).toBeGreaterThan(0);
      expect(manifest.key_store.migrations.length).toBeGreaterThan(0);
      for (const m of [...manifest.event_store.migrations, ...manifest.key_store.migrations]) expect(m.checksum).toMatch(/^[0-9a-f]{64}$/);

      const originalTotal = total(await statsOf(original, keys.rk, RAW_RANGE));
      expect(originalTotal).toBe(200 + acked.reduce((n, a) => n + a.n, 0));
      await stopProcess(original.started.proc);

      // A non-empty directory is refused, and left as it was.
      const occupied = join(work, 'occupied');
      mkdirSync(occupied);
      writeFileSync(join(occupied, 'keep.txt'), 'mine');
      const refused = spawnSync(process.execPath, ['tools/restore.mjs', backupDir, occupied], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
      expect(refused.status).toBe(2);
      expect(refused.stderr).toContain(`${occupied} exists and is not empty`);
      expect(readFileSync(join(occupied, 'keep.txt'), 'utf8')).toBe('mine');

      // A backup of a newer release (a migration this checkout does not have) is refused before anything is written.
      const newer = join(work, 'newer');
      cpSync(backupDir, newer, { recursive: true });
      writeFileSync(join(newer, 'manifest.json'), JSON.stringify({ ...manifest, event_store: { ...manifest.event_store, migrations: [...manifest.event_store.migrations, { version: 999, name: '999_future.sql', checksum: null }] } }));
      const tooNew = spawnSync(process.execPath, ['tools/restore.mjs', newer, join(work, 'never')], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
      expect(tooNew.status).toBe(2);
      expect(tooNew.stderr).toContain('migrations this release does not know (999 999_future.sql)');
      expect(existsSync(join(work, 'never'))).toBe(false);

      const restoredDir = join(work, 'restored');
      const restore = await runTool(['tools/restore.mjs', backupDir, restoredDir]);
      expect(restore.stderr).toBe('');
      expect(restore.code).toBe(0);

      restored = await start(restoredDir);
      // The same secrets: the admin token and the keys work; a wrong key does not.
      expect(restored.adminToken).toBe(admin);
      expect((await call(restored, 'GET', '/admin/projects', admin)).body['projects']).toEqual([expect.objectContaining({ name: 'backed-up' })]);
      expect((await call(restored, 'POST', '/v1/track', 'sk_live_nope', { event: 'x' })).status).toBe(401);
      // Aggregates equal to the events restored (one moment); every event acknowledged before the backup, none after.
      const fromAggregates = await statsOf(restored, keys.rk, RANGE);
      const fromEvents = await statsOf(restored, keys.rk, RAW_RANGE);
      expect(fromAggregates).toEqual(fromEvents);
      expect(fromEvents['before']).toBe(200);
      expect(fromEvents['during']).toBeGreaterThanOrEqual(ackedBefore);
      expect(total(fromEvents)).toBeLessThanOrEqual(originalTotal - ackedAfter);
      const sources = await call(restored, 'GET', `/v1/sources?${new URLSearchParams(RANGE)}`, keys.rk);
      expect(sources.status).toBe(200);
      expect(sources.body['rows']).toEqual([expect.objectContaining({ source: 'news', events: total(fromEvents) })]);
      // The restored service keeps working: a new event is acknowledged and counted.
      expect((await call(restored, 'POST', '/v1/track', keys.sk, { event: 'after-restore', anonymous_id: 'a-1' })).status).toBe(202);
      expect((await statsOf(restored, keys.rk, RANGE))['after-restore']).toBe(1);
    } finally {
      await stopProcess(original.started.proc);
      await stopProcess(restored?.started.proc);
    }
  }, 240_000);
});
