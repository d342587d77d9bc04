// Where the running server is, for the tools that talk to it (npm run admin, import, backup), and what they say when
// it does not answer. `npm start` notes its address in DATA_DIR/server.json while it runs (apps/standalone/src/
// server-note.ts); the tools look for it in this order, the first found wins:
//   1. --url
//   2. the tool's URL variable (ADMIN_URL, or IMPORT_URL for npm run import)
//   3. <data dir>/server.json, the note of a server that is running (its pid alive): --data-dir, else DATA_DIR, else ./.data
//   4. PORT: http://localhost:$PORT
//   5. http://localhost:8080
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const SERVER_NOTE = 'server.json';
export const DEFAULT_URL = 'http://localhost:8080';

/** The order above in one line, for messages and usage texts. */
export const precedence = (urlVar) => `--url, then ${urlVar}, then DATA_DIR/${SERVER_NOTE} (the note npm start writes; --data-dir or DATA_DIR, default ./.data), then PORT, then ${DEFAULT_URL}`;

const trimmed = (url) => url.replace(/\/+$/, '');

/** Whether a process of this id runs on this machine (EPERM: it runs, as another user). */
function running(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/**
 * The server to talk to: `{ base, how, passed }`: its base URL, how it was found (named when it does not answer), and
 * what was looked at and passed over on the way (a stale note).
 */
export function findServer({ url, urlVar, dataDir, env = process.env }) {
  if (url) return { base: trimmed(url), how: '--url', passed: [] };
  if (env[urlVar]) return { base: trimmed(env[urlVar]), how: urlVar, passed: [] };
  const dir = resolve(dataDir ?? env.DATA_DIR ?? './.data');
  const file = join(dir, SERVER_NOTE);
  const passed = [];
  if (existsSync(file)) {
    let note;
    try {
      note = JSON.parse(readFileSync(file, 'utf8'));
    } catch (e) {
      passed.push(`${file} is unreadable (${e.message})`);
    }
    if (note && typeof note.url === 'string') {
      if (running(note.pid)) return { base: trimmed(note.url), how: `${file} (noted by npm start, pid ${note.pid}, started ${note.started_at})`, passed };
      passed.push(`${file} names ${note.url}, but its server (pid ${note.pid}) is not running: a server that did not shut down cleanly`);
    } else if (note) passed.push(`${file} names no url`);
  } else {
    passed.push(`no ${file}: no npm start with that DATA_DIR is running${dataDir || env.DATA_DIR ? '' : ' (pass --data-dir or set DATA_DIR to the one the server was started with)'}`);
  }
  if (env.PORT) return { base: `http://localhost:${env.PORT}`, how: `PORT=${env.PORT}`, passed };
  return { base: DEFAULT_URL, how: 'the default', passed };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Waits before each retry of a request that got no answer: about 1.5 s in all, then the tool says why and stops. */
export const NO_ANSWER_WAITS_MS = [250, 500, 750];

/** Failures before any byte of the request left: retrying cannot send anything twice (a POST /v1/batch, a backup). */
const NOTHING_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * fetch(base + path), retried briefly (NO_ANSWER_WAITS_MS) while the server cannot be reached at all; after that, or at
 * once when the connection failed after the request went out, a ServerUnreachable that names the URL, how it was found
 * and what else was tried. Any answer (even a 5xx) is returned.
 */
export async function fetchServer(server, path, init, { tool, urlVar, onRetry } = {}) {
  let last;
  let tries = 0;
  for (let attempt = 0; ; attempt++) {
    try {
      tries++;
      return await fetch(server.base + path, init);
    } catch (e) {
      last = e;
      if (attempt >= NO_ANSWER_WAITS_MS.length || !NOTHING_SENT.has(e?.cause?.code)) break;
      onRetry?.(`${tool}: no answer from ${server.base} (${reason(e)}); trying again in ${NO_ANSWER_WAITS_MS[attempt]} ms`);
      await sleep(NO_ANSWER_WAITS_MS[attempt]);
    }
  }
  throw new ServerUnreachable(unreachableMessage(server, last, { tool, urlVar, tries }));
}

export class ServerUnreachable extends Error {}

const reason = (e) => e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(e);

/** What a tool prints when its server did not answer: the URL, how it was found, what was passed over, what to do. */
export function unreachableMessage(server, error, { tool, urlVar, tries }) {
  const lines = [`${tool}: no answer from ${server.base} (${reason(error)}${tries > 1 ? `, tried ${tries} times` : ''}).`, `  found through: ${server.how}`];
  for (const p of server.passed) lines.push(`  passed over: ${p}`);
  lines.push(`Is npm start running? The server is looked for in this order: ${precedence(urlVar)}.`);
  return lines.join('\n');
}
