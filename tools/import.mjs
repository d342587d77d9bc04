#!/usr/bin/env node
// Sends an export (GET /v1/export, format=ndjson or csv) back, 1000 events a batch, through one of two routes:
//   ADMIN_TOKEN=<token> npm run import -- --project <id> [--url <base> | --data-dir <dir>] [--batch N] [--restart] <file.ndjson|file.csv>
//   ANALYTICS_KEY=<sk_key> npm run import -- [--url <base> | --data-dir <dir>] [--batch N] [--restart] <file.ndjson|file.csv>
// With --project: POST /admin/projects/<id>/import, as the project's admin (IMPORT_TOKEN: a user token ses_… of an admin
// or owner of the project's organization) or the operator (IMPORT_TOKEN or ADMIN_TOKEN: the server's ADMIN_TOKEN). Every
// exported column is kept as it was stored: country, device_type (bots stay bots), browser, os, source, medium, campaign,
// source_confidence, channel; a row the project already holds (same event_id and timestamp) is skipped.
// Without it, with an sk_ key: POST /v1/batch, as any client sends events. Key: ANALYTICS_KEY, else asked on the
// terminal (not shown); --key still works but shows the key in process lists and on npm's echo line
// (`> node tools/import.mjs --key sk_live_...`), and says so. Kept: event, timestamp, event_id, anonymous_id, user_id,
// session_id, url, path, referrer, properties. Recomputed by the server (as for any event): source, medium, campaign,
// source_confidence, channel (from url and referrer), country, device_type, browser and os (from the sender's address
// and User-Agent: this machine's), ip_hash.
// Server (tools/server-address.mjs): --url, then IMPORT_URL, then the note npm start keeps in DATA_DIR/server.json
// (--data-dir or DATA_DIR, default ./.data), then http://localhost:$PORT, then http://localhost:8080. One that does not
// answer is named, with how it was found, after about 1.5 s (the state file keeps the position).
// CSV: the export's formula guard (a `'` before a cell starting with = + - @ tab or CR, or with `'`s and one of those)
// comes off, so every value is imported as it was sent.
// Resumable: after each acknowledged batch, <file>.import-state holds the byte offset reached; a rerun continues from
// there (an interrupted batch is sent again whole: it was not acknowledged), and a finished import deletes it.
// Exit codes: 0 done, 1 a batch was refused or the server unreachable (the state file says where to resume), 2 usage,
// 130 interrupted (state saved).
import { closeSync, createReadStream, existsSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseCsv } from 'csv-parse/sync';
import { readSecret } from './read-secret.mjs';
import { ServerUnreachable, fetchServer, findServer, precedence } from './server-address.mjs';

const USAGE = `usage: ADMIN_TOKEN=<token> npm run import -- --project <id> [--url <base>] [--data-dir <dir>] [--batch N] [--restart] <file>
       ANALYTICS_KEY=<sk_key> npm run import -- [--url <base>] [--data-dir <dir>] [--batch N] [--restart] <file>
  <file>         an export of this service: .ndjson or .csv
  --project      the id of the project to import into, through POST /admin/projects/<id>/import: every exported column
                 is kept as stored (country, device, bots, sources); a row the project holds already is skipped.
                 Credential: IMPORT_TOKEN (a user token ses_… of the project's admin, or the operator's ADMIN_TOKEN),
                 else ADMIN_TOKEN
  ANALYTICS_KEY  without --project: an sk_ key of the project to import into, through POST /v1/batch (country,
                 device_type, browser, os, bots too, are computed again from this machine's address and User-Agent,
                 source and medium from the url and referrer); unset, it is asked on the terminal (not shown).
                 --key <sk_key> works too, but shows the key in process lists and on npm's echo line.
  --url          the server; --data-dir the DATA_DIR it was started with (its note server.json names it)
                 (${precedence('IMPORT_URL')})
  --batch        events per batch (1..1000, default 1000)
  --restart      ignore a saved position (<file>.import-state) and start from the beginning`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { key: { type: 'string' }, project: { type: 'string' }, url: { type: 'string' }, 'data-dir': { type: 'string' }, batch: { type: 'string' }, restart: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const usage = (why) => {
  console.error(`import: ${why}\n\n${USAGE}`);
  process.exit(2);
};
const file = positionals[0];
if (!file || positionals.length > 1) usage('one file to import');
const target = importTarget();
if (!existsSync(file)) usage(`${file}: no such file`);
const format = /\.csv$/i.test(file) ? 'csv' : /\.(nd)?jsonl?$/i.test(file) ? 'ndjson' : usage(`${file}: .ndjson or .csv expected (a parquet export cannot be imported)`);
const batchSize = Number(values.batch ?? 1000);
if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1000) usage('--batch must be 1..1000');
const server = findServer({ url: values.url, urlVar: 'IMPORT_URL', dataDir: values['data-dir'] });

