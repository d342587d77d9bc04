import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Started, startNode, stopProcess } from '@analytics/topology';

// `npm start`'s script after its build step (the build is left out: other suites run the built apps meanwhile), run as
// npm runs it (sh -c) on the built entry point: the server it execs has glibc's MALLOC_ARENA_MAX, 2 unless one is given
// (docs/operations.md: 40-90 MB less resident at idle, BENCHMARKS.md "Idle memory under 600 MB"). Read from the
// server process's own environment (/proc/<pid>/environ: sh execs node, so the pid is the server's).
const ROOT = resolve(__dirname, '../../..');
const startScript = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
const serve = startScript.slice(startScript.indexOf('&&') + 2).trim();

/** Runs `serve` until the server listens (no MALLOC_ARENA_MAX in its environment); the server's, then it is stopped. */
async function arenaMaxOf(): Promise<string | undefined> {
  const dataDir = mkdtempSync(join(tmpdir(), 'start-script-'));
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', PORT: '0', LOG_LEVEL: 'info', LOG_FORMAT: 'json', DATA_DIR: dataDir };
  for (const k of ['ADMIN_TOKEN', 'IP_HASH_SECRET', 'INTERNAL_SECRET', 'CLICKHOUSE_URL', 'DATABASE_URL', 'REDIS_URL', 'CLICKHOUSE_DATABASE', 'MALLOC_ARENA_MAX']) delete env[k];
  let started: Started | undefined;
  try {
    started = await startNode('npm start', ['-c', serve], { cwd: ROOT, env, command: 'sh' });
    const { pid } = started.proc;
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toContain('dist/apps/standalone/main.js');
    const vars = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    return vars.find((v) => v.startsWith('MALLOC_ARENA_MAX='))?.slice('MALLOC_ARENA_MAX='.length);
  } finally {
    await stopProcess(started?.proc);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('npm start', () => {
  it('builds, then execs the server', () => {
    expect(startScript).toMatch(/^node tools\/build\.mjs && /);
    expect(serve).toMatch(/exec node dist\/apps\/standalone\/main\.js$/);
  });

  it('runs the server with MALLOC_ARENA_MAX=2 when none is set', async () => {
    expect(await arenaMaxOf()).toBe('2');
  });

  it('keeps a MALLOC_ARENA_MAX that is given (the script with node printing it in place of the server)', () => {
    const printing = serve.replace('dist/apps/standalone/main.js', `-e "process.stdout.write(process.env.MALLOC_ARENA_MAX ?? 'unset')"`);
    const run = (extra: Record<string, string>) => {
      const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', ...extra };
      if (!('MALLOC_ARENA_MAX' in extra)) delete env.MALLOC_ARENA_MAX;
      return execFileSync('sh', ['-c', printing], { cwd: ROOT, env, encoding: 'utf8' });
    };
    expect(run({ MALLOC_ARENA_MAX: '8' })).toBe('8');
    expect(run({})).toBe('2');
  });
});
