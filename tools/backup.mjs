#!/usr/bin/env node
// `npm run backup -- <dir>`: an online backup of the embedded stores of a running `npm start`, through its admin API
// (POST /admin/backup): the event store with ClickHouse's BACKUP, the key store's PGlite dump, secrets.json and a
// manifest, written to <dir> on the server's machine. Restore with `npm run restore -- <dir> <new-data-dir>`.
// Server and token as `npm run admin` finds them (tools/server-address.mjs): --url, then ADMIN_URL, then the note npm
// start keeps in DATA_DIR/server.json (--data-dir or DATA_DIR, default ./.data), then http://localhost:$PORT, then
// :8080; --token, ADMIN_TOKEN, or <data dir>/secrets.json. Exit codes: 0 written, 1 refused or failed, 2 usage or no token.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ServerUnreachable, fetchServer, findServer, precedence } from './server-address.mjs';

const USAGE = `usage: npm run backup -- <dir> [--url URL] [--data-dir DIR] [--token TOKEN]   (<dir>: a new or empty directory)
The server: ${precedence('ADMIN_URL')}.`;
const { values, positionals } = parseArgs({ allowPositionals: true, options: { url: { type: 'string' }, 'data-dir': { type: 'string' }, token: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
if (values.help || positionals.length !== 1) {
  console.error(USAGE);
  process.exit(values.help ? 0 : 2);
}

function token() {
  if (values.token) return values.token;
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const file = resolve(values['data-dir'] ?? process.env.DATA_DIR ?? './.data', 'secrets.json');
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
const server = findServer({ url: values.url, urlVar: 'ADMIN_URL', dataDir: values['data-dir'] });
const started = Date.now();
let res;
try {
  res = await fetchServer(server, '/admin/backup', { method: 'POST', headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' }, body: JSON.stringify({ dir }) }, { tool: 'backup', urlVar: 'ADMIN_URL', onRetry: (m) => console.error(m) });
} catch (e) {
  console.error(e instanceof ServerUnreachable ? e.message : `backup: ${e.message}`);
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