/** The sk_ key: ANALYTICS_KEY, or typed on a terminal without echo; --key still works, with a warning. */
async function apiKey() {
  if (values.key) {
    console.error("import: warning: --key shows the key in process lists and on npm's echo line (`> node tools/import.mjs --key ...`, in the terminal and its scrollback, CI logs); set ANALYTICS_KEY instead, or leave both out to be asked for it");
    return values.key;
  }
  if (process.env.ANALYTICS_KEY) return process.env.ANALYTICS_KEY;
  if (process.stdin.isTTY) {
    const typed = (await readSecret('sk_ key of the project to import into (not shown): ')).trim();
    if (typed) return typed;
  }
  return usage('no key: set ANALYTICS_KEY=<sk_key> (or run on a terminal to be asked for it)');
}

const size = statSync(file).size;
const stateFile = `${file}.import-state`;

/** The saved position, when it belongs to this file (same size) and was not discarded with --restart. */
function loadState() {
  if (values.restart || !existsSync(stateFile)) return { offset: 0, events: 0 };
  const state = JSON.parse(readFileSync(stateFile, 'utf8'));
  if (state.size !== size) {
    console.error(`import: ${stateFile} was saved for a file of ${state.size} bytes, this one has ${size}: rerun with --restart to import it from the start`);
    process.exit(2);
  }
  return { offset: state.offset, events: state.events };
}
function saveState(offset, events) {
  // Written whole, then renamed: an interrupt never leaves half a state file.
  writeFileSync(`${stateFile}.tmp`, `${JSON.stringify({ file: basename(file), size, offset, events, saved_at: new Date().toISOString() })}\n`);
  renameSync(`${stateFile}.tmp`, stateFile);
}

/** Records of the file from byte `start`: { bytes, end } with `end` the offset after the record's newline. */
async function* records(start) {
  let pending = Buffer.alloc(0);
  let offset = start;
  let inQuotes = false;
  let scanned = 0;
  for await (const chunk of createReadStream(file, { start, highWaterMark: 1 << 20 })) {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let from = 0;
    for (let i = scanned; i < pending.length; i++) {
      const c = pending[i];
      // CSV: a newline inside a quoted field is data ("" toggles twice: still right).
      if (format === 'csv' && c === 0x22) inQuotes = !inQuotes;
      else if (c === 0x0a && !inQuotes) {
        yield { bytes: pending.subarray(from, i), end: offset + i + 1 };
        from = i + 1;
      }
    }
    offset += from;
    pending = pending.subarray(from);
    scanned = pending.length;
  }
  if (pending.length > 0) yield { bytes: pending, end: offset + pending.length };
}

/** The `'` the export put before a cell a spreadsheet would run as a formula (`'`s, then = + - @ tab or CR). */
const FORMULA_GUARD = /^'(?='*[-=+@\t\r])/;

/**
 * One CSV record (RFC 4180, csv-parse) into its fields, guards off. A null is an unquoted empty field (the export writes
 * every string quoted, `""` for an empty one), or an unquoted \N in an export made before nulls were empty fields.
 */
