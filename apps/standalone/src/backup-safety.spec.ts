import { execFileSync, spawnSync } from 'node:child_process';
import { constants, accessSync, chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from './app';

// POST /admin/backup checks the folder it is given before anything else, and leaves a backup nobody else can read;
// npm run restore reads nothing outside the backup folder. Real embedded stores (chDB's BACKUP writes the files).
const ROOT = resolve(__dirname, '../../..');
const ADMIN_TOKEN = 'admin-token-test';

type TestStores = Awaited<ReturnType<typeof openTestStores>>;
let stores: TestStores;
let work: string;
beforeAll(async () => {
  stores = await openTestStores();
  // What npm start keeps in DATA_DIR: the backup copies it.
  writeFileSync(join(stores.dataDir, 'secrets.json'), JSON.stringify({ ADMIN_TOKEN }), { mode: 0o600 });
  work = mkdtempSync(join(tmpdir(), 'backup-safety-'));
});
afterAll(async () => {
  await stores.close();
  rmSync(work, { recursive: true, force: true });
});

const appWith = (backupDir?: string): Express =>
  buildApp({ stores, logger: silentLogger, dataDir: stores.dataDir, backupDir, secrets: { ADMIN_TOKEN, IP_HASH_SECRET: 'ip-secret-test', INTERNAL_SECRET: 'internal-secret-test' } });

/** POST /admin/backup; the answer and how long it took. A refusal that hangs fails at `timeoutMs`, not the suite's timeout. */
async function backup(app: Express, dir: string, timeoutMs = 5_000) {
  const t0 = Date.now();
  const res = await request(app).post('/admin/backup').set('authorization', `Bearer ${ADMIN_TOKEN}`).send({ dir }).timeout(timeoutMs);
  return { status: res.status, body: res.body as { error?: string; details?: { fieldErrors?: { dir?: string[] } } }, ms: Date.now() - t0 };
}

/** Expects `400 invalid_payload` naming the folder's problem, answered within a second, with nothing created. */
async function expectRefused(app: Express, dir: string, why: RegExp) {
  const res = await backup(app, dir);
  expect({ status: res.status, error: res.body.error }).toEqual({ status: 400, error: 'invalid_payload' });
  expect(res.body.details?.fieldErrors?.dir).toEqual([expect.stringMatching(why)]);
  expect(res.ms).toBeLessThan(1_000);
}

/** A folder the server cannot write into: mode 0555, or (as root, whom modes do not stop) immutable. */
function unwritableDir(path: string): () => void {
  mkdirSync(path);
  chmodSync(path, 0o555);
  try {
    accessSync(path, constants.W_OK);
  } catch {
    return () => chmodSync(path, 0o755);
  }
  execFileSync('chattr', ['+i', path]);
  return () => execFileSync('chattr', ['-i', path]);
}

/** Every entry under `dir` (itself included) whose mode is not 0700 for a folder or 0600 for a file. */
function looseModes(dir: string): string[] {
  const loose: string[] = [];
  const visit = (path: string) => {
    const s = statSync(path);
    const want = s.isDirectory() ? 0o700 : 0o600;
    if ((s.mode & 0o777) !== want) loose.push(`${path.slice(dir.length) || '/'} ${(s.mode & 0o777).toString(8)}`);
    if (s.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return loose;
}

describe('POST /admin/backup refuses a folder that cannot hold a backup: 400 within a second, nothing written', () => {
  const app = () => appWith();

  it.each([
    ['under /proc (a mkdir there never returned)', '/proc/self/x', /^is under \/proc, which holds no backups$/],
    ['under /dev', '/dev/null/x', /^is under \/dev, which holds no backups$/],
    ['under /sys', '/sys/kernel/analytics-backup', /^is under \/sys, which holds no backups$/],
    ['with a NUL character', '/tmp/analytics\0backup', /^contains a NUL character$/],
    ['relative', 'backups/today', /^must be an absolute path on the server/],
    ['with ".."', '/tmp/x/../analytics-backup', /^must not contain "\.\." segments/],
  ])('%s', async (_name, dir, why) => {
    await expectRefused(app(), dir, why);
  });

  it('under a file, or naming a file', async () => {
    writeFileSync(join(work, 'a-file'), 'x');
    await expectRefused(app(), join(work, 'a-file', 'backup'), /a-file is not a directory$/);
    await expectRefused(app(), join(work, 'a-file'), /a-file is not a directory$/);
  });

  it('whose nearest existing folder the server cannot write', async () => {
    const locked = join(work, 'locked');
    const unlock = unwritableDir(locked);
    try {
      await expectRefused(app(), join(locked, 'new', 'backup'), /locked is not writable by the server \(E[A-Z]+\)$/);
      expect(existsSync(join(locked, 'new'))).toBe(false);
    } finally {
      unlock();
    }
  });

  it('that exists and is not empty', async () => {
    mkdirSync(join(work, 'occupied'));
    writeFileSync(join(work, 'occupied', 'keep.txt'), 'mine');
    await expectRefused(app(), join(work, 'occupied'), /occupied exists and is not empty/);
    expect(readdirSync(join(work, 'occupied'))).toEqual(['keep.txt']);
  });

  it('that leads into /proc through a symbolic link', async () => {
    symlinkSync('/proc/self', join(work, 'to-proc'));
    await expectRefused(app(), join(work, 'to-proc', 'x'), /^leads to \/proc\/\d+\/x through a symbolic link, under \/proc/);
  });
});

describe('POST /admin/backup with BACKUP_DIR', () => {
  let root: string;
  let app: Express;
  beforeAll(() => {
    root = join(work, 'allowed');
    mkdirSync(root);
    mkdirSync(join(work, 'elsewhere'));
    symlinkSync(join(work, 'elsewhere'), join(root, 'escape'));
    app = appWith(root);
  });

  it('refuses a folder outside it, itself, and one under it that leads out through a symbolic link', async () => {
    await expectRefused(app, join(work, 'elsewhere', 'b1'), /^must be a folder under BACKUP_DIR \(.*allowed\)$/);
    await expectRefused(app, root, /^must be a folder under BACKUP_DIR/);
    await expectRefused(app, join(root, 'escape', 'b2'), /^must be a folder under BACKUP_DIR \(.*\); it leads to .*elsewhere\/b2 through a symbolic link$/);
    expect(readdirSync(join(work, 'elsewhere'))).toEqual([]);
  });

  it('writes a backup into a new folder under it, every folder 0700 and every file 0600 (the engine\'s files included)', async () => {
    const target = join(root, 'nightly', '2026-11-24');
    const res = await backup(app, target, 100_000);
    expect(res.status).toBe(200);
    expect(readdirSync(target).sort()).toEqual(['clickhouse', 'manifest.json', 'postgres.tar.gz', 'secrets.json']);
    expect(readdirSync(join(target, 'clickhouse'), { recursive: true }).length).toBeGreaterThan(5);
    expect(looseModes(join(root, 'nightly'))).toEqual([]);
  }, 120_000);
});

describe('npm run restore refuses a manifest naming anything outside the backup, before writing anything', () => {
  let good: string;
  beforeAll(async () => {
    good = join(work, 'good-backup');
    expect((await backup(appWith(), good, 100_000)).status).toBe(200);
  }, 120_000);

  /** A copy of the good backup, changed by `change`; restored into a new folder: exit code, stderr, whether it was created. */
  const restoreChanged = (name: string, change: (dir: string, manifest: Record<string, unknown>) => Record<string, unknown>) => {
    const dir = join(work, name);
    cpSync(good, dir, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(change(dir, manifest)));
    const target = join(work, `${name}-restored`);
    const run = spawnSync(process.execPath, ['tools/restore.mjs', dir, target], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 60_000 });
    return { status: run.status, stderr: run.stderr, created: existsSync(target) };
  };
  const refused = (stderr: RegExp) => ({ status: 2, stderr: expect.stringMatching(stderr), created: false });

  it.each([
    ['secrets climbing out with ".."', (m: Record<string, unknown>) => ({ ...m, secrets: '../../../etc/hostname' }), /manifest secrets "\.\.\/\.\.\/\.\.\/etc\/hostname" is not a path inside/],
    ['an absolute secrets file', (m: Record<string, unknown>) => ({ ...m, secrets: '/etc/hostname' }), /manifest secrets "\/etc\/hostname" is not a path inside/],
    ['a key store file outside', (m: Record<string, unknown>) => ({ ...m, key_store: { ...(m.key_store as object), file: '../good-backup/postgres.tar.gz' } }), /manifest key_store\.file .* is not a path inside/],
    ['an absolute event store folder', (m: Record<string, unknown>) => ({ ...m, event_store: { ...(m.event_store as object), path: '/var/lib' } }), /manifest event_store\.path "\/var\/lib" is not a path inside/],
  ])('%s', (name, change, stderr) => {
    expect(restoreChanged(name.replace(/\W+/g, '-'), (_dir, m) => change(m))).toEqual(refused(stderr));
  });

  it('a secrets file that is a symbolic link out of the backup', () => {
    const result = restoreChanged('secrets-link', (dir, m) => {
      rmSync(join(dir, 'secrets.json'));
      symlinkSync('/etc/hostname', join(dir, 'secrets.json'));
      return m;
    });
    expect(result).toEqual(refused(/manifest secrets "secrets\.json" leads out of .* to \/etc\/hostname through a symbolic link/));
  });

  it("a symbolic link out of the backup inside the event store's folder", () => {
    const result = restoreChanged('engine-link', (dir, m) => {
      symlinkSync('/etc/passwd', join(dir, 'clickhouse', 'passwd'));
      return m;
    });
    expect(result).toEqual(refused(/clickhouse\/passwd is a symbolic link out of .* \(to \/etc\/passwd\)/));
  });

  it('a target under /proc, at once', () => {
    const run = spawnSync(process.execPath, ['tools/restore.mjs', good, '/proc/self/restored'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 30_000 });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 2, stderr: expect.stringMatching(/\/proc\/self\/restored is under \/proc/) });
  });
});
