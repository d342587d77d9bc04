#!/usr/bin/env node
// Operator CLI over the admin HTTP API (PGlite holds its directory exclusively, so tools go through the server).
//   npm run admin -- <command> [options]
// Server (tools/server-address.mjs): --url, then ADMIN_URL, then the note npm start keeps in DATA_DIR/server.json
// (--data-dir or DATA_DIR, default ./.data), then http://localhost:$PORT, then http://localhost:8080; one that does not
// answer is named, with how it was found, after about 1.5 s. Token: --token, ADMIN_TOKEN, or <data dir>/secrets.json.
// Every command acts as the operator (ADMIN_TOKEN), who may do everything; people sign in with their own accounts.
// Exit codes: 0 success, 1 request failed or answered non-2xx, 2 usage error or no admin token (nothing sent).
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readSecret } from './read-secret.mjs';
import { ServerUnreachable, fetchServer, findServer, precedence } from './server-address.mjs';

const USAGE = `usage: npm run admin -- <command> [options]
  projects                                   list projects
  create-project --name N [--origin O]... [--retention DAYS] [--timezone TZ] [--env live|test]
  get-project ID
  update-project ID [--name N] [--retention DAYS] [--timezone TZ] [--add-origin O]... [--remove-origin O]...
                     [--origin O]...         --origin replaces the whole origin list (and prints the one it replaced)
  create-key ID --kind pk|sk|rk|ak [--env live|test]
  revoke-key PREFIX                          (the prefix, kind_env_prefix, or the whole key)
  keys ID                                    a project's keys (prefix, kind, created, last used, revoked; never a secret)
  delete-project ID                          the project and its keys at once; its events are queued for deletion
  setup --email E [--name N]                 the first user (asks for the password, not echoed; piped: its first line)
  users                                      every user and their organizations
  orgs                                       every organization
  create-org --name N
  invite --org ORG_ID --email E [--role viewer|editor|admin|owner]   prints the invitation link (7 days, one use)
  reset-password --email E                   prints a one-time password-reset link (one hour)
options: --url URL  --data-dir DIR  --token TOKEN
The server: ${precedence('ADMIN_URL')}.`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: 'string' }, token: { type: 'string' }, name: { type: 'string' }, origin: { type: 'string', multiple: true },
    retention: { type: 'string' }, timezone: { type: 'string' }, kind: { type: 'string' }, env: { type: 'string' }, help: { type: 'boolean', short: 'h' },
    email: { type: 'string' }, org: { type: 'string' }, role: { type: 'string' }, 'data-dir': { type: 'string' },
    'add-origin': { type: 'string', multiple: true }, 'remove-origin': { type: 'string', multiple: true },
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
  const file = resolve(values['data-dir'] ?? process.env.DATA_DIR ?? './.data', 'secrets.json');
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
or pass --data-dir (or set DATA_DIR) to the directory the server was started with.`);
  process.exit(2);
}
const server = findServer({ url: values.url, urlVar: 'ADMIN_URL', dataDir: values['data-dir'] });
const base = server.base;
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
  if (values.timezone) b.timezone = values.timezone;
  if (values.env) b.env = values.env;
  return b;
};

const routes = {
  projects: () => ['GET', '/admin/projects'],
  'create-project': () => (need(values.name, '--name'), ['POST', '/admin/projects', body()]),
  'get-project': () => ['GET', `/admin/projects/${encodeURIComponent(need(arg, 'ID'))}`],
  'update-project': async () => ['PATCH', `/admin/projects/${encodeURIComponent(need(arg, 'ID'))}`, await originChange(body())],
  'create-key': () => ['POST', `/admin/projects/${encodeURIComponent(need(arg, 'ID'))}/keys`, { kind: need(values.kind, '--kind'), ...(values.env ? { env: values.env } : {}) }],
  'revoke-key': () => ['DELETE', `/admin/keys/${encodeURIComponent(need(arg, 'PREFIX'))}`],
  keys: () => ['GET', `/admin/projects/${encodeURIComponent(need(arg, 'ID'))}/keys`],
  'delete-project': () => ['DELETE', `/admin/projects/${encodeURIComponent(need(arg, 'ID'))}`],
  setup: async () => ['POST', '/auth/setup', { email: need(values.email, '--email'), password: await newPassword(), ...(values.name ? { name: values.name } : {}) }],
  users: () => ['GET', '/admin/users'],
  orgs: () => ['GET', '/admin/orgs'],
  'create-org': () => ['POST', '/admin/orgs', { name: need(values.name, '--name') }],
  invite: () => ['POST', `/admin/orgs/${encodeURIComponent(need(values.org, '--org'))}/invitations`, { email: need(values.email, '--email'), role: values.role ?? 'viewer' }],
  'reset-password': () => ['POST', '/admin/password-resets', { email: need(values.email, '--email') }],
};

/** The new user's password: 10 to 256 characters, typed twice on a terminal. */
async function newPassword() {
  const password = await readSecret('Password (10 to 256 characters, not shown): ');
  if (password.length < 10 || password.length > 256) {
    console.error('setup: the password must have 10 to 256 characters; nothing sent');
    process.exit(2);
  }
  if (process.stdin.isTTY && (await readSecret('The same password again: ')) !== password) {
    console.error('setup: the two passwords differ; nothing sent');
    process.exit(2);
  }
  return password;
}

/** An origin as the server keeps it (lowercase, no default port or trailing slash), to find it in the stored list. */
function sameOrigin(a, b) {
  const norm = (v) => {
    const t = v.trim();
    return URL.canParse(t) && !t.includes('*') ? new URL(t).origin : t.toLowerCase().replace(/\/+$/, '');
  };
  return norm(a) === norm(b);
}

/** Sends a request to the server; one that does not answer ends the command (exit 1) naming the URL and how it was found. */
async function call(method, path, payload) {
  try {
    return await fetchServer(server, path, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
      body: payload ? JSON.stringify(payload) : undefined,
    }, { tool: 'admin', urlVar: 'ADMIN_URL', onRetry: (m) => console.error(m) });
  } catch (e) {
    console.error(e instanceof ServerUnreachable ? e.message : `admin: ${e.message}`);
    process.exit(1);
  }
}

/** What update-project changed in allowed_origins, told once the server took it. */
let originNote;

/**
 * update-project's origins. --add-origin and --remove-origin change the project's list as it is now (read first, then
 * sent whole: the API takes the list); --origin replaces it, and what it replaced is printed. Not both at once.
 */
async function originChange(patch) {
  const add = values['add-origin'] ?? [];
  const remove = values['remove-origin'] ?? [];
  if (values.origin && (add.length || remove.length)) {
    console.error(`update-project: --origin replaces the whole list; use it alone, or --add-origin/--remove-origin to change one entry\n\n${USAGE}`);
    process.exit(2);
  }
  if (!values.origin && !add.length && !remove.length) return patch;
  const res = await call('GET', `/admin/projects/${encodeURIComponent(arg)}`);
  const text = await res.text();
  if (!res.ok) {
    console.log(text);
    process.exit(1);
  }
  const before = JSON.parse(text).project.allowed_origins;
  const shown = (list) => (list.length ? list.join(' ') : '(none)');
  if (values.origin) {
    originNote = `update-project: allowed_origins replaced: was ${shown(before)}; now ${shown(values.origin)} (--add-origin and --remove-origin change one entry)`;
    return patch;
  }
  let after = before.filter((o) => !remove.some((r) => sameOrigin(o, r)));
  for (const r of remove) if (!before.some((o) => sameOrigin(o, r))) console.error(`update-project: ${r} is not in allowed_origins (${shown(before)}): nothing to remove`);
  for (const a of add) {
    if (after.some((o) => sameOrigin(o, a))) console.error(`update-project: ${a} is already in allowed_origins`);
    else after = [...after, a];
  }
  originNote = `update-project: allowed_origins was ${shown(before)}; now ${shown(after)}`;
  return { ...patch, allowed_origins: after };
}

if (!routes[command]) {
  console.error(`unknown command ${command}\n\n${USAGE}`);
  process.exit(2);
}

const bearer = token();
const [method, path, payload] = await routes[command]();
const res = await call(method, path, payload);
try {
  const text = await res.text();
  const answer = text.startsWith('{') ? JSON.parse(text) : undefined;
  // setup signs the new user in: the token is theirs, for a browser, not for this terminal.
  if (command === 'setup' && res.ok) console.log(`Set up ${answer.user.email}: owner of the organization "Default", which holds every project. Sign in at ${base}/`);
  else if (text) console.log(answer ? JSON.stringify(answer, null, 2) : text);
  else console.log(`${res.status} ${res.statusText}`);
  if (command === 'reset-password' && res.ok) console.log(`\nHand this link to ${answer.user.email} (one use, until ${answer.expires_at}):\n${answer.reset_url}`);
  if (originNote && res.ok) console.error(originNote);
  if (command === 'invite' && res.ok) console.log(`\nHand this link to ${answer.invitation.email} (one use, until ${answer.invitation.expires_at}):\n${answer.accept_url}`);
  process.exit(res.ok ? 0 : 1);
} catch (e) {
  console.error(`admin: ${e.message}`);
  process.exit(1);
}