function csvFields(text) {
  return parseCsv(text, { cast: (value, { quoting }) => (!quoting && (value === '' || value === '\\N') ? null : value.replace(FORMULA_GUARD, '')) })[0] ?? [];
}

/** The CSV header, read from the start of the file whatever the resume position. */
function csvHeader() {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(Math.min(size, 64 * 1024));
    readSync(fd, buf, 0, buf.length, 0);
    const nl = buf.indexOf(0x0a);
    const line = buf.subarray(0, nl === -1 ? buf.length : nl).toString('utf8');
    return { columns: csvFields(line), end: nl + 1 };
  } finally {
    closeSync(fd);
  }
}

/**
 * Where the batches go, and as whom: --project (the admin route, every exported column kept) or --key (/v1/batch,
 * enrichment computed again). The credential of the admin route comes from the environment, never the command line
 * (npm prints the command line).
 */
function importTarget() {
  if (values.project !== undefined && values.key !== undefined) usage('--project (the admin route) or --key (POST /v1/batch), not both');
  if (values.project !== undefined) {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(values.project)) usage(`--project ${values.project}: a project id (a UUID) expected`);
    const token = process.env.IMPORT_TOKEN || process.env.ADMIN_TOKEN;
    if (!token) usage('--project needs a credential in the environment: IMPORT_TOKEN (a user token ses_… of the project\'s admin, or the operator\'s ADMIN_TOKEN) or ADMIN_TOKEN');
    return { path: `/admin/projects/${values.project}/import`, token, accepted: 200, toBody: toImportedRow };
  }
  // The sk_ key is read in main() (ANALYTICS_KEY, a prompt, or --key with its warning).
  return { path: '/v1/batch', token: undefined, accepted: 202, toBody: toEvent };
}

/** The columns of an export row (a /v1/query row) the admin route stores; the nullable ones read an empty CSV field as null. */
const EXPORT_COLUMNS = ['timestamp', 'event_name', 'event_id', 'anonymous_id', 'user_id', 'session_id', 'source', 'medium', 'campaign', 'source_confidence', 'channel', 'referrer', 'url', 'path', 'country', 'device_type', 'browser', 'os', 'properties'];
const NULLABLE_COLUMNS = new Set(['user_id', 'campaign', 'referrer', 'url', 'path']);

/** An exported row for POST /admin/projects/<id>/import: every exported column as it was stored (the server validates them). */
function toImportedRow(row, where) {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) throw new Error(`${where}: not an exported row`);
  const out = {};
  for (const column of EXPORT_COLUMNS) {
    if (!(column in row)) continue;
    const v = row[column];
    out[column] = NULLABLE_COLUMNS.has(column) && v === '' ? null : v;
  }
  return out;
}

/** An exported row as a /v1/batch event: what a client may send; the rest the server computes again. */
function toEvent(row, where) {
  const text = (k) => (typeof row[k] === 'string' && row[k] !== '' ? row[k] : undefined);
  if (!text('event_name')) throw new Error(`${where}: no event_name`);
  const event = { event: row.event_name };
  for (const [to, from] of [['event_id', 'event_id'], ['timestamp', 'timestamp'], ['anonymous_id', 'anonymous_id'], ['user_id', 'user_id'], ['session_id', 'session_id'], ['url', 'url'], ['path', 'path'], ['referrer', 'referrer']]) {
    const v = text(from);
    if (v !== undefined) event[to] = v;
  }
  const props = text('properties');
  if (props !== undefined && props !== '{}') {
    const parsed = JSON.parse(props);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) event.properties = parsed;
  }
  return event;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * One batch to the target's route until acknowledged (the answer's JSON): 429 and 5xx are retried (backoff, after
 * Retry-After), each retry said; a server that does not answer is tried for about 1.5 s (fetchServer), then named;
 * other 4xx are fatal.
 */
