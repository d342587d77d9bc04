import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { OAUTH_ROUTES } from '@analytics/schema';
import { systemBinary } from '@analytics/testing';
import { type Started, freePort, startNginx as startProxy, startNode, stopProcess } from '@analytics/topology';
import { http } from './http';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the header npm start sends is the one nginx must send
import { DASHBOARD_CSP } from '../../../apps/standalone/src/dashboard.route';
import { APPS, type App, PROXIED_APPS, PUBLIC_ROUTES, concretePath, dockerDir, root, upstreamOf } from './routes';

// docker/nginx.conf, validated by Debian's nginx (`nginx -t`) and served on loopback in front of the five apps,
// each started alone as in production (`node dist/apps/<app>/main.js`, its own port), on real PostgreSQL for keys
// and each on its own embedded chDB (DATA_DIR: the documented opt-in when no ClickHouse server can run here).
// Every app names itself in an X-Service header, so each check proves WHICH deployable answered.
// aggregate-builder is not among them: it runs on a ClickHouse server only (the embedded store builds inside the
// one process that opens it), so topology.spec.ts starts it, on the ClickHouse HTTP test harness.

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN_TOKEN = randomBytes(16).toString('hex');
const INTERNAL_SECRET = randomBytes(16).toString('hex');

// Debian's nginx (sbin is often off a user's PATH); NGINX_BIN overrides it. Without it the proxy suite skips loudly.
const NGINX = systemBinary({ name: 'nginx', env: 'NGINX_BIN', defaults: ['/usr/sbin/nginx', 'nginx'], aptPackage: 'nginx-light' });

/** Starts `node dist/apps/<app>/main.js` on a free port (PORT=0) and resolves with the port it logged as listening. */
async function startApp(app: App, env: NodeJS.ProcessEnv): Promise<Started> {
  const started = await startNode(app, [`dist/apps/${app}/main.js`], { cwd: root, env });
  procs.push(started.proc);
  return started;
}

/** docker/nginx.conf, copied unchanged, in front of the apps on loopback (`nginx -t` first); returns the proxy's port. */
async function startNginx(bin: string, ports: Partial<Record<App, number>>): Promise<number> {
  const prefix = mkdtempSync(join(tmpdir(), 'deploy-nginx-'));
  dataDirs.push(prefix);
  const upstreams = Object.fromEntries(PROXIED_APPS.map((app) => [upstreamOf(app), [ports[app]!]]));
  const nginx = await startProxy(bin, resolve(dockerDir, 'nginx.conf'), prefix, upstreams, await freePort(), resolve(root, 'dist/apps/dashboard'));
  procs.push(nginx.proc);
  return nginx.port;
}

/** The deployables that start on DATA_DIR: all but the aggregate builder, which refuses it. */
const ON_EMBEDDED = APPS.filter((app) => app !== 'aggregate-builder');

let proxyPort = 0;
let schema: string;
const apps = new Map<App, Started>();
/** Every process started, listening or not: all are stopped in afterAll whatever happened. */
const procs: ChildProcess[] = [];
const dataDirs: string[] = [];

beforeAll(() => {
  execFileSync(process.execPath, ['tools/build.mjs'], { cwd: root, stdio: 'ignore' });
});

