#!/usr/bin/env node
// Operator CLI over the admin HTTP API (PGlite holds its directory exclusively, so tools go through the server).
//   npm run admin -- <command> [options]
// Server: --url or ADMIN_URL (default http://localhost:$PORT or 8080). Token: --token, ADMIN_TOKEN, or DATA_DIR/secrets.json.
// Exit codes: 0 success, 1 request failed or answered non-2xx, 2 usage error or no admin token (nothing sent).
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const USAGE = `usage: npm run admin -- <command> [options]
  projects                                   list projects
  create-project --name N [--origin O]... [--retention DAYS] [--env live|test]
  get-project ID
  update-project ID [--name N] [--origin O]... [--retention DAYS]
  create-key ID --kind pk|sk|rk|ak [--env live|test]
  revoke-key PREFIX                          (the prefix, kind_env_prefix, or the whole key)
options: --url URL  --token TOKEN`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: 'string' }, token: { type: 'string' }, name: { type: 'string' }, origin: { type: 'string', multiple: true },
    retention: { type: 'string' }, kind: { type: 'string' }, env: { type: 'string' }, help: { type: 'boolean', short: 'h' },
  },
});
const [command, arg] = positionals;
if (!command || values.help) {
  console.log(USAGE);
  process.exit(command ? 0 : 2);
}

// A server started with ADMIN_TOKEN in its environment keeps it out of secrets.json: say so instead of sending `Bearer undefined`.
function token() {
  if (values.token) return values.token;
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const file = resolve(process.env.DATA_DIR ?? './.data', 'secrets.json');
  let why = 'file missing';
  if (existsSync(file)) {
    try {
      const stored = JSON.parse(readFileSync(file, 'utf8'))?.ADMIN_TOKEN;
      if (typeof stored === 'string' && stored) return stored;
      why = 'no ADMIN_TOKEN in it';
    } catch (e) {
      why = `unreadable (${e.message})`;
    }
  }
  console.error(`admin: no admin token, nothing sent. Looked for:
  --token          not given
  ADMIN_TOKEN      not set in this environment
  ${file}: ${why}
A server started with ADMIN_TOKEN in its environment does not write it to secrets.json. Pass the same token:
  ADMIN_TOKEN=<token> npm run admin -- ${command} ...   or   npm run admin -- ${command} ... --token <token>
or set DATA_DIR to the directory the server was started with.`);
  process.exit(2);
}
const base = (values.url ?? process.env.ADMIN_URL ?? `http://localhost:${process.env.PORT ?? 8080}`).replace(/\/$/, '');
const need = (v, what) => {
  if (!v) {
    console.error(`${command}: ${what} is required\n\n${USAGE}`);
    process.exit(2);
  }
  return v;
};
const body = () => {
  const b = {};
  if (values.name) b.name = values.name;
  if (values.origin) b.allowed_origins = values.origin;
  if (values.retention) b.retention_days = Number(values.retention);
  if (values.env) b.env = values.env;
  return b;
};

const routes = {
  projects: () => ['GET', '/admin/projects'],
  'create-project': () => (need(values.name, '--name'), ['POST', '/admin/projects', body()]),
  'get-project': () => ['GET', `/admin/projects/${encodeURIComponent(need(arg, 'ID'))}`],
  'update-project': () => ['PATCH', `/admin/projects/${encodeURIComponent(need(arg, 'ID'))}`, body()],
  'create-key': () => ['POST', `/admin/projects/${encodeURIComponent(need(arg, 'ID'))}/keys`, { kind: need(values.kind, '--kind'), ...(values.env ? { env: values.env } : {}) }],
  'revoke-key': () => ['DELETE', `/admin/keys/${encodeURIComponent(need(arg, 'PREFIX'))}`],
};
if (!routes[command]) {
  console.error(`unknown command ${command}\n\n${USAGE}`);
  process.exit(2);
}

const [method, path, payload] = routes[command]();
const bearer = token();
try {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
    body: payload ? JSON.stringify(payload) : undefined,
  });
  const text = await res.text();
  if (text) console.log(text.startsWith('{') ? JSON.stringify(JSON.parse(text), null, 2) : text);
  else console.log(`${res.status} ${res.statusText}`);
  process.exit(res.ok ? 0 : 1);
} catch (e) {
  console.error(`admin: ${e.message}`);
  process.exit(1);
}