async function send(events) {
  const onRetry = (message) => {
    if (tty) process.stderr.write('\n');
    console.error(message);
  };
  for (let attempt = 0; ; attempt++) {
    const res = await fetchServer(server, target.path, { method: 'POST', headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ events }) }, { tool: 'import', urlVar: 'IMPORT_URL', onRetry });
    const body = await res.text();
    if (res.status === target.accepted) return JSON.parse(body);
    if ((res.status === 429 || res.status >= 500) && attempt < 8) {
      const retryAfter = Number(res.headers.get('retry-after'));
      const wait = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : Math.min(30_000, 500 * 2 ** attempt);
      onRetry(`import: POST ${target.path} answered ${res.status}; trying again in ${(wait / 1000).toFixed(1)} s`);
      await sleep(wait);
      continue;
    }
    throw new Error(`POST ${target.path} answered ${res.status}: ${body.slice(0, 2000)}`);
  }
}

const tty = process.stderr.isTTY;
function progress(offset, events, final = false) {
  if (!tty) return;
  const width = 30;
  const frac = size === 0 ? 1 : offset / size;
  const bar = '#'.repeat(Math.round(frac * width)).padEnd(width, '.');
  process.stderr.write(`\r[${bar}] ${(frac * 100).toFixed(1).padStart(5)}%  ${events} events${final ? '\n' : ''}`);
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => {
  if (interrupted) process.exit(130);
  interrupted = true;
});

async function main() {
  if (target.token === undefined) target.token = await apiKey();
  const state = loadState();
  let columns;
  let start = state.offset;
  if (format === 'csv') {
    const header = csvHeader();
    columns = header.columns;
    if (!columns.includes('event_name')) throw new Error(`${file}: the CSV header has no event_name column: not an export`);
    start = Math.max(start, header.end);
  }
  if (state.offset > 0) console.error(`import: resuming ${file} at byte ${state.offset} (${state.events} events already imported)`);
  if (target.path === '/v1/batch') {
    console.error('import: through POST /v1/batch with an sk_ key: country, device_type, browser and os (bots included) are computed again from this machine\'s address and User-Agent, source and medium from each url and referrer. To keep the exported values: --project <id> with IMPORT_TOKEN or ADMIN_TOKEN (docs/export-import.md).');
  }
  let events = state.events;
  let skipped = 0;
  let batch = [];
  let line = 0;
  let batchEnd = start;
  const flush = async () => {
    if (batch.length === 0) return;
    const answer = await send(batch);
    events += batch.length;
    skipped += answer?.skipped ?? 0;
    batch = [];
    saveState(batchEnd, events);
    progress(batchEnd, events);
  };
  for await (const record of records(start)) {
    line++;
    const text = record.bytes.toString('utf8');
    if (text.trim() === '') {
      batchEnd = record.end;
      continue;
    }
    const where = `${file} (record ${line} from byte ${start})`;
    let row;
    try {
      row = format === 'ndjson' ? JSON.parse(text) : Object.fromEntries(csvFields(text).map((v, i) => [columns[i], v]));
    } catch (e) {
      throw new Error(`${where}: ${e.message}`);
    }
    batch.push(target.toBody(row, where));
    batchEnd = record.end;
    if (batch.length === batchSize) {
      await flush();
      if (interrupted) {
        if (tty) process.stderr.write('\n');
        console.error(`import: interrupted after ${events} events; rerun the same command to resume (${stateFile})`);
        process.exit(130);
      }
    }
  }
  await flush();
  progress(size, events, true);
  rmSync(stateFile, { force: true });
  console.log(JSON.stringify({ ok: true, file, route: target.path, events_imported: events - state.events, events_total: events, ...(target.path === '/v1/batch' ? {} : { events_skipped: skipped }) }));
}

main().catch((e) => {
  if (tty) process.stderr.write('\n');
  console.error(e instanceof ServerUnreachable ? e.message : `import: ${e.message}`);
  if (existsSync(stateFile)) console.error(`import: the position of the last acknowledged batch is saved in ${stateFile}: rerun to resume`);
  process.exit(1);
});
