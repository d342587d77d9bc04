import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildSync } from 'esbuild';

const root = resolve(__dirname, '../../../..');
let bundled: string | undefined;

/** report-worker.ts bundled once per test file (as tools/build.mjs bundles the apps), under dist/ so it finds node_modules. */
function bundle(): string {
  if (bundled) return bundled;
  const outfile = join(root, 'dist', 'test-support', 'report-worker.js');
  buildSync({
    entryPoints: [join(__dirname, 'report-worker.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    loader: { '.sql': 'text' },
    tsconfig: join(root, 'tsconfig.base.json'),
    logLevel: 'warning',
  });
  return (bundled = outfile);
}

/** Starts a report worker (one pass at `now`) over the given settings; its own embedded event store in a temp dir, removed when it exits. */
export function spawnReportWorker(env: { DATABASE_URL: string; SMTP_URL: string; PUBLIC_URL: string; now: number; dieAfterAccepted?: boolean }): ChildProcess {
  const dataDir = mkdtempSync(join(tmpdir(), 'report-worker-'));
  const child = spawn(process.execPath, [bundle()], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      UV_THREADPOOL_SIZE: '16',
      DATABASE_URL: env.DATABASE_URL,
      SMTP_URL: env.SMTP_URL,
      MAIL_FROM: 'Reports <reports@example.com>',
      PUBLIC_URL: env.PUBLIC_URL,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      REPORT_NOW: String(env.now),
      ...(env.dieAfterAccepted ? { REPORT_DIE_AFTER_ACCEPTED: '1' } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Its event store's directory goes with it, however it ended (the test kills it).
  child.on('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  return child;
}
