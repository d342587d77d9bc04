#!/usr/bin/env node
// `npm run restore -- <backup> <new-data-dir>`: offline (nothing needs to run). Lays out a DATA_DIR from a backup of
// `npm run backup`: <new-data-dir>/clickhouse by ClickHouse's RESTORE (chDB), <new-data-dir>/postgres from the PGlite
// dump, secrets.json. `DATA_DIR=<new-data-dir> npm start` then answers as the original did at the backup's moment.
// Refuses an existing non-empty <new-data-dir>, and a manifest naming any file outside <backup> (an absolute path, "..",
// or a symbolic link leading out), before anything is written. Exit codes: 0 restored, 1 failed, 2 usage or refused.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';

const USAGE = 'usage: npm run restore -- <backup-dir> <new-data-dir>   (<new-data-dir> must not exist, or be empty)';
const args = process.argv.slice(2).filter((a) => a !== '--');
if (args.length !== 2 || args.includes('-h') || args.includes('--help')) {
  console.error(USAGE);
  process.exit(2);
}
const backup = resolve(args[0]);
const target = resolve(args[1]);
const fail = (message, code = 1) => {
  console.error(`restore: ${message}`);
  process.exit(code);
};

const inside = (path, root) => path === root || path.startsWith(root + sep);
// The kernel's and devices' trees: never a data directory, and a recursive mkdir there can loop forever (/proc/self/x).
const SYSTEM_TREES = ['/proc', '/sys', '/dev'];
if (SYSTEM_TREES.some((tree) => inside(target, tree))) fail(`${target} is under ${SYSTEM_TREES.find((tree) => inside(target, tree))}: restore into a new or empty directory elsewhere`, 2);

const manifestFile = join(backup, 'manifest.json');
if (!existsSync(manifestFile)) fail(`${backup} has no manifest.json: not a backup of npm run backup`, 2);
const realBackup = realpathSync(backup);
if (!inside(realpathSync(manifestFile), realBackup)) fail(`${manifestFile} leads out of the backup through a symbolic link: refused (nothing was changed)`, 2);
const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
if (manifest.format !== 1) fail(`manifest format ${manifest.format} is not one this version reads (1)`, 2);

/** A file the manifest names, inside the backup: relative, no "..", and still inside once its links are followed. */
function inBackup(name, field) {
  if (typeof name !== 'string' || name === '' || name.includes('\0') || isAbsolute(name) || name.split(/[\\/]/).includes('..')) {
    fail(`manifest ${field} ${JSON.stringify(name)} is not a path inside ${backup}: refused (nothing was changed)`, 2);
  }
  const path = join(backup, name);
  let real;
  try {
    real = realpathSync(path);
  } catch {
    fail(`manifest ${field} names ${path}, which the backup does not hold (nothing was changed)`, 2);
  }
  if (!inside(real, realBackup)) fail(`manifest ${field} ${JSON.stringify(name)} leads out of ${backup} to ${real} through a symbolic link: refused (nothing was changed)`, 2);
  return path;
}
const files = {
  keyStore: inBackup(manifest.key_store?.file, 'key_store.file'),
  eventStore: inBackup(manifest.event_store?.path, 'event_store.path'),
  secrets: manifest.secrets === null || manifest.secrets === undefined ? null : inBackup(manifest.secrets, 'secrets'),
};
if (!statSync(files.eventStore).isDirectory()) fail(`manifest event_store.path names ${files.eventStore}, which is not a folder (nothing was changed)`, 2);
// Inside the event store's folder too (ClickHouse's RESTORE reads every file there): no link leads out.
for (const entry of readdirSync(files.eventStore, { recursive: true, withFileTypes: true })) {
  if (!entry.isSymbolicLink()) continue;
  const link = join(entry.parentPath ?? entry.path, entry.name);
  let real;
  try {
    real = realpathSync(link);
  } catch {
    real = '(nowhere)';
  }
  if (!inside(real, realBackup)) fail(`${link} is a symbolic link out of ${backup} (to ${real}): refused (nothing was changed)`, 2);
}

if (existsSync(target) && (!statSync(target).isDirectory() || readdirSync(target).length > 0)) {
  fail(`${target} exists and is not empty: restore into a new or empty directory (nothing was changed)`, 2);
}
if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(manifest.clickhouse_database)) fail(`manifest names an invalid database ${JSON.stringify(manifest.clickhouse_database)}`, 2);

// A backup from a newer release carries migrations this checkout does not have: its code may not read those tables.
const ROOT = resolve(import.meta.dirname, '..');
const versionsIn = (dir) => readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith('.sql')).map((f) => Number(/(\d+)_[^/]*\.sql$/.exec(f)?.[1]));
const known = { event_store: new Set(versionsIn(join(ROOT, 'libs/event-store/src/tables/migrations'))), key_store: new Set(versionsIn(join(ROOT, 'libs/auth/src/migrations'))) };
for (const store of ['event_store', 'key_store']) {
  const unknown = manifest[store].migrations.filter((m) => !known[store].has(m.version)).map((m) => `${m.version} ${m.name}`);
  if (unknown.length > 0) fail(`the backup's ${store.replace('_', ' ')} has migrations this release does not know (${unknown.join(', ')}): it was made by a newer release (${manifest.package_version}); restore and start it with that release or a later one`, 2);
}

/** Creates `dir` and its missing parents one level at a time (a recursive mkdir can loop forever on some paths), 0700. */
function makeDir(dir) {
  const missing = [];
  let p = dir;
  while (!existsSync(p)) {
    missing.unshift(basename(p));
    p = dirname(p);
  }
  for (const name of missing) mkdirSync((p = join(p, name)), { mode: 0o700 });
  chmodSync(dir, 0o700);
}

const require = createRequire(join(process.cwd(), 'package.json'));
try {
  makeDir(target);
} catch (e) {
  fail(`${target} could not be created (${e.code ?? e.message})`, 2);
}
try {
  // Key store: PGlite opens a new directory from its dump (no initdb).
  const { PGlite } = await import(require.resolve('@electric-sql/pglite'));
  const tarball = readFileSync(files.keyStore);
  const pg = await PGlite.create(join(target, 'postgres'), { loadDataDir: new Blob([tarball]) });
  const { rows } = await pg.query('SELECT count(*)::int AS n FROM schema_migrations');
  await pg.close();

  // Event store: ClickHouse's own RESTORE, in chDB, from the backup directory (the engine's backups.allowed_path).
  const { Session } = require('chdb');
  const source = files.eventStore;
  const session = new Session(join(target, 'clickhouse'), { connectionArgs: [`--backups.allowed_path=${backup}`] });
  let events;
  try {
    session.query(`RESTORE DATABASE ${manifest.clickhouse_database} FROM File('${source.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}')`, 'JSONEachRow');
    events = session.query(`SELECT count() FROM ${manifest.clickhouse_database}.events`, 'CSV').trim();
  } finally {
    session.close();
  }
  if (files.secrets) {
    copyFileSync(files.secrets, join(target, 'secrets.json'));
    chmodSync(join(target, 'secrets.json'), 0o600);
  }
  console.log(`restored ${backup} (${manifest.created_at}) into ${target}: ${events} events, key store at migration ${rows[0].n}.`);
  const database = manifest.clickhouse_database === 'analytics' ? '' : `CLICKHOUSE_DATABASE=${manifest.clickhouse_database} `;
  console.log(`start it with: ${database}DATA_DIR=${target} npm start`);
} catch (e) {
  rmSync(target, { recursive: true, force: true });
  fail(`${e.message} (the partial ${target} was removed)`);
}
