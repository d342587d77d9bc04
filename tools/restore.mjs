#!/usr/bin/env node
// `npm run restore -- <backup> <new-data-dir>`: offline (nothing needs to run). Lays out a DATA_DIR from a backup of
// `npm run backup`: <new-data-dir>/clickhouse by ClickHouse's RESTORE (chDB), <new-data-dir>/postgres from the PGlite
// dump, secrets.json. `DATA_DIR=<new-data-dir> npm start` then answers as the original did at the backup's moment.
// Refuses an existing non-empty <new-data-dir>. Exit codes: 0 restored, 1 failed, 2 usage or refused.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

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

const manifestFile = join(backup, 'manifest.json');
if (!existsSync(manifestFile)) fail(`${backup} has no manifest.json: not a backup of npm run backup`, 2);
const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
if (manifest.format !== 1) fail(`manifest format ${manifest.format} is not one this version reads (1)`, 2);
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

const require = createRequire(join(process.cwd(), 'package.json'));
mkdirSync(target, { recursive: true });
try {
  // Key store: PGlite opens a new directory from its dump (no initdb).
  const { PGlite } = await import(require.resolve('@electric-sql/pglite'));
  const tarball = readFileSync(join(backup, manifest.key_store.file));
  const pg = await PGlite.create(join(target, 'postgres'), { loadDataDir: new Blob([tarball]) });
  const { rows } = await pg.query('SELECT count(*)::int AS n FROM schema_migrations');
  await pg.close();

  // Event store: ClickHouse's own RESTORE, in chDB, from the backup directory (the engine's backups.allowed_path).
  const { Session } = require('chdb');
  const source = join(backup, manifest.event_store.path);
  const session = new Session(join(target, 'clickhouse'), { connectionArgs: [`--backups.allowed_path=${backup}`] });
  let events;
  try {
    session.query(`RESTORE DATABASE ${manifest.clickhouse_database} FROM File('${source.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}')`, 'JSONEachRow');
    events = session.query(`SELECT count() FROM ${manifest.clickhouse_database}.events`, 'CSV').trim();
  } finally {
    session.close();
  }
  if (manifest.secrets) {
    copyFileSync(join(backup, manifest.secrets), join(target, 'secrets.json'));
    chmodSync(join(target, 'secrets.json'), 0o600);
  }
  console.log(`restored ${backup} (${manifest.created_at}) into ${target}: ${events} events, key store at migration ${rows[0].n}.`);
  const database = manifest.clickhouse_database === 'analytics' ? '' : `CLICKHOUSE_DATABASE=${manifest.clickhouse_database} `;
  console.log(`start it with: ${database}DATA_DIR=${target} npm start`);
} catch (e) {
  rmSync(target, { recursive: true, force: true });
  fail(`${e.message} (the partial ${target} was removed)`);
}
