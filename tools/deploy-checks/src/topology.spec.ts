import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type ApiRoute, OAUTH_ROUTES } from '@analytics/schema';
import { systemBinary } from '@analytics/testing';
import { type Started, startNode, stopProcess } from '@analytics/topology';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the dashboard read as a person sees it, as dashboard.spec.ts reads it
import { CHROMIUM, type FunnelAnswer, HEADLINE, funnelOf, funnelRows, gridOf, launchChromium, listOf, loaded, shown, signIn, viewLoaded, watch } from '../../../apps/dashboard/src/test-support/page';
import { type Answer, http } from './http';
import { REDIS_URL, realStores } from './revocation-support';
import { type Loose, PUBLIC_ROUTES, concretePath, root } from './routes';

// The production shape end to end, as `npm run topology` starts it: two ingest-api replicas, read-api, mcp-gateway,
// admin-api and retention-worker as separate processes on ONE event store (the ClickHouse HTTP test harness),
// real PostgreSQL and real Redis, behind Debian's nginx with docker/nginx.conf. Every check goes through nginx.

const ADMIN_TOKEN = randomBytes(16).toString('hex');
const IP_HASH_SECRET = 'topology-e2e';
const NGINX = systemBinary({ name: 'nginx', env: 'NGINX_BIN', defaults: ['/usr/sbin/nginx', 'nginx'], aptPackage: 'nginx-light' });
const TOPOLOGY = 'dist/tools/topology/main.js';
// The spec's burst (200) with a slow refill: on a loaded machine 50/s would refill faster than the shared harness
// acknowledges, and the one-bucket check would depend on the machine's speed.
const TRACK_REFILL_PER_S = 1;

beforeAll(() => {
  execFileSync(process.execPath, ['tools/build.mjs'], { cwd: root, stdio: 'ignore' });
});

describe('npm run topology without its stores', () => {
  it('refuses to start, naming DATABASE_URL and REDIS_URL, before starting anything', () => {
    const run = spawnSync(process.execPath, [TOPOLOGY], { cwd: root, env: { PATH: process.env.PATH, NODE_OPTIONS: '' }, encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^topology: missing required settings DATABASE_URL, REDIS_URL: /);
    expect(run.stdout).toBe('');
  });
});

interface Running {
  cli: ChildProcess;
  proxy: number;
  clickhouseUrl: string;
  pids: Record<string, number>;
  /** Each process's own port, as the CLI prints it (`<name> pid <pid> http://127.0.0.1:<port>`). */
  ports: Record<string, number>;
  dataDir: string;
}

/** `node dist/tools/topology/main.js` (what `npm run topology` runs after the build), read until it prints Ready. */
function startTopologyCli(env: NodeJS.ProcessEnv): Promise<Running> {
  const dataDir = mkdtempSync(join(tmpdir(), 'topology-'));
  const cli = spawn(process.execPath, [TOPOLOGY], { cwd: root, env: { ...env, DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      cli.kill('SIGTERM');
      fail(new Error(`topology not ready within 120 s:\n${out}`));
    }, 120_000);
    const onData = (c: Buffer) => {
      out += c.toString();
      const ready = /Ready: http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (!ready) return;
      clearTimeout(timer);
      const pids = Object.fromEntries([...out.matchAll(/^(\S+)\s+pid (\d+)/gm)].map((m) => [m[1]!, Number(m[2])]));
      const ports = Object.fromEntries([...out.matchAll(/^(\S+)\s+pid \d+\s+http:\/\/127\.0\.0\.1:(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]));
      done({ cli, proxy: Number(ready[1]), clickhouseUrl: /clickhouse-harness\s+pid \d+\s+(http:\S+)/.exec(out)![1]!, pids, ports, dataDir });
    };
    cli.stdout!.on('data', onData);
    cli.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    cli.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`topology exited with ${code} before it was ready:\n${out}`));
    });
  });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Requests each ingest replica served so far (its request log, LOG_LEVEL=debug). */
const servedBy = (dataDir: string, name: string, path: string) =>
  readFileSync(join(dataDir, 'logs', `${name}.log`), 'utf8').split('\n').filter((l) => l.includes('"msg":"request"') && l.includes(`"path":"${path}"`)).length;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A fixed, recent, day-aligned window so the topology and the standalone service get identical events. */
const DAY0 = Math.floor(Date.now() / DAY) * DAY - DAY;
const WINDOW = { from: new Date(DAY0).toISOString(), to: new Date(DAY0 + 2 * DAY).toISOString() };
/** A UTC day as the dashboard's URL names it. */
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The same events for both deployments: tracks with sources, a batch, an identify. */
const TRACKS = Array.from({ length: 12 }, (_, i) => ({
  event: i % 3 === 0 ? '$pageview' : 'signup',
  anonymous_id: `anon-${i % 4}`,
  timestamp: new Date(DAY0 + 2 * HOUR + i * 60_000).toISOString(),
  url: `https://shop.example.com/p/${i}${i % 2 ? '?utm_source=newsletter&utm_medium=email' : '?gclid=abc'}`,
  referrer: i % 4 === 0 ? 'https://www.google.com/' : undefined,
  properties: { i },
}));
const BATCH = Array.from({ length: 30 }, (_, i) => ({
  event: 'purchase', anonymous_id: `anon-${i % 5}`, user_id: i % 2 ? `user-${i % 3}` : undefined,
  timestamp: new Date(DAY0 + 5 * HOUR + i * 1_000).toISOString(), url: 'https://shop.example.com/checkout', referrer: 'https://news.ycombinator.com/', properties: { total: i },
}));

/** A browser's user agent: events sent with it count as visits of people, not bots. */
const BROWSER_UA = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36' };

interface Target {
  port: number;
  id: string;
  keys: { pk: string; sk: string; rk: string };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
/** Closes the live stream a check opened (a no-op until one is open). */
let closeLive = (): void => undefined;
const post = (port: number, path: string, key: string, body: unknown) => http(port, 'POST', path, bearer(key), JSON.stringify(body));
const get = (port: number, path: string, key: string, params: Record<string, string>) => http(port, 'GET', `${path}?${new URLSearchParams(params)}`, bearer(key));
const mcp = (port: number, key: string, name: string, args: object) =>
  http(port, 'POST', '/mcp', { ...bearer(key), accept: 'application/json, text/event-stream' }, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }));

async function createProject(port: number, body: object = {}): Promise<Target> {
  const r = await http(port, 'POST', '/admin/projects', bearer(ADMIN_TOKEN), JSON.stringify({ name: 'topology', ...body }));
  expect(r.status).toBe(201);
  return { port, id: (r.json() as Loose).project.id, keys: (r.json() as Loose).keys };
}

/** The first account's owner, as the routes' calls and the people check share it: `/auth/setup` runs once per store. */
interface Owner {
  email: string;
  password: string;
  token: string;
  orgId: string;
  userId: string;
}
const OWNER = { email: 'owner@example.com', password: 'a long passphrase' };

/**
 * What the public routes' calls share: a project to read and change, a key to revoke, the SDK version served, and the
 * people routes' owner (set up by the `authSetup` call, in declaration order before every route that needs a person).
 */
interface Fixture {
  id: string;
  prefix: string;
  version: string;
  port: number;
  owner(): Promise<Owner>;
  /** Remembers what a call created for a later call (an organization to change, then delete). */
  saved: Record<string, string>;
}
/** A valid request to a public route beyond its declaration: the key its auth names is added, a body is its `example`. */
interface Call {
  params?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
  /** Reads what the answer created (the owner's session after setup or a reset, a new organization's id). */
  after?: (answer: Answer) => void;
  /** What this topology answers instead of the declared success (a feature it does not configure), from the route's app all the same. */
  status?: number;
  /** A stream that does not end (GET /v1/live): read until the body so far satisfies this, then closed. */
  until?: (body: string) => boolean;
}

