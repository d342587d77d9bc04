import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../../..');

it('runs one retention pass with `main.js --once` and exits 0', () => {
  execFileSync(process.execPath, ['tools/build.mjs'], { cwd: root, stdio: 'ignore' });
  const dataDir = mkdtempSync(join(tmpdir(), 'retention-once-'));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info', NODE_OPTIONS: '' };
    delete env.CLICKHOUSE_URL;
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    const run = spawnSync(process.execPath, ['dist/apps/retention-worker/main.js', '--once'], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('retention done');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

it('refuses to serve without its production settings, naming them', () => {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '' };
  delete env.CLICKHOUSE_URL;
  delete env.DATABASE_URL;
  delete env.INTERNAL_SECRET;
  delete env.DATA_DIR;
  const run = spawnSync(process.execPath, ['dist/apps/retention-worker/main.js'], { cwd: root, env, encoding: 'utf8', timeout: 30_000 });
  expect(run.status).toBe(1);
  expect(run.stderr).toContain('missing required settings CLICKHOUSE_URL or DATA_DIR, DATABASE_URL, INTERNAL_SECRET');
});
