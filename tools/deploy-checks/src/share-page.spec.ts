import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openTestStores, silentLogger, systemBinary } from '@analytics/testing';
import { type Started, freePort, startNginx, stopProcess } from '@analytics/topology';
import { http } from './http';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the header npm start sends is the one nginx must send
import { DASHBOARD_CSP } from '../../../apps/standalone/src/dashboard.route';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the service the proxy asks for a link's framing
import { buildApp } from '../../../apps/standalone/src/app';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: loopback helpers
import { closeServer, listen } from '../../../apps/standalone/src/test-service';
import { PROXIED_APPS, dockerDir, upstreamOf } from './routes';

const NGINX = systemBinary({ name: 'nginx', env: 'NGINX_BIN', defaults: ['/usr/sbin/nginx', 'nginx'], aptPackage: 'nginx-light' });
const SECRETS = { ADMIN_TOKEN: 'admin-token-share-page-proxy', IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal' };
const admin = { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}`, 'content-type': 'application/json' };

/**
 * A share link's page through docker/nginx.conf (docs/saved-and-shared.md, "Share links and embeds"): nginx serves the
 * dashboard's page at /share/<token> itself and asks admin-api (GET /v1/share/frame-ancestors, an auth_request) who
 * may frame it; the headers equal what `npm start` sends. The service behind it is the real one (every upstream).
 */
NGINX.describe("a share link's page through the production proxy", () => {
  let stores: Awaited<ReturnType<typeof openTestStores>>;
  let server: Server;
  let proxy: Started;
  let prefix: string;
  let dashboardDir: string;
  let projectId: string;

  beforeAll(async () => {
    stores = await openTestStores();
    server = await listen(buildApp({ stores, secrets: SECRETS, logger: silentLogger }));
    const port = (server.address() as { port: number }).port;
    dashboardDir = mkdtempSync(join(tmpdir(), 'share-page-dashboard-'));
    mkdirSync(join(dashboardDir, 'assets'));
    writeFileSync(join(dashboardDir, 'index.html'), '<!doctype html><script src="assets/dashboard.js"></script>');
    writeFileSync(join(dashboardDir, 'assets/dashboard.js'), 'void 0;');
    // nginx's workers (nobody, when started as root) read the files.
    for (const path of [dashboardDir, join(dashboardDir, 'assets')]) chmodSync(path, 0o755);
    prefix = mkdtempSync(join(tmpdir(), 'share-page-nginx-'));
    proxy = await startNginx(NGINX.path, resolve(dockerDir, 'nginx.conf'), prefix, Object.fromEntries(PROXIED_APPS.map((app) => [upstreamOf(app), [port]])), await freePort(), dashboardDir);
    const created = await http(proxy.port, 'POST', '/admin/projects', admin, JSON.stringify({ name: 'proxied' }));
    expect(created.status).toBe(201);
    projectId = (created.json() as { project: { id: string } }).project.id;
  });

  afterAll(async () => {
    if (proxy) await stopProcess(proxy.proc);
    if (server) await closeServer(server);
    await stores?.close();
    for (const dir of [prefix, dashboardDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const share = async (body: object) => {
    const r = await http(proxy.port, 'POST', `/admin/projects/${projectId}/shares`, admin, JSON.stringify(body));
    expect(r.status).toBe(201);
    const { share: s, url } = r.json() as { share: { id: string }; url: string };
    return { id: s.id, token: url.split('/share/')[1]! };
  };
  const page = async (path: string) => {
    const r = await http(proxy.port, 'GET', path);
    expect({ path, status: r.status, type: r.headers['content-type'], referrer: r.headers['referrer-policy'], cache: r.headers['cache-control'], cookie: r.headers['set-cookie'] }).toEqual({
      path, status: 200, type: 'text/html', referrer: 'no-referrer', cache: 'no-store', cookie: undefined,
    });
    expect(r.body).toContain('assets/dashboard.js');
    return r.headers['content-security-policy'];
  };

  it('serves the page with the dashboard\'s CSP, and frame-ancestors the link\'s embed_origins only with ?embed=1 on a live link', async () => {
    const plain = await share({ name: 'plain' });
    const embeddable = await share({ name: 'embed', embed_origins: ['https://agency.example.com', 'http://localhost:8080'] });
    expect(await page(`/share/${plain.token}`)).toBe(DASHBOARD_CSP);
    expect(await page(`/share/${plain.token}?embed=1`)).toBe(DASHBOARD_CSP);
    expect(await page(`/share/${embeddable.token}`)).toBe(DASHBOARD_CSP);
    expect(await page(`/share/${embeddable.token}?embed=1`)).toBe(DASHBOARD_CSP.replace("frame-ancestors 'none'", 'frame-ancestors https://agency.example.com http://localhost:8080'));
    expect(await page('/share/shr_unknown_unknown?embed=1')).toBe(DASHBOARD_CSP);
    expect((await http(proxy.port, 'DELETE', `/admin/projects/${projectId}/shares/${embeddable.id}`, admin)).status).toBe(204);
    expect(await page(`/share/${embeddable.token}?embed=1`)).toBe(DASHBOARD_CSP);
    // The page's relative files are the dashboard's; a path that is no token is the proxy's 404.
    const js = await http(proxy.port, 'GET', '/share/assets/dashboard.js');
    expect({ status: js.status, csp: js.headers['content-security-policy'] }).toEqual({ status: 200, csp: DASHBOARD_CSP });
    for (const path of ['/share/', '/share/nope', '/share/shr_a_b/c', '/_share_frame_ancestors']) expect({ path, status: (await http(proxy.port, 'GET', path)).status }).toEqual({ path, status: 404 });
    // The token is a credential: the proxy's access log never writes its secret (a page as the file it served, a
    // refused path with the secret dropped).
    const log = readFileSync(join(prefix, 'nginx.log'), 'utf8');
    expect(log).toContain('GET /share/shr_a_[redacted] 404');
    for (const { token } of [plain, embeddable]) expect(log).not.toContain(token.split('_')[2]);
  });
});