const json = (body: object) => JSON.stringify(body);
/** A second session of the owner (to end one without ending the owner's). */
async function ownerSession(f: Fixture): Promise<string> {
  const r = await http(f.port, 'POST', '/auth/login', {}, json({ email: OWNER.email, password: OWNER.password }));
  expect(r.status).toBe(200);
  return (r.json() as Loose).token;
}
/** An invitation of the owner's organization, and the new member who accepted it when `accept`. */
async function invited(f: Fixture, email: string, accept: boolean): Promise<{ id: string; token: string; userId?: string }> {
  const o = await f.owner();
  const r = await http(f.port, 'POST', `/admin/orgs/${o.orgId}/invitations`, bearer(o.token), json({ email, role: 'viewer' }));
  expect(r.status).toBe(201);
  const { invitation, token } = r.json() as Loose;
  if (!accept) return { id: invitation.id, token };
  const a = await http(f.port, 'POST', '/auth/invitations/accept', {}, json({ token, password: 'a member passphrase' }));
  expect(a.status).toBe(200);
  return { id: invitation.id, token, userId: (a.json() as Loose).user.id };
}
/** The owner, set up through the proxy unless a call already did (then signed in with the session that call got). */
async function signedInOwner(port: number, saved: Record<string, string>): Promise<Owner> {
  if (!saved.ownerToken) {
    const setup = await http(port, 'POST', '/auth/setup', bearer(ADMIN_TOKEN), json(OWNER));
    expect({ status: setup.status, service: setup.service }).toEqual({ status: 201, service: 'admin-api' });
    saved.ownerToken = (setup.json() as Loose).token;
    saved.ownerId = (setup.json() as Loose).user.id;
  }
  if (!saved.ownerOrgId) saved.ownerOrgId = ((await http(port, 'GET', '/auth/me', bearer(saved.ownerToken!))).json() as Loose).organizations[0].id;
  return { ...OWNER, token: saved.ownerToken!, orgId: saved.ownerOrgId!, userId: saved.ownerId! };
}
const asOwner = async (f: Fixture, call: Omit<Call, 'headers'> = {}): Promise<Call> => ({ ...call, headers: bearer((await f.owner()).token) });

