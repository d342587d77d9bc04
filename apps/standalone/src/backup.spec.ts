import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { envSchema, loadConfig, openStores, type Stores } from '@analytics/runtime';
import { silentLogger } from '@analytics/testing';
import { buildApp } from './app';
import { resolveSecrets } from './secrets';
import { closeServer, listen, urlOf } from './test-service';

// `npm run backup` while the service ingests, `npm run restore` into a new DATA_DIR, and the service started on it:
// the standalone app as main.ts wires it (DATA_DIR, generated secrets, embedded stores), the real CLI tools as
// child processes. chDB binds one data directory per process: the original is closed before the restored one opens.
const ROOT = resolve(__dirname, '../../..');
const RANGE = { from: '2020-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' };

interface Running {
  stores: Stores;
  server: Server;
  url: string;
  adminToken: string;
}

async function start(dataDir: string): Promise<Running> {
  const env = loadConfig(envSchema, { DATA_DIR: dataDir });
  const { secrets } = resolveSecrets(dataDir, {});
  const stores = await openStores(env, silentLogger, dataDir);
  const app = buildApp({ stores, secrets, logger: silentLogger, dataDir, rateRules: { track: { ratePerS: 10_000, burst: 10_000 }, batch: { ratePerS: 10_000, burst: 10_000 } } });
  const server = await listen(app);
  return { stores, server, url: urlOf(server), adminToken: secrets.ADMIN_TOKEN };
}

async function stop(r: Running): Promise<void> {
  await closeServer(r.server);
  await r.stores.close();
}

const call = async (r: Running, method: string, path: string, key: string, body?: unknown) => {
  const res = await fetch(`${r.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> };
};

const runTool = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => done({ code: code ?? 1, stdout, stderr }));
  });

type Row = { event_name: string; value: number };
const byEvent = (rows: Row[]) => Object.fromEntries(rows.map((r) => [r.event_name, r.value]));

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'analytics-backup-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm run backup / npm run restore', () => {
  it('backs up while the service ingests; the restored DATA_DIR answers with the same keys, every event acknowledged before the backup, and aggregates equal to its events', async () => {
    const original = await start(join(work, 'data'));
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
        const res = await call(original, 'POST', '/v1/batch', keys.sk, { events: events('during', 10) });
        expect(res.status).toBe(202);
        acked.push({ at: Date.now(), n: 10 });
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    const backupDir = join(work, 'backup');
    const startedAt = Date.now();
    const backup = await runTool(['tools/backup.mjs', backupDir, '--url', original.url, '--token', admin]);
    const returnedAt = Date.now();
    ingesting = false;
    await ingest;
    expect(backup.stderr).toBe('');
    expect(backup.code).toBe(0);
    expect(backup.stdout).toContain(`backup written to ${backupDir}`);
    const ackedBefore = acked.filter((a) => a.at < startedAt).reduce((s, a) => s + a.n, 0);
    const ackedAfter = acked.filter((a) => a.at > returnedAt).reduce((s, a) => s + a.n, 0);
    expect(acked.filter((a) => a.at >= startedAt).length).toBeGreaterThan(0);

    const manifest = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ format: 1, node_version: process.version, clickhouse_database: 'analytics', secrets: 'secrets.json' });
    expect(manifest.event_store.migrations.length).toBeGreaterThan(0);
    expect(manifest.key_store.migrations.length).toBeGreaterThan(0);
    for (const m of [...manifest.event_store.migrations, ...manifest.key_store.migrations]) expect(m.checksum).toMatch(/^[0-9a-f]{64}$/);

    const originalTotal = Number((await original.stores.events.client.query({ query: 'SELECT count() AS n FROM analytics.events', format: 'JSONEachRow' }).then((r) => r.json<{ n: string }>()))[0]!.n);
    await stop(original);

    // A non-empty directory is refused, and left as it was.
    const occupied = join(work, 'occupied');
    mkdirSync(occupied);
    writeFileSync(join(occupied, 'keep.txt'), 'mine');
    const refused = spawnSync(process.execPath, ['tools/restore.mjs', backupDir, occupied], { cwd: ROOT, encoding: 'utf8' });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain(`${occupied} exists and is not empty`);
    expect(readFileSync(join(occupied, 'keep.txt'), 'utf8')).toBe('mine');

    const restoredDir = join(work, 'restored');
    const restore = await runTool(['tools/restore.mjs', backupDir, restoredDir]);
    expect(restore.stderr).toBe('');
    expect(restore.code).toBe(0);

    const restored = await start(restoredDir);
    try {
      // The same secrets: the admin token and the keys work.
      expect(restored.adminToken).toBe(admin);
      expect((await call(restored, 'GET', '/admin/projects', admin)).body['projects']).toEqual([expect.objectContaining({ name: 'backed-up' })]);
      expect((await call(restored, 'POST', '/v1/track', 'sk_live_nope', { event: 'x' })).status).toBe(401);
      const statsRes = await call(restored, 'GET', `/v1/stats?${new URLSearchParams({ ...RANGE, group_by: 'event_name' })}`, keys.rk);
      expect(statsRes.status).toBe(200);
      const stats = byEvent(statsRes.body['rows'] as Row[]);
      const stored = Number((await restored.stores.events.client.query({ query: 'SELECT count() AS n FROM analytics.events', format: 'JSONEachRow' }).then((r) => r.json<{ n: string }>()))[0]!.n);
      // Aggregates equal to the events restored (one moment), every event acknowledged before the backup, none after.
      expect(stats['before']).toBe(200);
      expect(stats['before']! + (stats['during'] ?? 0)).toBe(stored);
      expect(stats['during'] ?? 0).toBeGreaterThanOrEqual(ackedBefore);
      expect(stored).toBeLessThanOrEqual(originalTotal - ackedAfter);
      const sources = await call(restored, 'GET', `/v1/sources?${new URLSearchParams(RANGE)}`, keys.rk);
      expect(sources.status).toBe(200);
      expect(sources.body['rows']).toEqual([expect.objectContaining({ source: 'news', events: stored })]);
      // The restored service keeps working: a new event is acknowledged and counted.
      expect((await call(restored, 'POST', '/v1/track', keys.sk, { event: 'after-restore', anonymous_id: 'a-1' })).status).toBe(202);
      const after = await call(restored, 'GET', `/v1/stats?${new URLSearchParams({ ...RANGE, group_by: 'event_name' })}`, keys.rk);
      expect(byEvent(after.body['rows'] as Row[])['after-restore']).toBe(1);
    } finally {
      await stop(restored);
    }
  }, 180_000);
});
