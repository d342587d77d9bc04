#!/usr/bin/env node
// Operator CLI over the admin HTTP API (PGlite holds its directory exclusively, so tools go through the server).
//   npm run admin -- <command> [options]
// Server: --url or ADMIN_URL (default http://localhost:$PORT or 8080). Token: --token, ADMIN_TOKEN, or DATA_DIR/secrets.json.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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

function token() {
  if (values.token) return values.token;
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const file = join(process.env.DATA_DIR ?? './.data', 'secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')).ADMIN_TOKEN;
  throw new Error('no admin token: pass --token, set ADMIN_TOKEN, or run from the directory holding DATA_DIR');
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

try {
  const [method, path, payload] = routes[command]();
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token()}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
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
