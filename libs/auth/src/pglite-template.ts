import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type SqlPort, createPglitePort } from './sql-port';

/**
 * Fresh PGlite databases for tests without running initdb each time. initdb takes 2-4 s of CPU per database (a
 * WebAssembly Postgres creating its cluster); the test suites open about a hundred, so they start from a copy of one
 * cluster that initdb made: a directory copied (on disk) or a dump loaded (in memory). The copy is what initdb would
 * have written, made by the same PGlite version, before any migration (each database still migrates itself).
 * The template is made once per machine and PGlite version, under the system's temp directory.
 */
const version = (() => {
  const main = require.resolve('@electric-sql/pglite');
  for (let dir = dirname(main); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@electric-sql/pglite') return pkg.version ?? 'unknown';
    }
  }
  return 'unknown';
})();
const TEMPLATE = join(tmpdir(), `analytics-pglite-template-${version}`);
const DIR = join(TEMPLATE, 'cluster');
const DUMP = join(TEMPLATE, 'cluster.tar.gz');

let made: Promise<void> | undefined;

/** Makes the template once (a process that loses a race to another keeps the other's: both are initdb's output). */
function template(): Promise<void> {
  made ??= (async () => {
    if (existsSync(join(DIR, 'PG_VERSION')) && existsSync(DUMP)) return;
    const work = `${TEMPLATE}.${process.pid}.${randomBytes(4).toString('hex')}`;
    mkdirSync(work, { recursive: true });
    try {
      const db = await createPglitePort(join(work, 'cluster'));
      const dump = await db.dumpDataDir!();
      await db.close();
      writeFileSync(join(work, 'cluster.tar.gz'), dump);
      try {
        renameSync(work, TEMPLATE);
      } catch {
        // Another process renamed its template first.
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    if (!existsSync(join(DIR, 'PG_VERSION')) || !existsSync(DUMP)) throw new Error(`the PGlite template under ${TEMPLATE} is incomplete: remove it and run again`);
  })();
  return made;
}

/** Puts a fresh cluster at `dir` (which must not exist yet): the data directory `createPglitePort(dir)` then opens. */
export async function seedPgliteDir(dir: string): Promise<void> {
  await template();
  if (existsSync(dir)) throw new Error(`${dir} exists: seedPgliteDir makes a new PGlite directory`);
  cpSync(DIR, dir, { recursive: true });
}

/** A fresh in-memory PGlite database, loaded from the template's dump. */
export async function memoryPglitePort(): Promise<SqlPort> {
  await template();
  return createPglitePort(undefined, readFileSync(DUMP));
}
