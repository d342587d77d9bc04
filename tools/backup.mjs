#!/usr/bin/env node
// `npm run backup -- <dir>`: an online backup of the embedded stores of a running `npm start`, through its admin API
// (POST /admin/backup): the event store with ClickHouse's BACKUP, the key store's PGlite dump, secrets.json and a
// manifest, written to <dir> on the server's machine. Restore with `npm run restore -- <dir> <new-data-dir>`.
// Server and token as `npm run admin` finds them: --url or ADMIN_URL (default http://localhost:$PORT or 8080);
// --token, ADMIN_TOKEN, or DATA_DIR/secrets.json. Exit codes: 0 written, 1 refused or failed, 2 usage or no token.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const USAGE = 'usage: npm run backup -- <dir> [--url URL] [--token TOKEN]   (<dir>: a new or empty directory)';
const { values, positionals } = parseArgs({ allowPositionals: true, options: { url: { type: 'string' }, token: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
if (values.help || positionals.length !== 1) {
  console.error(USAGE);
  process.exit(values.help ? 0 : 2);
}

function token() {
  if (values.token) return values.token;
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const file = resolve(process.env.DATA_DIR ?? './.data', 'secrets.json');
  if (existsSync(file)) {
    try {
      const stored = JSON.parse(readFileSync(file, 'utf8'))?.ADMIN_TOKEN;
      if (typeof stored === 'string' && stored) return stored;
    } catch {
      // reported below
    }
  }
  console.error(`backup: no admin token, nothing sent. Pass --token, set ADMIN_TOKEN, or set DATA_DIR to the server's (${file} has none).`);
  process.exit(2);
}

const dir = resolve(positionals[0]);
const base = (values.url ?? process.env.ADMIN_URL ?? `http://localhost:${process.env.PORT ?? 8080}`).replace(/\/$/, '');
const started = Date.now();
let res;
try {
  res = await fetch(`${base}/admin/backup`, { method: 'POST', headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' }, body: JSON.stringify({ dir }) });
} catch (e) {
  console.error(`backup: ${base} did not answer (${e.cause?.code ?? e.message}). Is npm start running? Pass --url or set ADMIN_URL/PORT.`);
  process.exit(1);
}
const text = await res.text();
if (!res.ok) {
  // A refused folder says why in details.fieldErrors.dir; anything else is shown as the server answered it.
  let why;
  try {
    why = res.status === 400 ? JSON.parse(text)?.details?.fieldErrors?.dir?.[0] : undefined;
  } catch {
    why = undefined;
  }
  console.error(why ? `backup: refused, nothing written: ${dir} ${why}` : `backup: ${res.status} ${text}`);
  process.exit(1);
}
const { manifest } = JSON.parse(text);
console.log(`backup written to ${dir} in ${((Date.now() - started) / 1000).toFixed(1)} s (event store at ${manifest.created_at}; ${manifest.event_store.migrations.length} + ${manifest.key_store.migrations.length} migrations).`);
console.log(`restore with: npm run restore -- ${dir} <new-data-dir>`);