/** One valid request per public route (a route added to the declarations fails the check below until it has one). */
const CALLS: Record<string, (f: Fixture) => Call | Promise<Call>> = {
  track: () => ({}),
  batch: () => ({}),
  identify: () => ({}),
  forget: () => ({}),
  sdkScript: () => ({}),
  sdkScriptVersion: (f) => ({ params: { version: f.version } }),
  query: () => ({ query: WINDOW }),
  export: () => ({ query: { ...WINDOW, format: 'ndjson' } }),
  // An event stream: its first message read through the proxy, then the connection closed.
  live: () => ({ until: (body) => /^data: \{/m.test(body) }),
  stats: () => ({ query: WINDOW }),
  sources: () => ({ query: WINDOW }),
  insights: () => ({}),
  properties: () => ({ query: WINDOW }),
  project: () => ({}),
  funnel: () => ({}),
  retention: () => ({}),
  goals: () => ({}),
  funnels: () => ({}),
  segments: () => ({}),
  createProject: () => ({}),
  listProjects: () => ({}),
  getProject: (f) => ({ params: { id: f.id } }),
  updateProject: (f) => ({ params: { id: f.id } }),
  createKey: (f) => ({ params: { id: f.id } }),
  revokeKey: (f) => ({ params: { prefix: f.prefix } }),
  listKeys: (f) => ({ params: { id: f.id } }),
  // Another project than the fixture's: the calls after this one still read with the fixture's keys.
  deleteProject: async (f) => ({ params: { id: (await createProject(f.port)).id } }),
  // The declaration's example row, written by admin-api through its own event store (CLICKHOUSE_URL, as every app's).
  importEvents: (f) => ({ params: { id: f.id } }),
  // Saved definitions of the fixture's project (the operator's token): each created one is renamed, then deleted.
  listGoals: (f) => ({ params: { id: f.id } }),
  createGoal: (f) => ({ params: { id: f.id }, after: (r) => void (f.saved.goalId = (r.json() as Loose).goal.id) }),
  updateGoal: (f) => ({ params: { id: f.id, goal_id: f.saved.goalId! } }),
  deleteGoal: (f) => ({ params: { id: f.id, goal_id: f.saved.goalId! } }),
  listFunnels: (f) => ({ params: { id: f.id } }),
  createFunnel: (f) => ({ params: { id: f.id }, after: (r) => void (f.saved.funnelId = (r.json() as Loose).funnel.id) }),
  updateFunnel: (f) => ({ params: { id: f.id, funnel_id: f.saved.funnelId! } }),
  deleteFunnel: (f) => ({ params: { id: f.id, funnel_id: f.saved.funnelId! } }),
  listSegments: (f) => ({ params: { id: f.id } }),
  createSegment: (f) => ({ params: { id: f.id }, after: (r) => void (f.saved.segmentId = (r.json() as Loose).segment.id) }),
  updateSegment: (f) => ({ params: { id: f.id, segment_id: f.saved.segmentId! } }),
  deleteSegment: (f) => ({ params: { id: f.id, segment_id: f.saved.segmentId! } }),
  authSetup: (f) => ({
    body: OWNER,
    after: (r) => {
      const { token, user } = r.json() as Loose;
      f.saved.ownerToken = token;
      f.saved.ownerId = user.id;
    },
  }),
  authLogin: () => ({ body: OWNER }),
  authMe: (f) => asOwner(f),
  authLogout: async (f) => ({ headers: bearer(await ownerSession(f)) }),
  authSessions: (f) => asOwner(f),
  authDeleteSession: async (f) => asOwner(f, { params: { id: (await ownerSession(f)).split('_')[1]! } }),
  // The same password again: the owner's session (the caller's) stays, every other one ends.
  authPassword: (f) => asOwner(f, { body: { current_password: OWNER.password, new_password: OWNER.password } }),
  authPasswordReset: () => ({ body: { email: OWNER.email } }),
  authPasswordResetConfirm: async (f) => {
    const r = await http(f.port, 'POST', '/admin/password-resets', bearer(ADMIN_TOKEN), json({ email: OWNER.email }));
    expect(r.status).toBe(201);
    const token = new URLSearchParams(new URL((r.json() as Loose).reset_url).hash.slice(1)).get('reset')!;
    // A reset signs the person in anew: the calls after it use that session.
    return { body: { token, password: OWNER.password }, after: (a) => void (f.saved.ownerToken = (a.json() as Loose).token) };
  },
  authAcceptInvitation: async (f) => ({ body: { token: (await invited(f, 'accepts@example.com', false)).token, password: 'a member passphrase' } }),
  authConfig: () => ({}),
  // Single sign-on is not configured in the topology (apps/admin-api/src/sso.spec.ts runs it against a real provider):
  // admin-api's own 404 not_found shows that nginx routes each of its paths there.
  authOidcStart: () => ({ status: 404 }),
  authOidcCallback: () => ({ query: { code: 'c', state: 's' }, status: 404 }),
  authOidcComplete: () => ({ body: { code: 'sso_x', secret: 'a secret of at least thirty-two characters' }, status: 404 }),
  authReadKey: async (f) => {
    const o = await f.owner();
    const created = await http(f.port, 'POST', '/admin/projects', bearer(o.token), json({ name: 'read-key', org_id: o.orgId }));
    expect(created.status).toBe(201);
    return asOwner(f, { body: { project_id: (created.json() as Loose).project.id } });
  },
  listOrgs: (f) => asOwner(f),
  createOrg: (f) => asOwner(f, { after: (r) => void (f.saved.orgId = (r.json() as Loose).org.id) }),
  updateOrg: (f) => asOwner(f, { params: { id: f.saved.orgId! }, body: { name: 'Acme renamed' } }),
  deleteOrg: (f) => asOwner(f, { params: { id: f.saved.orgId! } }),
  createInvitation: async (f) => asOwner(f, { params: { id: (await f.owner()).orgId } }),
  listInvitations: async (f) => asOwner(f, { params: { id: (await f.owner()).orgId } }),
  deleteInvitation: async (f) => asOwner(f, { params: { id: (await f.owner()).orgId, invitation_id: (await invited(f, 'withdrawn@example.com', false)).id } }),
  listMembers: async (f) => asOwner(f, { params: { id: (await f.owner()).orgId } }),
  updateMember: async (f) => asOwner(f, { params: { id: (await f.owner()).orgId, user_id: (await invited(f, 'promoted@example.com', true)).userId! } }),
  removeMember: async (f) => asOwner(f, { params: { id: (await f.owner()).orgId, user_id: (await invited(f, 'removed@example.com', true)).userId! } }),
  orgAudit: async (f) => asOwner(f, { params: { id: (await f.owner()).orgId } }),
  listUsers: () => ({}),
  createPasswordReset: () => ({ body: { email: OWNER.email } }),
  mcp: () => ({ headers: { accept: 'application/json, text/event-stream' } }),
  // Share links: the operator's token (credentialsFor) on the fixture's project; the deletion revokes the link made first.
  createShare: (f) => ({ params: { id: f.id }, after: (r) => void (f.saved.shareId = (r.json() as Loose).share.id) }),
  listShares: (f) => ({ params: { id: f.id } }),
  deleteShare: (f) => ({ params: { id: f.id, share_id: f.saved.shareId! } }),
  shareFrameAncestors: () => ({ query: { token: 'shr_unknown_unknown', embed: '1' } }),
  // Scheduled reports of the fixture's project (the operator's token): the one created is read, changed, previewed, deleted.
  listReports: (f) => ({ params: { id: f.id } }),
  createReport: (f) => ({ params: { id: f.id }, after: (r) => void (f.saved.reportId = (r.json() as Loose).report.id) }),
  getReport: (f) => ({ params: { id: f.id, report_id: f.saved.reportId! } }),
  updateReport: (f) => ({ params: { id: f.id, report_id: f.saved.reportId! } }),
  // The topology sets no SMTP_URL: admin-api's own 503 not_ready (apps/admin-api reports.spec.ts mails previews).
  sendReport: (f) => ({ params: { id: f.id, report_id: f.saved.reportId! }, status: 503 }),
  deleteReport: (f) => ({ params: { id: f.id, report_id: f.saved.reportId! } }),
  // No mail, so no link: admin-api's own 404 for a token it does not know shows that nginx routes the path there.
  reportUnsubscribePage: () => ({ params: { token: 'A'.repeat(43) }, status: 404 }),
  reportUnsubscribe: () => ({ params: { token: 'A'.repeat(43) }, status: 404 }),
  shareUnlock: async (f) => {
    const r = await http(f.port, 'POST', `/admin/projects/${f.id}/shares`, bearer(ADMIN_TOKEN), json({ name: 'unlock' }));
    expect(r.status).toBe(201);
    return { body: { token: ((r.json() as Loose).url as string).split('/share/')[1] } };
  },
  // Alerts: the operator's token on the fixture's project (an email channel: no outbound address to resolve here).
  listAlerts: (f) => ({ params: { id: f.id } }),
  createAlert: (f) => ({
    params: { id: f.id },
    body: { name: 'topology', metric: 'pageviews', window: '1h', condition: { below: 1 }, channels: [{ email: ['ops@example.com'] }] },
    after: (r) => void (f.saved.alertId = (r.json() as Loose).alert.id),
  }),
  getAlert: (f) => ({ params: { id: f.id, alert_id: f.saved.alertId! } }),
  updateAlert: (f) => ({ params: { id: f.id, alert_id: f.saved.alertId! } }),
  alertDeliveries: (f) => ({ params: { id: f.id, alert_id: f.saved.alertId! } }),
  testAlert: (f) => ({ params: { id: f.id, alert_id: f.saved.alertId! } }),
  deleteAlert: (f) => ({ params: { id: f.id, alert_id: f.saved.alertId! } }),
  // Annotations (issue 48): the sk_ key adds one (the declaration's example) and deletes it; the operator likewise.
  annotations: () => ({ query: WINDOW }),
  createAnnotation: (f) => ({ after: (r) => void (f.saved.annotationId = (r.json() as Loose).annotation.id) }),
  deleteAnnotation: (f) => ({ params: { annotation_id: f.saved.annotationId! } }),
  listProjectAnnotations: (f) => ({ params: { id: f.id }, query: WINDOW }),
  createProjectAnnotation: (f) => ({ params: { id: f.id }, after: (r) => void (f.saved.projectAnnotationId = (r.json() as Loose).annotation.id) }),
  deleteProjectAnnotation: (f) => ({ params: { id: f.id, annotation_id: f.saved.projectAnnotationId! } }),
};

/** The credential a route's `auth` takes, from the project's keys (a server key where it may be one). */
function credentialsFor(route: ApiRoute, keys: Target['keys']): Record<string, string> {
  if (route.auth === 'admin_token') return bearer(ADMIN_TOKEN);
  if (typeof route.auth !== 'object') return {};
  // A person's routes: the operator's token where it is accepted; the calls give a user's session where only one will do.
  if ('session' in route.auth) return route.auth.session === 'optional' ? {} : bearer(ADMIN_TOKEN);
  const kinds = route.auth.api_key;
  const kind = (['sk', 'rk', 'pk'] as const).find((k) => kinds.includes(k));
  return kind ? bearer(keys[kind]) : {};
}

/** Rows in a stable order: the spec leaves the order of query, stats and sources rows open. */
const sorted = (rows: unknown[]) => [...rows].map((r) => JSON.stringify(r)).sort();

/** What a reader sees of the events: the three read endpoints and the three MCP read tools. */
async function answers(t: Target): Promise<Loose> {
  const json = (a: Answer) => {
    expect(a.status).toBe(200);
    return a.json() as Loose;
  };
  // event_id is generated per request when omitted: the one field two deployments cannot share.
  const withoutIds = (rows: Array<Record<string, unknown>>) => rows.map(({ event_id: _id, ...row }) => row);
  const query = json(await get(t.port, '/v1/query', t.keys.rk, { ...WINDOW, limit: '1000' }));
  const stats = json(await get(t.port, '/v1/stats', t.keys.rk, { ...WINDOW, group_by: 'event_name,source,medium', interval: 'hour' }));
  const uniques = json(await get(t.port, '/v1/stats', t.keys.rk, { ...WINDOW, metric: 'uniques', group_by: 'event_name' }));
  const sources = json(await get(t.port, '/v1/sources', t.keys.rk, WINDOW));
  const tool = async (name: string, args: object) => (json(await mcp(t.port, t.keys.rk, name, args)).result as Loose).structuredContent;
  const mcpQuery = await tool('query_events', { ...WINDOW, limit: 1000 });
  const mcpStats = await tool('get_stats', { ...WINDOW, group_by: 'event_name,source,medium' });
  const mcpSources = await tool('top_sources', { ...WINDOW, breakdown: 'source' });
  return {
    query: sorted(withoutIds(query.rows)), stats: sorted(stats.rows), uniques: sorted(uniques.rows), sources: sorted(sources.rows),
    mcpQuery: sorted(withoutIds(mcpQuery.rows)), mcpStats: sorted(mcpStats.rows), mcpSources: sorted(mcpSources.rows),
  };
}

NGINX.describe('the production shape: separate deployables on one shared store behind nginx (npm run topology)', () => {
  let topo: Running;
  let browser: Browser | undefined;
  /** The first account, shared by the checks that need a person (`/auth/setup` answers 201 once per store). */
  const people: Record<string, string> = {};
  let standalone: Started;
  let standaloneDir: string;
  let dbUrl: string;
  let dropSchema: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    // The real PostgreSQL (a schema of its own) and Redis: when they are down this fails, it never skips.
    ({ databaseUrl: dbUrl, drop: dropSchema } = await realStores('topology'));
    const base = { PATH: process.env.PATH, NODE_OPTIONS: '', LOG_LEVEL: 'debug' };
    standaloneDir = mkdtempSync(join(tmpdir(), 'topology-standalone-'));
    const [shape, reference] = await Promise.allSettled([
      startTopologyCli({
        ...base, DATABASE_URL: dbUrl, REDIS_URL, NGINX_BIN: NGINX.path, PROXY_PORT: '0', ADMIN_TOKEN, INTERNAL_SECRET: randomBytes(16).toString('hex'), IP_HASH_SECRET,
        RATE_LIMIT_TRACK_PER_S: String(TRACK_REFILL_PER_S),
        // Reads of the aggregates wait for the builder (read-your-writes, off by default), so the topology's answers
        // right after the writes compare with the embedded store's at one moment.
        AGGREGATE_WAIT_MS: '20000',
      }),
      // The standalone service (npm start) on the embedded stores: the reference answers.
      // Opening the embedded stores can take longer than the default 60 s on a loaded, shared machine.
      startNode('standalone', ['dist/apps/standalone/main.js'], { cwd: root, env: { ...base, LOG_LEVEL: 'info', PORT: '0', DATA_DIR: standaloneDir, ADMIN_TOKEN, IP_HASH_SECRET }, timeoutMs: 150_000 }),
    ]);
    if (shape.status === 'fulfilled') topo = shape.value;
    if (reference.status === 'fulfilled') standalone = reference.value;
    for (const r of [shape, reference]) if (r.status === 'rejected') throw r.reason;
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (topo) await stopProcess(topo.cli, 30_000);
    await stopProcess(standalone?.proc);
    for (const d of [topo?.dataDir, standaloneDir]) if (d) rmSync(d, { recursive: true, force: true });
    await dropSchema?.();
  }, 180_000);

  it('tracks and batches over both ingest replicas and reads back through read-api and MCP what the standalone service answers', async () => {
    const shape = await createProject(topo.proxy);
    const reference = await createProject(standalone.port);
    const before = { one: servedBy(topo.dataDir, 'ingest-api-1', '/v1/track'), two: servedBy(topo.dataDir, 'ingest-api-2', '/v1/track') };
    for (const t of [shape, reference]) {
      for (const event of TRACKS) {
        const r = await post(t.port, '/v1/track', t.keys.sk, event);
        expect({ status: r.status, ok: r.json().ok }).toEqual({ status: 202, ok: true });
      }
      for (let i = 0; i < BATCH.length; i += 10) expect((await post(t.port, '/v1/batch', t.keys.sk, { events: BATCH.slice(i, i + 10) })).json()).toEqual({ ok: true, count: 10 });
    }
    // nginx spread the tracks over both replicas.
    expect(servedBy(topo.dataDir, 'ingest-api-1', '/v1/track') - before.one).toBeGreaterThan(0);
    expect(servedBy(topo.dataDir, 'ingest-api-2', '/v1/track') - before.two).toBeGreaterThan(0);

    const expected = await answers(reference);
    expect(expected.query).toHaveLength(TRACKS.length + BATCH.length);
    expect(await answers(shape)).toEqual(expected);
  });

  it("answers every declared public route through nginx from the app that serves it, with its declared success status; an undeclared path is the proxy's 404", async () => {
    const missing = PUBLIC_ROUTES.filter(({ name }) => !CALLS[name]).map(({ name }) => `${name}: add a valid request for it to CALLS in tools/deploy-checks/src/topology.spec.ts`);
    expect(missing).toEqual([]);
    const t = await createProject(topo.proxy);
    const minted = await http(topo.proxy, 'POST', `/admin/projects/${t.id}/keys`, bearer(ADMIN_TOKEN), JSON.stringify({ kind: 'rk' }));
    expect(minted.status).toBe(201);
    const { version } = JSON.parse(readFileSync(join(root, 'dist/libs/sdk-browser/package.json'), 'utf8')) as { version: string };
    const fixture: Fixture = { id: t.id, prefix: minted.json().prefix, version, port: topo.proxy, saved: people, owner: () => signedInOwner(topo.proxy, people) };
    const answered: Array<{ name: string; service: string | undefined; status: number | string }> = [];
    for (const { name, route } of PUBLIC_ROUTES) {
      const call = await CALLS[name]!(fixture);
      const body = route.body ? (call.body ?? route.example) : undefined;
      const path = `${concretePath(route.path, call.params)}${call.query ? `?${new URLSearchParams(call.query)}` : ''}`;
      const r = await http(topo.proxy, route.method.toUpperCase(), path, { ...credentialsFor(route, t.keys), ...call.headers }, body === undefined ? undefined : JSON.stringify(body), call.until);
      const declared = Object.keys(route.responses).map(Number);
      if (declared.includes(r.status)) call.after?.(r);
      answered.push({ name, service: r.service, status: declared.includes(r.status) || r.status === call.status ? 'declared' : `${r.status} ${r.body.slice(0, 200)}` });
    }
    expect(answered).toEqual(PUBLIC_ROUTES.map(({ name, route }) => ({ name, service: route.app, status: 'declared' })));

    // With valid credentials still: a path no declaration names never reaches an app.
    for (const [method, path, key] of [['GET', '/v1/unknown', t.keys.rk], ['POST', '/v1/insights/x', t.keys.rk], ['GET', '/admin/nope', ADMIN_TOKEN], ['GET', `/admin/projects/${t.id}/x`, ADMIN_TOKEN], ['POST', '/admin/backup', ADMIN_TOKEN], ['GET', '/sdk/nope.js', t.keys.pk], ['POST', '/internal/retention/run', t.keys.sk]] as const) {
      const r = await http(topo.proxy, method, path, bearer(key), method === 'POST' ? '{}' : undefined);
      expect({ method, path, status: r.status, service: r.service, body: r.json() }).toEqual({ method, path, status: 404, service: undefined, body: { error: 'not_found' } });
    }
  });

  it('serves the OAuth endpoints of /mcp (libs/schema OAUTH_ROUTES) through nginx from mcp-gateway: metadata, registration, consent page, code, token, tools/list and revocation', async () => {
    // PUBLIC_URL of the apps (tools/topology): the proxy's origin, which the metadata names.
    const base = `http://127.0.0.1:${topo.proxy}`;
    const reached = new Set<string>();
    const call = async (method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}, body?: string) => {
      const r = await http(topo.proxy, method, path, headers, body);
      reached.add(`${method} ${path.split('?')[0]}`);
      return r;
    };
    const form = (fields: Record<string, string>) => [{ 'content-type': 'application/x-www-form-urlencoded' }, new URLSearchParams(fields).toString()] as const;

    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const prm = await call('GET', path);
      expect({ path, status: prm.status, service: prm.service, type: prm.headers['content-type'], body: prm.json() }).toEqual({
        path, status: 200, service: 'mcp-gateway', type: expect.stringMatching(/^application\/json/),
        body: expect.objectContaining({ resource: `${base}/mcp`, authorization_servers: [`${base}/`] }),
      });
    }
    const asm = await call('GET', '/.well-known/oauth-authorization-server');
    expect({ status: asm.status, service: asm.service, body: asm.json() }).toEqual({
      status: 200, service: 'mcp-gateway',
      body: expect.objectContaining({
        issuer: `${base}/`, authorization_endpoint: `${base}/authorize`, token_endpoint: `${base}/token`, registration_endpoint: `${base}/register`,
        revocation_endpoint: `${base}/revoke`, code_challenge_methods_supported: ['S256'],
      }),
    });

    const redirectUri = 'http://127.0.0.1:9/cb';
    const registered = await call('POST', '/register', {}, json({ redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', client_name: 'topology' }));
    expect({ status: registered.status, service: registered.service, clientId: registered.json().client_id }).toEqual({ status: 201, service: 'mcp-gateway', clientId: expect.any(String) });
    const clientId = (registered.json() as Loose).client_id as string;

    const verifier = randomBytes(32).toString('base64url');
    const authorization = {
      response_type: 'code', client_id: clientId, redirect_uri: redirectUri,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', state: 'topology-state',
    };
    const page = await call('GET', `/authorize?${new URLSearchParams(authorization)}`);
    expect({ status: page.status, service: page.service, type: page.headers['content-type'] }).toEqual({ status: 200, service: 'mcp-gateway', type: expect.stringMatching(/^text\/html/) });
    expect(page.body).toContain('<form method="post" action="/authorize">');
    expect(page.body).toContain('topology');

    // Refusals are the OAuth error JSON from mcp-gateway, not the proxy's {"error":"not_found"}.
    const badGrant = await call('POST', '/token', ...form({ grant_type: 'authorization_code', client_id: clientId, code: 'not-a-code', code_verifier: verifier, redirect_uri: redirectUri }));
    expect({ status: badGrant.status, service: badGrant.service, error: badGrant.json().error }).toEqual({ status: 400, service: 'mcp-gateway', error: 'invalid_grant' });
    const badClient = await call('POST', '/revoke', ...form({ client_id: 'no-such-client', token: 'mcp_at_nope' }));
    expect({ status: badClient.status, service: badClient.service, error: badClient.json().error }).toEqual({ status: 400, service: 'mcp-gateway', error: 'invalid_client' });

    // The whole flow through the proxy: the key form's POST, the code for tokens, /mcp with the token, its revocation.
    const t = await createProject(topo.proxy);
    const consent = await call('POST', '/authorize', ...form({ ...authorization, api_key: t.keys.rk }));
    expect({ status: consent.status, service: consent.service }).toEqual({ status: 302, service: 'mcp-gateway' });
    const back = new URL(consent.headers.location as string);
    expect({ target: `${back.origin}${back.pathname}`, state: back.searchParams.get('state') }).toEqual({ target: redirectUri, state: 'topology-state' });
    const tokens = await call('POST', '/token', ...form({ grant_type: 'authorization_code', client_id: clientId, code: back.searchParams.get('code')!, code_verifier: verifier, redirect_uri: redirectUri }));
    expect({ status: tokens.status, service: tokens.service, body: tokens.json() }).toEqual({ status: 200, service: 'mcp-gateway', body: expect.objectContaining({ access_token: expect.stringMatching(/^mcp_at_/), token_type: 'bearer' }) });
    const accessToken = (tokens.json() as Loose).access_token as string;
    const listTools = () => http(topo.proxy, 'POST', '/mcp', { ...bearer(accessToken), accept: 'application/json, text/event-stream' }, json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    const tools = await listTools();
    expect({ status: tools.status, service: tools.service, named: ((tools.json() as Loose).result.tools as Array<{ name: string }>).some((tool) => tool.name === 'get_stats') }).toEqual({ status: 200, service: 'mcp-gateway', named: true });
    const revoked = await call('POST', '/revoke', ...form({ client_id: clientId, token: accessToken }));
    expect({ status: revoked.status, service: revoked.service }).toEqual({ status: 200, service: 'mcp-gateway' });
    expect((await listTools()).status).toBe(401);

    // Every declared endpoint and method was called through the proxy (an endpoint added to OAUTH_ROUTES fails here until it is).
    expect(OAUTH_ROUTES.flatMap((r) => r.methods.map((m) => `${m.toUpperCase()} ${r.path}`)).filter((m) => !reached.has(m))).toEqual([]);
    // Beside them, nothing reaches an app.
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-protected-resource/x', '/authorize/x', '/oauth/token']) {
      const r = await http(topo.proxy, 'GET', path);
      expect({ path, status: r.status, service: r.service, body: r.json() }).toEqual({ path, status: 404, service: undefined, body: { error: 'not_found' } });
    }
  });

  // Before the tests that stop processes: the dashboard needs every app and the aggregate builder running.
  CHROMIUM.it('opens the dashboard in Chromium through the proxy, signs in with the read key and shows what the API answers through it: top stats, top lists, properties, funnel and retention', async () => {
    const t = await createProject(topo.proxy);
    const sent = await http(topo.proxy, 'POST', '/v1/batch', { ...bearer(t.keys.sk), ...BROWSER_UA }, JSON.stringify({ events: [...TRACKS, ...BATCH] }));
    expect(sent.json()).toEqual({ ok: true, count: TRACKS.length + BATCH.length });
    const base = `http://127.0.0.1:${topo.proxy}`;
    const range = { from: day(DAY0), to: day(DAY0 + 2 * DAY) };
    /** The API's answer through the same proxy, asked as any API user would. */
    const ask = async <T = { rows: Array<Record<string, Loose>> }>(path: string, body: object): Promise<T> => {
      const r = await post(topo.proxy, path, t.keys.rk, body);
      expect({ path, status: r.status, service: r.service }).toEqual({ path, status: 200, service: 'read-api' });
      return r.json() as T;
    };

    browser = await launchChromium();
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const problems = watch(page, base);
    const steps = [{ event: '$pageview' }, { event: 'signup' }, { event: 'purchase' }];
    await signIn(page, `${base}/?from=${range.from}&to=${range.to}&fs=${steps.map((s) => s.event).join(',')}`, t.keys.rk, 120_000);
    expect(await page.isHidden('#load-error')).toBe(true);

    const [totals] = (await ask('/v1/insights', { ...range, metrics: HEADLINE, compare: 'previous_period' })).rows;
    expect(Number(totals!['visitors'])).toBeGreaterThan(0);
    for (const m of HEADLINE) expect([m, await shown(page, m)]).toEqual([m, Number(totals![m])]);
    for (const [id, dimension, metric] of [['list-sources', 'source', 'visitors'], ['list-pages', 'path', 'visitors'], ['list-events', 'event_name', 'events']] as const) {
      const rows = (await ask('/v1/insights', { ...range, metrics: [metric], dimensions: [dimension], limit: 10 })).rows;
      expect(rows.length).toBeGreaterThan(0);
      expect([id, await listOf(page, id)]).toEqual([id, rows.map((r) => [r[dimension] === null ? '' : String(r[dimension]), Number(r[metric])])]);
    }
    // The properties panel: a key GET /v1/properties names, and its values by visitors.
    const keys = await get(topo.proxy, '/v1/properties', t.keys.rk, range);
    expect({ status: keys.status, service: keys.service }).toEqual({ status: 200, service: 'read-api' });
    const key = await page.inputValue('#prop-key');
    expect((keys.json().rows as Array<{ key: string }>).map((r) => r.key)).toContain(key);
    const values = (await ask('/v1/insights', { ...range, metrics: ['visitors'], dimensions: [`prop:${key}`], limit: 10 })).rows;
    expect(await listOf(page, 'list-props')).toEqual(values.map((r) => [r[`prop:${key}`] === null ? '' : String(r[`prop:${key}`]), Number(r['visitors'])]));

    await page.click('#view-funnel');
    await viewLoaded(page, 120_000);
    const funnel = await ask<FunnelAnswer>('/v1/funnel', { ...range, steps });
    expect(funnel.steps[0]!.count).toBeGreaterThan(0);
    expect(await funnelOf(page)).toEqual(funnelRows(funnel));

    await page.click('#view-retention');
    await page.waitForURL((u) => u.search.endsWith('&view=retention'));
    await viewLoaded(page, 120_000);
    const retention = await ask<{ cohorts: Array<{ cohort: string; size: number; returned: number[] }> }>('/v1/retention', { ...range, period: 'week', count_by: 'user' });
    expect(retention.cohorts.length).toBeGreaterThan(0);
    expect(await gridOf(page)).toEqual(retention.cohorts.map((c) => [c.cohort, c.size, ...c.returned]));
    expect(problems).toEqual([]);
  }, 300_000);

  it('keeps one track bucket per project across both ingest replicas (burst 200), not one per replica', async () => {
    const t = await createProject(topo.proxy);
    const started = Date.now();
    // All at once: the bucket decides on arrival, before the (slow, shared) insert.
    const statuses = await Promise.all(Array.from({ length: 500 }, async () => (await post(t.port, '/v1/track', t.keys.sk, { event: 'burst', anonymous_id: 'burst' })).status));
    const seconds = (Date.now() - started) / 1000;
    const accepted = statuses.filter((s) => s === 202).length;
    expect(statuses.filter((s) => s !== 202 && s !== 429)).toEqual([]);
    // One bucket lets the burst through plus the refill meanwhile; one per replica would let at least 400 through.
    expect(accepted).toBeGreaterThanOrEqual(200);
    expect(accepted).toBeLessThanOrEqual(200 + Math.ceil(TRACK_REFILL_PER_S * seconds) + 2);
  });

  it('continues one visit by inactivity across both ingest replicas (the visit state in Redis), across clock buckets', async () => {
    const t = await createProject(topo.proxy);
    const before = { one: servedBy(topo.dataDir, 'ingest-api-1', '/v1/track'), two: servedBy(topo.dataDir, 'ingest-api-2', '/v1/track') };
    // 8 pageviews 20 minutes apart, ending 40 minutes ago: 6 clock buckets, one visit.
    const start = Date.now() - 3 * HOUR;
    for (let i = 0; i < 8; i++) {
      const event = { event: '$pageview', anonymous_id: 'walker', timestamp: new Date(start + i * 20 * 60_000).toISOString(), url: `https://shop.example.com/p/${i}`, referrer: i === 0 ? 'https://www.google.com/' : `https://shop.example.com/p/${i - 1}` };
      const r = await http(t.port, 'POST', '/v1/track', { ...bearer(t.keys.sk), ...BROWSER_UA }, JSON.stringify(event));
      expect(r.status).toBe(202);
    }
    expect(servedBy(topo.dataDir, 'ingest-api-1', '/v1/track') - before.one).toBeGreaterThan(0);
    expect(servedBy(topo.dataDir, 'ingest-api-2', '/v1/track') - before.two).toBeGreaterThan(0);
    const body = { from: new Date(start - HOUR).toISOString(), to: new Date(Date.now() + HOUR).toISOString(), metrics: ['visitors', 'visits', 'bounce_rate', 'pageviews'], dimensions: ['source', 'entry_path'] };
    const r = await post(t.port, '/v1/insights', t.keys.rk, body);
    expect({ status: r.status, rows: (r.json() as Loose).rows }).toEqual({ status: 200, rows: [{ source: 'google', entry_path: '/p/0', visitors: 1, visits: 1, bounce_rate: 0, pageviews: 8 }] });
  });

  it('streams GET /v1/live through nginx as it is sent: a tracked pageview shows in a message, pings between, and revoking the key ends the stream', async () => {
    const t = await createProject(topo.proxy);
    let text = '';
    let ended = false;
    const opened = new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: topo.proxy, path: '/v1/live', headers: bearer(t.keys.rk) }, (res) => {
        resolve({ status: res.statusCode!, headers: res.headers });
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => (ended = true));
        res.on('error', () => (ended = true));
      });
      req.on('error', reject);
      req.end();
      closeLive = () => req.destroy();
    });
    const until = async (done: () => boolean, ms: number) => {
      const deadline = Date.now() + ms;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`GET /v1/live through nginx: ${text.slice(-500)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const messages = () => [...text.matchAll(/^data: (\{.*\})$/gm)].map((m) => JSON.parse(m[1]!) as Loose);
    try {
      const { status, headers } = await opened;
      expect({ status, type: headers['content-type'], service: headers['x-service'] }).toEqual({ status: 200, type: 'text/event-stream; charset=utf-8', service: 'read-api' });
      // The first message at once, through the proxy (nothing held back until a buffer fills).
      await until(() => messages().length >= 1, 10_000);
      expect(messages()[0]).toMatchObject({ visitors: 0, pageviews_per_minute: Array(30).fill(0), events: [] });
      expect((await http(t.port, 'POST', '/v1/track', { ...bearer(t.keys.sk), ...BROWSER_UA }, JSON.stringify({ event: '$pageview', anonymous_id: 'live-1', url: 'https://shop.example.com/live-now' }))).status).toBe(202);
      await until(() => messages().some((m) => m.events.some((e: Loose) => e.path === '/live-now')), 40_000);
      const last = messages().at(-1)!;
      expect(last.visitors).toBe(1);
      expect(JSON.stringify(last)).not.toContain('live-1');
      expect(text).toMatch(/^: ping$/m);
      const prefix = t.keys.rk.split('_').slice(0, 3).join('_');
      expect((await http(t.port, 'DELETE', `/admin/keys/${prefix}`, bearer(ADMIN_TOKEN))).status).toBe(204);
      await until(() => ended, 15_000);
      expect(text).toMatch(/event: error\ndata: \{"error":"invalid_api_key"\}\n\n$/);
    } finally {
      closeLive();
    }
  });

  it('refuses a key revoked through admin-api at once on both ingest replicas', async () => {
    const t = await createProject(topo.proxy);
    const track = () => post(t.port, '/v1/track', t.keys.sk, { event: 'before_revoke', anonymous_id: 'rev' });
    // Round-robin: consecutive requests warm the key cache of both replicas.
    for (let i = 0; i < 4; i++) expect((await track()).status).toBe(202);
    const prefix = t.keys.sk.split('_').slice(0, 3).join('_');
    const revoked = await http(t.port, 'DELETE', `/admin/keys/${prefix}`, bearer(ADMIN_TOKEN));
    expect({ status: revoked.status, service: revoked.service }).toEqual({ status: 204, service: 'admin-api' });
    const after = await Promise.all(Array.from({ length: 6 }, async () => (await track()).json().error));
    expect(after).toEqual(Array(6).fill('invalid_api_key'));
  });

  it('signs people in through the proxy (admin-api), reads with a session read key (read-api), and a removal refuses that key on read-api before it answers', async () => {
    const signedIn = await signedInOwner(topo.proxy, people);
    const owner = bearer(signedIn.token);
    const orgId = signedIn.orgId;
    const project = (await http(topo.proxy, 'POST', '/admin/projects', owner, json({ name: 'people', org_id: orgId }))).json() as Loose;
    const invitation = (await http(topo.proxy, 'POST', `/admin/orgs/${orgId}/invitations`, owner, json({ email: 'viewer@example.com', role: 'viewer' }))).json() as Loose;
    const viewer = (await http(topo.proxy, 'POST', '/auth/invitations/accept', {}, json({ token: invitation.token, password: 'another passphrase' }))).json() as Loose;
    const minted = await http(topo.proxy, 'POST', '/auth/read-key', bearer(viewer.token), json({ project_id: project.project.id }));
    expect(minted.status).toBe(201);
    const key = (minted.json() as Loose).key;
    const read = () => get(topo.proxy, '/v1/stats', key, WINDOW);
    // Round-robin is not at play (one read-api), but its key cache is: warm it, then remove the member.
    expect({ status: (await read()).status, service: (await read()).service }).toEqual({ status: 200, service: 'read-api' });
    const removed = await http(topo.proxy, 'DELETE', `/admin/orgs/${orgId}/members/${viewer.user.id}`, owner);
    expect({ status: removed.status, service: removed.service }).toEqual({ status: 204, service: 'admin-api' });
    expect((await read()).json()).toEqual({ error: 'invalid_api_key' });
    expect((await http(topo.proxy, 'GET', `/admin/projects/${project.project.id}`, bearer(viewer.token))).json()).toEqual({ error: 'not_found' });
  });

  CHROMIUM.it("people in Chromium through the proxy: the owner signs in with a password and reads a project of their organization with the session read key; a viewer invited on the members page joins in another browser context, sees the dashboard and no keys; removed by the owner, the viewer's next read is refused", async () => {
    const base = `http://127.0.0.1:${topo.proxy}`;
    const VIEWER = { email: 'browser-viewer@example.com', name: 'Victor Viewer', password: 'a viewer passphrase' };
    // The owner exists once per store: set up here unless an earlier check did (the browser signs in with its password).
    const owner = await signedInOwner(topo.proxy, people);
    const orgName = ((await http(topo.proxy, 'GET', '/auth/me', bearer(owner.token))).json() as Loose).organizations.find((o: Loose) => o.id === owner.orgId).name as string;
    const created = await http(topo.proxy, 'POST', '/admin/projects', bearer(owner.token), json({ name: 'browser-people', org_id: owner.orgId }));
    expect({ status: created.status, service: created.service }).toEqual({ status: 201, service: 'admin-api' });
    const { project, keys } = created.json() as { project: { id: string; name: string }; keys: Target['keys'] };
    const sent = await http(topo.proxy, 'POST', '/v1/batch', { ...bearer(keys.sk), ...BROWSER_UA }, json({ events: TRACKS }));
    expect({ status: sent.status, body: sent.json() }).toEqual({ status: 202, body: { ok: true, count: TRACKS.length } });
    // The owner's view names this range; the viewer's is the default (the last 7 days): both hold every event (all on DAY0).
    const range = { from: day(DAY0), to: day(DAY0 + 2 * DAY) };
    const asked = await post(topo.proxy, '/v1/insights', keys.rk, { ...range, metrics: HEADLINE, compare: 'previous_period' });
    expect({ status: asked.status, service: asked.service }).toEqual({ status: 200, service: 'read-api' });
    const totals = (asked.json() as Loose).rows[0] as Record<string, number>;
    expect({ events: Number(totals['events']), visitors: Number(totals['visitors']) > 0 }).toEqual({ events: TRACKS.length, visitors: true });
    const headlineOf = async (page: Page) => Object.fromEntries(await Promise.all(HEADLINE.map(async (m) => [m, await shown(page, m)] as const)));
    const expected = Object.fromEntries(HEADLINE.map((m) => [m, Number(totals[m])]));

    browser ??= await launchChromium();
    const contexts: BrowserContext[] = [];
    /** A new browser (its own storage), its page watched, and the Authorization of every read it sends. */
    const open = async () => {
      const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
      contexts.push(context);
      const page = await context.newPage();
      const reads: string[] = [];
      page.on('request', (r) => {
        if (r.url().startsWith(`${base}/v1/`)) reads.push(r.headers()['authorization'] ?? '');
      });
      return { page, problems: watch(page, base), reads };
    };
    const sessionReadKey = (page: Page, projectId: string) => page.evaluate((id) => (JSON.parse(sessionStorage.getItem('analytics.sessionReadKeys') ?? '{}') as Record<string, { key: string }>)[id]?.key, projectId);
    const titled = (page: Page, name: string) => page.waitForFunction((n) => document.getElementById('project-title')?.textContent?.includes(n), name);
    try {
      // 1. The sign-in page through the proxy: email and password.
      const a = await open();
      await a.page.goto(`${base}/?from=${range.from}&to=${range.to}`);
      await a.page.waitForSelector('#login-page:not([hidden])');
      expect(await a.page.isHidden('#setup-page')).toBe(true);
      await a.page.fill('#login-email', OWNER.email);
      await a.page.fill('#login-password', OWNER.password);
      await a.page.press('#login-password', 'Enter');
      await loaded(a.page, 60_000);
      expect(await a.page.evaluate(() => localStorage.getItem('analytics.session'))).toMatch(/^ses_/);

      // 2. The project in the switcher, under the owner's organization; chosen on the members page (which ends the
      // dashboard's "loaded"), its dashboard loads anew from the Dashboard link.
      await a.page.click('#nav-members');
      await a.page.waitForSelector('#members-page:not([hidden])');
      expect(await a.page.$eval(`#project-switcher option[value="${project.id}"]`, (o) => [(o.parentElement as HTMLOptGroupElement).label, o.textContent])).toEqual([`${orgName} (owner)`, 'browser-people']);
      await a.page.selectOption('#project-switcher', project.id);
      await titled(a.page, 'browser-people');
      await a.page.click('#nav-dashboard');
      await loaded(a.page, 60_000);
      expect(await a.page.isHidden('#load-error')).toBe(true);
      expect(await headlineOf(a.page)).toEqual(expected);
      // No pasted key: every read carried the session's read key of this project, never the project's own rk_ key.
      const ownerKey = await sessionReadKey(a.page, project.id);
      expect(ownerKey).toMatch(/^rk_live_/);
      expect(ownerKey).not.toBe(keys.rk);
      expect(await a.page.evaluate(() => sessionStorage.getItem('analytics.readKey'))).toBeNull();
      expect(a.reads).toContain(`Bearer ${ownerKey}`);
      expect(a.reads.filter((h) => !/^Bearer rk_live_/.test(h) || h === `Bearer ${keys.rk}`)).toEqual([]);

      // 3. The invitation from the members page; its link names the proxy's address.
      await a.page.click('#nav-members');
      await a.page.waitForSelector(`#members tr[data-email="${OWNER.email}"]`);
      expect(await a.page.textContent('#members-title')).toBe(`Members of ${orgName}`);
      await a.page.fill('#invite-email', VIEWER.email);
      await a.page.selectOption('#invite-role', 'viewer');
      await a.page.click('#invite-form button[type="submit"]');
      await a.page.waitForSelector('#invite-link:not([hidden])');
      const link = await a.page.inputValue('#invite-url');
      expect(link).toMatch(new RegExp(`^${base.replace(/\./g, '\\.')}/#invitation=inv_[0-9A-Za-z]{43}$`));
      await a.page.waitForSelector(`#invitations li[data-email="${VIEWER.email}"]`);

      // Accepted in another browser: a new user with a password.
      const b = await open();
      await b.page.goto(link);
      await b.page.waitForSelector('#accept-page:not([hidden])');
      expect(b.page.url()).toBe(`${base}/`);
      await b.page.fill('#accept-name', VIEWER.name);
      await b.page.fill('#accept-password', VIEWER.password);
      await b.page.click('#accept-submit');
      await loaded(b.page, 60_000);
      const viewerToken = await b.page.evaluate(() => localStorage.getItem('analytics.session'));
      expect(viewerToken).toMatch(/^ses_/);
      expect(await b.page.$$eval('#project-switcher optgroup', (gs) => gs.map((g) => (g as HTMLOptGroupElement).label))).toEqual([`${orgName} (viewer)`]);
      for (const id of ['#nav-settings', '#nav-members', '#nav-audit']) expect([id, await b.page.isVisible(id)]).toEqual([id, false]);
      // No keys: the project's settings, opened by their address for this project, say why and show none.
      await b.page.goto(`${base}/#/settings`);
      await b.page.waitForSelector('#settings-page:not([hidden])');
      await b.page.selectOption('#project-switcher', project.id);
      await b.page.waitForFunction(() => document.getElementById('settings-title')?.textContent === 'Settings of browser-people');
      expect(await b.page.textContent('#settings-error')).toContain('is viewer');
      expect(await b.page.textContent('#settings-error')).toContain('403');
      for (const id of ['#keys', '#key-create-form', '#new-key']) expect([id, await b.page.isVisible(id)]).toEqual([id, false]);
      const listKeys = await http(topo.proxy, 'GET', `/admin/projects/${project.id}/keys`, bearer(viewerToken!));
      expect({ status: listKeys.status, service: listKeys.service, error: listKeys.json().error }).toEqual({ status: 403, service: 'admin-api', error: 'insufficient_role' });
      // The dashboard of the project: the numbers the API answers, read with the viewer's own session read key.
      await b.page.click('#nav-dashboard');
      await loaded(b.page, 60_000);
      expect(await b.page.isHidden('#load-error')).toBe(true);
      expect(await b.page.textContent('#project-title')).toContain('browser-people');
      expect(await headlineOf(b.page)).toEqual(expected);
      const viewerKey = (await sessionReadKey(b.page, project.id))!;
      expect(viewerKey).toMatch(/^rk_live_/);
      expect(b.reads).toContain(`Bearer ${viewerKey}`);
      expect(b.reads.filter((h) => !/^Bearer rk_live_/.test(h) || h === `Bearer ${keys.rk}` || h === `Bearer ${ownerKey}`)).toEqual([]);
      const readAsViewer = () => get(topo.proxy, '/v1/stats', viewerKey, WINDOW);
      const before = await readAsViewer();
      expect({ status: before.status, service: before.service, rows: before.json().rows.length > 0 }).toEqual({ status: 200, service: 'read-api', rows: true });
      expect(b.problems).toEqual([]);

      // 4. The owner removes the viewer on the members page.
      await a.page.click('#nav-members');
      await a.page.waitForSelector(`#members tr[data-email="${VIEWER.email}"][data-role="viewer"]`);
      await a.page.click(`#members tr[data-email="${VIEWER.email}"] button`);
      await a.page.click(`#members tr[data-email="${VIEWER.email}"] button`);
      await a.page.waitForSelector(`#members tr[data-email="${VIEWER.email}"]`, { state: 'detached' });
      expect(await a.page.textContent('#members-status')).toContain(`Removed ${VIEWER.email}`);

      // The viewer's next read is refused: the page returns to sign-in saying access has ended, and the key it read with is refused.
      b.problems.length = 0;
      await b.page.click('button[data-preset="30d"]');
      await b.page.waitForSelector('#login-page:not([hidden])');
      expect(await b.page.textContent('#login-error')).toContain('no longer have access');
      expect(await b.page.isVisible('#dashboard')).toBe(false);
      expect(await b.page.evaluate(() => localStorage.getItem('analytics.session'))).toBeNull();
      // What failed on the way: the read with the revoked session read key (401), then a new key refused (404, not a member).
      expect(b.problems.some((p) => p.startsWith(`answered 401: ${base}/v1/`))).toBe(true);
      expect(b.problems.some((p) => p === `answered 404: ${base}/auth/read-key`)).toBe(true);
      expect(b.problems.filter((p) => !/(answered |status of )(401|404)/.test(p))).toEqual([]);
      const after = await readAsViewer();
      expect({ status: after.status, service: after.service, body: after.json() }).toEqual({ status: 401, service: 'read-api', body: { error: 'invalid_api_key' } });

      // 5. The owner's browser: no console error, no failed or refused request, nothing outside the proxy's origin.
      expect(a.problems).toEqual([]);
    } finally {
      for (const c of contexts) await c.close();
    }
  }, 180_000);

  it('forgets a user through an ingest replica: gone from read-api within seconds, other users stay', async () => {
    const t = await createProject(topo.proxy);
    const at = new Date(DAY0 + HOUR).toISOString();
    const events = [...Array.from({ length: 5 }, () => ({ event: 'e', user_id: 'forget-me', timestamp: at })), ...Array.from({ length: 3 }, () => ({ event: 'e', user_id: 'keep-me', timestamp: at }))];
    expect((await post(t.port, '/v1/batch', t.keys.sk, { events })).status).toBe(202);
    const users = async () => ((await get(t.port, '/v1/query', t.keys.rk, WINDOW)).json().rows as Array<{ user_id: string }>).map((r) => r.user_id).sort();
    expect(await users()).toEqual([...Array(5).fill('forget-me'), ...Array(3).fill('keep-me')]);
    const forgot = await post(t.port, '/v1/forget', t.keys.sk, { user_id: 'forget-me' });
    expect({ status: forgot.status, service: forgot.service, body: forgot.json() }).toMatchObject({ service: 'ingest-api', body: { ok: true, queued: true } });
    const until = Date.now() + 10_000;
    let seen = await users();
    while (seen.includes('forget-me') && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
      seen = await users();
    }
    expect(seen).toEqual(Array(3).fill('keep-me'));
  });

  it('runs retention-worker --once (the CronJob) on the shared store: expired rows go, recent ones stay', async () => {
    const t = await createProject(topo.proxy, { retention_days: 30 });
    const old = new Date(Date.now() - 60 * DAY).toISOString();
    const recent = new Date(DAY0 + HOUR).toISOString();
    const events = [{ event: 'old', timestamp: old, anonymous_id: 'r' }, { event: 'old', timestamp: old, anonymous_id: 'r' }, { event: 'recent', timestamp: recent, anonymous_id: 'r' }];
    expect((await post(t.port, '/v1/batch', t.keys.sk, { events })).status).toBe(202);
    const names = async () => {
      const r = await get(t.port, '/v1/query', t.keys.rk, { from: new Date(Date.now() - 90 * DAY).toISOString(), to: WINDOW.to });
      return (r.json().rows as Array<{ event_name: string }>).map((row) => row.event_name).sort();
    };
    expect(await names()).toEqual(['old', 'old', 'recent']);
    // The CronJob's environment: the same event store and key store as the served apps.
    const env = { PATH: process.env.PATH, NODE_OPTIONS: '', LOG_LEVEL: 'info', CLICKHOUSE_URL: topo.clickhouseUrl, DATABASE_URL: dbUrl };
    const once = spawnSync(process.execPath, ['dist/apps/retention-worker/main.js', '--once'], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
    expect({ status: once.status, stderr: once.stderr }).toEqual({ status: 0, stderr: '' });
    expect(once.stdout).toContain('retention done');
    expect(await names()).toEqual(['recent']);
  });

  it('loses no acknowledged event when one ingest replica is killed mid-load: nginx routes around it', async () => {
    const t = await createProject(topo.proxy);
    const acked = new Set<string>();
    const failed: number[] = [];
    let killedAt = 0;
    let afterKill = 0;
    const started = Date.now();
    const worker = async (w: number) => {
      for (let i = 0; Date.now() - started < 4_000; i++) {
        const id = `w${w}-${i}-${randomUUID()}`;
        const r = await post(t.port, '/v1/track', t.keys.sk, { event: 'load', event_id: id, anonymous_id: `w${w}`, properties: { id } }).catch(() => undefined);
        if (r?.status === 202) {
          acked.add(id);
          if (killedAt) afterKill++;
        } else if (r?.status !== 429) failed.push(r?.status ?? 0);
        await new Promise((res) => setTimeout(res, 50));
      }
    };
    const load = Promise.all(Array.from({ length: 4 }, (_, w) => worker(w)));
    await new Promise((r) => setTimeout(r, 1_500));
    process.kill(topo.pids['ingest-api-2']!, 'SIGKILL');
    killedAt = Date.now();
    await load;
    expect(alive(topo.pids['ingest-api-2']!)).toBe(false);
    expect(afterKill).toBeGreaterThan(0);
    // Only requests in flight on the killed replica may fail (502 upstream_failed); none of them was acknowledged.
    expect(failed.filter((s) => s !== 502)).toEqual([]);
    const r = await get(t.port, '/v1/query', t.keys.rk, { from: WINDOW.from, to: new Date(Date.now() + HOUR).toISOString(), event: 'load', limit: '1000' });
    const stored = new Set((r.json().rows as Array<{ properties: string }>).map((row) => (JSON.parse(row.properties) as { id: string }).id));
    expect(acked.size).toBeGreaterThan(20);
    expect(stored.size).toBeLessThan(1000);
    expect([...acked].filter((id) => !stored.has(id))).toEqual([]);
  });

  it('builds on one aggregate-builder at a time: a second one is a ready standby, and takes the lease when the holder stops', async () => {
    /** analytics_aggregate_builder_active of a process's GET /metrics (on its own port: the proxy never routes it). */
    const active = async (port: number) => {
      const r = await http(port, 'GET', '/metrics');
      expect(r.status).toBe(200);
      return Number(/^analytics_aggregate_builder_active (\d+)$/m.exec(r.body)?.[1]);
    };
    // The deployables still running (the ingest replica killed above is not).
    const apps = Object.keys(topo.ports).filter((name) => name !== 'clickhouse-harness' && name !== 'nginx' && alive(topo.pids[name]!));
    expect(apps).toContain('aggregate-builder');
    // Only the builder builds: every other deployable reports 0, so sum(analytics_aggregate_builder_active) is 1.
    const byApp = Object.fromEntries(await Promise.all(apps.map(async (name) => [name, await active(topo.ports[name]!)] as const)));
    expect(byApp).toEqual(Object.fromEntries(apps.map((name) => [name, name === 'aggregate-builder' ? 1 : 0])));
    const health = await http(topo.ports['aggregate-builder']!, 'GET', '/healthz');
    expect({ status: health.status, body: health.json() }).toEqual({ status: 200, body: { ok: true, service: 'aggregate-builder' } });

    // The k8s Deployment's second replica: the same settings, the same stores.
    const env = { PATH: process.env.PATH, NODE_OPTIONS: '', LOG_LEVEL: 'info', PORT: '0', CLICKHOUSE_URL: topo.clickhouseUrl, DATABASE_URL: dbUrl };
    const standby = await startNode('aggregate-builder-standby', ['dist/apps/aggregate-builder/main.js'], { cwd: root, env });
    try {
      const ready = await http(standby.port, 'GET', '/readyz');
      expect({ status: ready.status, ok: ready.json().ok }).toEqual({ status: 200, ok: true });
      // It tried at start and keeps trying (every 2 s): the lease is held, so it stands by.
      await new Promise((r) => setTimeout(r, 2_500));
      expect(await active(standby.port)).toBe(0);
      expect(await active(topo.ports['aggregate-builder']!)).toBe(1);

      // A rollout's SIGTERM to the holder: it stops building and ends its lease session; the standby takes over.
      const holder = topo.pids['aggregate-builder']!;
      process.kill(holder, 'SIGTERM');
      const until = Date.now() + 30_000;
      while ((alive(holder) || (await active(standby.port)) !== 1) && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
      expect(alive(holder)).toBe(false);
      expect(await active(standby.port)).toBe(1);
      expect(readFileSync(join(topo.dataDir, 'logs', 'aggregate-builder.log'), 'utf8')).toContain('lease given up (stopping)');
      expect(standby.output()).toContain('lease taken, building');

      // The new holder builds: counts read from daily_rollup (whole days) include events tracked after the takeover.
      const t = await createProject(topo.proxy);
      const events = Array.from({ length: 7 }, (_, i) => ({ event: 'after_takeover', anonymous_id: `t-${i}`, timestamp: new Date(DAY0 + 3 * HOUR).toISOString() }));
      expect((await post(t.port, '/v1/batch', t.keys.sk, { events })).status).toBe(202);
      const stats = await get(t.port, '/v1/stats', t.keys.rk, { ...WINDOW, group_by: 'event_name', interval: 'day' });
      expect({ status: stats.status, rows: stats.json().rows }).toEqual({ status: 200, rows: [{ event_name: 'after_takeover', bucket: expect.any(String), value: 7 }] });
    } finally {
      await stopProcess(standby.proc);
    }
  });

  it('stops every process it started on SIGTERM', async () => {
    const pids = Object.values(topo.pids);
    expect(pids.length).toBe(9);
    await stopProcess(topo.cli, 30_000);
    expect(topo.cli.exitCode).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
  });
});