/** The five apps started alone on a fresh database, and nginx in front of them. */
async function startDeployment(): Promise<void> {
  // Keys on real PostgreSQL, in a schema of their own (every app migrates it at start, under an advisory lock).
  schema = `deploy_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: DATABASE_URL });
  try {
    await admin.connect();
  } catch (e) {
    throw new Error(`the proxy check needs PostgreSQL at TEST_DATABASE_URL (${DATABASE_URL}): ${(e as Error).message}`);
  }
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const dbUrl = new URL(DATABASE_URL);
  dbUrl.searchParams.set('options', `-c search_path=${schema}`);

  const base: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', PORT: '0', LOG_LEVEL: 'info' };
  for (const k of ['CLICKHOUSE_URL', 'CLICKHOUSE_CLUSTER', 'CLICKHOUSE_USER', 'CLICKHOUSE_PASSWORD', 'REDIS_URL']) delete base[k];
  await Promise.all(
    ON_EMBEDDED.map(async (app) => {
      const dataDir = mkdtempSync(join(tmpdir(), `deploy-${app}-`));
      dataDirs.push(dataDir);
      const env = {
        ...base, DATA_DIR: dataDir, DATABASE_URL: dbUrl.toString(), CLICKHOUSE_DATABASE: 'analytics',
        IP_HASH_SECRET: 'deploy-checks', ADMIN_TOKEN, INTERNAL_SECRET,
        // nginx on loopback is the trusted proxy here (compose names nginx's fixed address the same way).
        TRUST_PROXY: 'loopback',
        // The OAuth endpoints of /mcp, which the proxy routes to it (libs/schema's OAUTH_ROUTES).
        ...(app === 'mcp-gateway' ? { MCP_OAUTH: 'on' } : {}),
      };
      // All five at once on a fresh database, as a rollout starts them: migrations must not race.
      apps.set(app, await startApp(app, env));
    }),
  );

  proxyPort = await startNginx(NGINX.path, Object.fromEntries(ON_EMBEDDED.map((app) => [app, apps.get(app)!.port])));
}

async function stopDeployment(): Promise<void> {
  await Promise.all(procs.map((proc) => stopProcess(proc)));
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
  if (schema) {
    const admin = new Client({ connectionString: DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

describe('each app started alone without its settings', () => {
  const NEEDS: Record<App, string> = {
    'ingest-api': 'CLICKHOUSE_URL or DATA_DIR, DATABASE_URL, IP_HASH_SECRET',
    'read-api': 'CLICKHOUSE_URL or DATA_DIR, DATABASE_URL',
    'mcp-gateway': 'CLICKHOUSE_URL or DATA_DIR, DATABASE_URL, IP_HASH_SECRET',
    'admin-api': 'DATABASE_URL, ADMIN_TOKEN',
    'retention-worker': 'CLICKHOUSE_URL or DATA_DIR, DATABASE_URL, INTERNAL_SECRET',
    // A ClickHouse server only (no DATA_DIR alternative), and the PostgreSQL of its lease.
    'aggregate-builder': 'CLICKHOUSE_URL, DATABASE_URL',
  };
  it.each(APPS)('%s refuses to start and names what is missing', (app) => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, NODE_OPTIONS: '' };
    const run = spawnSync(process.execPath, [`dist/apps/${app}/main.js`], { cwd: root, env, encoding: 'utf8', timeout: 30_000 });
    expect({ status: run.status, stderr: run.stderr.trim() }).toEqual({ status: 1, stderr: `${app}: missing required settings ${NEEDS[app]} (see docs/configuration.md)` });
  });
});

NGINX.describe('nginx in front of the five deployables (docker/nginx.conf on loopback)', () => {
  beforeAll(startDeployment, 120_000);
  afterAll(stopDeployment, 60_000);

  it('passes nginx -t, and each app started alone answers /healthz with its own name and /readyz once its stores answer', async () => {
    for (const app of ON_EMBEDDED) {
      const r = await http(apps.get(app)!.port, 'GET', '/healthz');
      expect({ status: r.status, body: r.json(), service: r.service }).toEqual({ status: 200, body: { ok: true, service: app }, service: app });
      const ready = await http(apps.get(app)!.port, 'GET', '/readyz');
      expect({ status: ready.status, ok: (ready.json() as { ok?: boolean }).ok }).toEqual({ status: 200, ok: true });
    }
    const own = await http(proxyPort, 'GET', '/healthz');
    expect({ status: own.status, body: own.json(), service: own.service }).toEqual({ status: 200, body: { ok: true, service: 'proxy' }, service: undefined });
  });

  it.each(PUBLIC_ROUTES.map(({ name, route }) => [route.method.toUpperCase(), concretePath(route.path), route.app, name, route] as const))('%s %s reaches %s (%s)', async (method, path, app, _name, route) => {
    const r = await http(proxyPort, method, path, {}, route.body ? '{}' : undefined);
    expect(r.service).toBe(app);
    const session = typeof route.auth === 'object' && 'session' in route.auth ? route.auth.session : undefined;
    if (route.auth === 'none' || session === 'optional') return;
    // no credentials: the app's own auth answer, not nginx's (routes for a person or the operator: invalid_session)
    expect(r.status).toBe(401);
    expect(r.json().error).toBe(route.auth === 'admin_token' || session ? 'invalid_session' : 'missing_bearer_token');
  });

  it.each(OAUTH_ROUTES.flatMap(({ name, path, methods }) => methods.map((m) => [m.toUpperCase(), path, name] as const)))('%s %s reaches mcp-gateway\'s OAuth server (%s)', async (method, path) => {
    const r = await http(proxyPort, method, path, {}, method === 'POST' ? '{}' : undefined);
    // The OAuth router's answer (metadata, or the protocol's refusal of an empty request), not a 404 of nginx or the app.
    expect({ service: r.service, routed: r.status < 500 && ![404, 405].includes(r.status) }).toEqual({ service: 'mcp-gateway', routed: true });
    if (path.startsWith('/.well-known/')) expect({ status: r.status, type: r.headers['content-type'] }).toEqual({ status: 200, type: expect.stringMatching(/^application\/json/) });
  });

  it("names the address the client used, port included, as the OAuth issuer without PUBLIC_URL (nginx passes the client's Host whole)", async () => {
    const r = await http(proxyPort, 'GET', '/.well-known/oauth-authorization-server');
    expect(r.status).toBe(200);
    expect((r.json() as { issuer: string }).issuer).toBe(`http://127.0.0.1:${proxyPort}/`);
  });

  it('serves the browser SDK script from ingest-api through the proxy, loadable from any site', async () => {
    const r = await http(proxyPort, 'GET', '/sdk/analytics.min.js');
    expect({ status: r.status, service: r.service, type: r.headers['content-type'], cors: r.headers['access-control-allow-origin'], corp: r.headers['cross-origin-resource-policy'] })
      .toEqual({ status: 200, service: 'ingest-api', type: expect.stringMatching(/^text\/javascript/), cors: '*', corp: 'cross-origin' });
    const { version } = JSON.parse(readFileSync(resolve(root, 'dist/libs/sdk-browser/package.json'), 'utf8')) as { version: string };
    const pinned = await http(proxyPort, 'GET', `/sdk/${version}/analytics.min.js`);
    expect({ status: pinned.status, service: pinned.service, cache: pinned.headers['cache-control'] }).toEqual({ status: 200, service: 'ingest-api', cache: 'public, max-age=31536000, immutable' });
    // Another version is the app's 404; a path no declaration names is the proxy's.
    expect((await http(proxyPort, 'GET', '/sdk/0.0.0-nope/analytics.min.js')).service).toBe('ingest-api');
    for (const path of ['/sdk/', '/sdk/nope.js', '/sdk/a/b/analytics.min.js', '/sdk/analytics.min.js/x']) expect({ path, service: (await http(proxyPort, 'GET', path)).service }).toEqual({ path, service: undefined });
  });

  it('keeps /internal/ inside: retention answers directly but never through the proxy', async () => {
    const secret = { 'x-internal-secret': INTERNAL_SECRET };
    const direct = await http(apps.get('retention-worker')!.port, 'POST', '/internal/retention/run', secret);
    expect({ status: direct.status, service: direct.service, ok: direct.json().ok }).toEqual({ status: 200, service: 'retention-worker', ok: true });
    for (const path of ['/internal/retention/run', '/internal/retention/run/', '/INTERNAL/retention/run', '/Internal/Retention/Run', '/v1/track/../../internal/retention/run', '/v1/%2e%2e/internal/retention/run', '/%69nternal/retention/run', '//internal/retention/run', '/v1/../internal/retention/run?x=1']) {
      const r = await http(proxyPort, 'POST', path, secret);
      expect({ path, status: r.status, service: r.service, body: r.json() }).toEqual({ path, status: 404, service: undefined, body: { error: 'not_found' } });
    }
  });

  it('keeps /metrics inside: every app answers it on its own port, the proxy never routes it', async () => {
    for (const app of ON_EMBEDDED) {
      const direct = await http(apps.get(app)!.port, 'GET', '/metrics');
      expect({ app, status: direct.status, service: direct.service }).toEqual({ app, status: 200, service: app });
      expect(direct.body).toMatch(/^analytics_http_requests_total\{/m);
    }
    for (const path of ['/metrics', '/metrics/', '/METRICS', '/v1/../metrics', '/%6detrics', '//metrics', '/metrics?x=1']) {
      const r = await http(proxyPort, 'GET', path);
      expect({ path, status: r.status, service: r.service, body: r.json() }).toEqual({ path, status: 404, service: undefined, body: { error: 'not_found' } });
    }
  });

  it('answers unknown paths itself with the API error envelope', async () => {
    // Undeclared paths under the routed prefixes too: only the declared ones reach an app.
    const undeclared = ['/index.html', '/assets/', '/assets/nope.js', '/v1/unknown', '/v1/track/extra', '/v1/trackx', '/V1/TRACK', '/v2/track', '/healthz/x', '/admin/', '/admin/nope', '/admin/projects/', '/admin/projects/a/b', '/admin/projects/a/keys/b', '/admin/keys/', '/admin/keys/a/b', '/admin/backup', '/openapi.json', '/docs', '/.well-known/', '/.well-known/openid-configuration', '/.well-known/oauth-protected-resource/x', '/authorize/', '/Token', '/oauth/token'];
    for (const path of undeclared) {
      for (const method of ['GET', 'POST']) {
        const r = await http(proxyPort, method, path, {}, method === 'POST' ? '{}' : undefined);
        expect({ method, path, status: r.status, service: r.service, body: r.json() }).toEqual({ method, path, status: 404, service: undefined, body: { error: 'not_found' } });
      }
    }
  });

  it("serves the dashboard's page and files itself, without a key, with the CSP npm start sends and no cookie", async () => {
    for (const [path, type] of [['/', 'text/html'], ['/?from=2026-03-02&to=2026-03-16', 'text/html'], ['/assets/dashboard.js', 'text/javascript'], ['/assets/dashboard.css', 'text/css']]) {
      const r = await http(proxyPort, 'GET', path!);
      expect({ path, status: r.status, service: r.service, type: r.headers['content-type'] }).toEqual({ path, status: 200, service: undefined, type });
      expect(r.headers['content-security-policy']).toBe(DASHBOARD_CSP);
      expect(r.headers['set-cookie']).toBeUndefined();
    }
    expect((await http(proxyPort, 'GET', '/')).body).toContain('<script src="assets/dashboard.js" defer></script>');
  });

  it("the dashboard's own server (docker/dashboard.nginx.conf, the k8s image) serves the same files and headers", async () => {
    const prefix = mkdtempSync(join(tmpdir(), 'deploy-dashboard-'));
    dataDirs.push(prefix);
    const port = await freePort();
    const conf = readFileSync(resolve(dockerDir, 'dashboard.nginx.conf'), 'utf8');
    // Only the environment differs on loopback: the port, the build's place, the pid and temp files.
    // Temp paths first: the checkout itself may live under /tmp.
    const local = conf.replaceAll('/tmp/', `${prefix}/`).replace('listen 8080;', `listen 127.0.0.1:${port};`).replace('root /usr/share/nginx/dashboard;', `root ${resolve(root, 'dist/apps/dashboard')};`);
    expect(local).not.toBe(conf);
    writeFileSync(join(prefix, 'nginx.conf'), local);
    const proc = spawn(NGINX.path, ['-p', `${prefix}/`, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'ignore' });
    procs.push(proc);
    let health = await http(port, 'GET', '/healthz').catch(() => undefined);
    for (let i = 0; i < 50 && health?.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      health = await http(port, 'GET', '/healthz').catch(() => undefined);
    }
    expect(health?.json()).toEqual({ ok: true, service: 'dashboard' });
    for (const [path, type] of [['/', 'text/html'], ['/assets/dashboard.js', 'text/javascript']]) {
      const r = await http(port, 'GET', path!);
      expect({ path, status: r.status, type: r.headers['content-type'], csp: r.headers['content-security-policy'] }).toEqual({ path, status: 200, type, csp: DASHBOARD_CSP });
    }
    expect((await http(port, 'GET', '/assets/nope.js')).json()).toEqual({ error: 'not_found' });
    // The Ingress sends it every path no route matches: each is the API's JSON 404, a body over its limit a JSON 413.
    for (const path of ['/v1/unknown', '/admin/nope', '/internal/retention/run', '/metrics', '/sdk/nope.js']) {
      const r = await http(port, 'POST', path, {}, '{}');
      expect({ path, status: r.status, body: r.json() }).toEqual({ path, status: 404, body: { error: 'not_found' } });
    }
    const big = await http(port, 'POST', '/v1/unknown', {}, Buffer.alloc(4096, 0x20));
    expect({ status: big.status, body: big.json() }).toEqual({ status: 413, body: { error: 'payload_too_large' } });
  });

  it('forwards the caller: X-Forwarded-For with the address nginx saw appended, Host, proto and a request id', async () => {
    // The same rules in front of a recorder instead of the apps: what exactly arrives upstream.
    const seen: Array<Record<string, string | string[] | undefined>> = [];
    const recorder = createHttpServer((req, res) => {
      seen.push(req.headers);
      res.setHeader('x-service', 'recorder');
      res.end('{}');
    });
    await new Promise<void>((r) => recorder.listen(0, '127.0.0.1', r));
    const port = (recorder.address() as AddressInfo).port;
    try {
      const proxy = await startNginx(NGINX.path, Object.fromEntries(APPS.map((app) => [app, port])));
      const r = await http(proxy, 'POST', '/v1/track?x=1', { host: 'shop.example.com', 'x-forwarded-for': '8.8.8.8' }, '{}');
      expect(r.service).toBe('recorder');
      expect(seen[0]).toMatchObject({ 'x-forwarded-for': '8.8.8.8, 127.0.0.1', host: 'shop.example.com', 'x-forwarded-host': 'shop.example.com', 'x-forwarded-proto': 'http' });
      expect(seen[0]!['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
      await http(proxy, 'GET', '/v1/stats');
      expect(seen[1]!['x-forwarded-for']).toBe('127.0.0.1');
      await http(proxy, 'GET', '/v1/stats', { host: 'shop.example.com:8443' });
      expect(seen[2]).toMatchObject({ host: 'shop.example.com:8443', 'x-forwarded-host': 'shop.example.com:8443' });
    } finally {
      recorder.close();
    }
  });

  it('passes X-Forwarded-For: the app sees the caller behind the proxy (geo of 8.8.8.8 is US; loopback has none)', async () => {
    const created = await http(proxyPort, 'POST', '/admin/projects', { authorization: `Bearer ${ADMIN_TOKEN}` }, JSON.stringify({ name: 'deploy-checks', allowed_origins: ['*'] }));
    expect({ status: created.status, service: created.service }).toEqual({ status: 201, service: 'admin-api' });
    const keys = created.json().keys as { sk: string; rk: string };
    const mcp = (key: string, name: string, args: object, headers: Record<string, string> = {}) =>
      http(proxyPort, 'POST', '/mcp', { authorization: `Bearer ${key}`, accept: 'application/json, text/event-stream', ...headers }, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }));
    const viaUS = await mcp(keys.sk, 'track_event', { event: 'forwarded', anonymous_id: 'via-xff' }, { 'x-forwarded-for': '8.8.8.8' });
    expect({ status: viaUS.status, service: viaUS.service }).toEqual({ status: 200, service: 'mcp-gateway' });
    expect(viaUS.json().result.structuredContent.ok).toBe(true);
    await mcp(keys.sk, 'track_event', { event: 'forwarded', anonymous_id: 'no-xff' });
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    const q = await mcp(keys.rk, 'query_events', { from, to, event: 'forwarded' });
    const rows = q.json().result.structuredContent.rows as Array<{ anonymous_id: string; country: string }>;
    expect(rows.map((r) => [r.anonymous_id, r.country]).sort()).toEqual([['no-xff', ''], ['via-xff', 'US']]);
  });

  it('takes a 1000-event batch of several MB through to ingest-api, and answers a body over 16 MB with 413', async () => {
    const created = await http(proxyPort, 'POST', '/admin/projects', { authorization: `Bearer ${ADMIN_TOKEN}` }, JSON.stringify({ name: 'batch' }));
    const sk = created.json().keys.sk as string;
    const properties = { blob: 'x'.repeat(7_000) };
    const batch = JSON.stringify({ events: Array.from({ length: 1000 }, (_, i) => ({ event: 'bulk', anonymous_id: `a-${i}`, url: `https://shop.example.com/${'p'.repeat(1500)}`, properties })) });
    expect(batch.length).toBeGreaterThan(8_000_000);
    const ok = await http(proxyPort, 'POST', '/v1/batch', { authorization: `Bearer ${sk}` }, batch);
    expect({ status: ok.status, service: ok.service, body: ok.json() }).toEqual({ status: 202, service: 'ingest-api', body: { ok: true, count: 1000 } });
    const tooBig = await http(proxyPort, 'POST', '/v1/batch', { authorization: `Bearer ${sk}` }, Buffer.alloc(16 * 1024 * 1024 + 1, 0x20));
    expect({ status: tooBig.status, service: tooBig.service, body: tooBig.json() }).toEqual({ status: 413, service: undefined, body: { error: 'payload_too_large' } });
  });
});
