import { type ApiRoute, OAUTH_ROUTES, type OAuthRoute, exposureOf, routes } from '@analytics/schema';
import { ingressBlock, nginxBlock, proxyConfigs, proxyPaths, withBlock } from './proxy-routes';
import { PUBLIC_ROUTES, dockerDir, readDocker } from './routes';

// The proxy configurations follow the route declarations: generated from them (tools/proxy-routes.mjs), and checked
// here to be what the generator writes, so a declaration added without regenerating fails with what to run.

const declared = routes as Readonly<Record<string, ApiRoute>>;

describe('the proxy routes (docker/nginx.conf, docker/k8s/ingress.yaml) follow the route declarations', () => {
  it('are what `npm run proxy:routes` generates from libs/schema/src/api-routes.ts and oauth-routes.ts', () => {
    const stale = proxyConfigs(dockerDir)
      .filter((c) => c.committed !== c.generated)
      .map((c) => `docker/${c.file} differs from the route declarations: run \`npm run proxy:routes\` and commit the result`);
    expect(stale).toEqual([]);
  });

  it('routes every public declaration and OAuth endpoint once, and no pod, internal or standalone route', () => {
    const paths = proxyPaths();
    const oauth = OAUTH_ROUTES.flatMap((r) => r.methods.map((m) => `${m.toUpperCase()} ${r.name}`));
    expect(paths.flatMap((p) => p.routes).sort()).toEqual([...PUBLIC_ROUTES.map(({ name, route }) => `${route.method.toUpperCase()} ${name}`), ...oauth].sort());
    for (const [name, route] of Object.entries(declared).filter(([, r]) => exposureOf(r) !== 'public')) {
      expect({ name, routed: paths.some((p) => p.path === route.path) }).toEqual({ name, routed: false });
    }
    // What the decision rests on: the probes, metrics and document of each pod, the retention worker, the backup of npm start.
    expect(Object.entries(declared).filter(([, r]) => exposureOf(r) !== 'public').map(([name, r]) => [name, exposureOf(r)])).toEqual([
      ['backup', 'standalone'], ['runRetention', 'internal'], ['healthz', 'pod'], ['openapi', 'pod'], ['readyz', 'pod'], ['metrics', 'pod'],
    ]);
  });

  it('routes each OAuth endpoint of /mcp (libs/schema/src/oauth-routes.ts) to mcp-gateway at its exact path, in both files', () => {
    const paths = proxyPaths();
    const nginx = nginxBlock(paths);
    const ingress = ingressBlock(paths);
    for (const { name, path, methods } of OAUTH_ROUTES) {
      const labels = methods.map((m) => `${m.toUpperCase()} ${name}`).join(', ');
      expect(paths.filter((p) => p.path === path)).toEqual([{ path, app: 'mcp-gateway', routes: labels.split(', '), templated: false }]);
      expect(nginx).toContain(`    location = ${path} { proxy_pass http://mcp_gateway; } # ${labels}\n`);
      expect(ingress).toContain(`- { path: '${path.replace(/\./g, '\\.')}$', pathType: ImplementationSpecific, backend: { service: { name: mcp-gateway, port: { name: http } } } } # ${labels}\n`);
    }
    // The consent page's forms post back to it: one location for both methods.
    expect(nginx).toContain('    location = /authorize { proxy_pass http://mcp_gateway; } # GET oauthAuthorize, POST oauthAuthorize\n');
    expect(nginx).toContain('    location = /.well-known/oauth-protected-resource/mcp { proxy_pass http://mcp_gateway; } # GET oauthProtectedResourceMcp\n');
    // A new endpoint follows: the committed files are then stale.
    const more: OAuthRoute[] = [...OAUTH_ROUTES, { name: 'oauthIntrospect', path: '/introspect', methods: ['post'], app: 'mcp-gateway', summary: 'x' }];
    expect(nginxBlock(proxyPaths(declared, more))).toContain('    location = /introspect { proxy_pass http://mcp_gateway; } # POST oauthIntrospect\n');
    for (const { file, committed, generated } of proxyConfigs(dockerDir, declared, more)) expect({ file, stale: committed !== generated }).toEqual({ file, stale: true });
  });

  it('takes each streamed answer\'s proxy settings from its declaration: export and MCP unbuffered, export with its longer timeout', () => {
    const nginx = nginxBlock(proxyPaths());
    expect(nginx).toContain('location = /v1/export {\n      proxy_pass http://read_api;\n      proxy_buffering off;\n      proxy_read_timeout 330s;\n      proxy_send_timeout 330s;\n    }');
    expect(nginx).toContain('location = /mcp {\n      proxy_pass http://mcp_gateway;\n      proxy_buffering off;\n    }');
    expect(nginx.match(/proxy_buffering off;/g)).toHaveLength(PUBLIC_ROUTES.filter(({ route }) => route.streaming).length);
  });

  it('follows a new declaration: a templated route and an event stream appear in both files, so the committed ones are stale', () => {
    const more: Record<string, ApiRoute> = {
      ...declared,
      goal: { method: 'delete', path: '/v1/goals/{id}', app: 'read-api', summary: 'x', auth: { api_key: ['rk'], access: 'read' }, responses: { 204: null }, errors: [] },
      live: { method: 'get', path: '/v1/live', app: 'read-api', summary: 'x', auth: { api_key: ['rk'], access: 'read' }, responses: {}, errors: [], streaming: { kind: 'events', idleTimeoutS: 3600 } },
      session: { method: 'post', path: '/auth/session', app: 'admin-api', summary: 'x', auth: 'none', responses: {}, errors: [] },
    };
    const paths = proxyPaths(more);
    const nginx = nginxBlock(paths);
    expect(nginx).toContain('    location ~ "^/v1/goals/[^/]+$" { proxy_pass http://read_api; } # DELETE goal\n');
    expect(nginx).toContain('    location = /auth/session { proxy_pass http://admin_api; } # POST session\n');
    expect(nginx).toContain('    location = /v1/live {\n      proxy_pass http://read_api;\n      proxy_buffering off;\n      proxy_read_timeout 3600s;\n      proxy_send_timeout 3600s;\n    }');
    const ingress = ingressBlock(paths);
    expect(ingress).toContain("- { path: '/v1/goals/[^/]+$', pathType: ImplementationSpecific, backend: { service: { name: read-api, port: { name: http } } } }");
    expect(ingress).toMatch(/name: analytics-events-stream-3600s\n[\s\S]*proxy-read-timeout: "3600"[\s\S]*proxy-buffering: "off"[\s\S]*path: '\/v1\/live\$'/);
    for (const { file, committed, generated } of proxyConfigs(dockerDir, more)) expect({ file, stale: committed !== generated }).toEqual({ file, stale: true });
  });

  it('refuses a path declared twice for two apps, an internal_secret route on a routed app, and a clashing or templated OAuth endpoint', () => {
    const twice = { ...declared, other: { ...routes.query, method: 'post', app: 'admin-api' } as ApiRoute };
    expect(() => proxyPaths(twice)).toThrow(/other: \/v1\/query is declared again with another app/);
    const leak = { ...declared, leak: { ...routes.runRetention, app: 'admin-api' } as ApiRoute };
    expect(() => proxyPaths(leak)).toThrow(/leak: an internal_secret route cannot be public/);
    // An OAuth endpoint at a declared route's path of another app, or with parameters.
    const taken: OAuthRoute[] = [...OAUTH_ROUTES, { name: 'clash', path: '/v1/query', methods: ['post'], app: 'mcp-gateway', summary: 'x' }];
    expect(() => proxyPaths(declared, taken)).toThrow(/clash: \/v1\/query is declared again with another app/);
    const templated: OAuthRoute[] = [{ name: 'param', path: '/oauth/{id}', methods: ['get'], app: 'mcp-gateway', summary: 'x' }];
    expect(() => proxyPaths(declared, templated)).toThrow('param: an OAuth endpoint is an exact path, not /oauth/{id}');
  });

  it('rewrites only the marked block, and says so when a file has none', () => {
    const text = 'before\n  # BEGIN proxy routes, old\n  old line\n  # END proxy routes\nafter\n';
    expect(withBlock('f', text, '  new')).toBe('before\n  new\nafter\n');
    expect(() => withBlock('docker/x.conf', 'no block\n', 'new')).toThrow('docker/x.conf: no generated block');
    // The hand-written parts stay: nginx.conf's dashboard, /healthz and catch-all; the Ingress file's header.
    const nginx = readDocker('nginx.conf');
    expect(nginx.indexOf('# BEGIN proxy routes')).toBeLessThan(nginx.indexOf('location = /healthz'));
    expect(readDocker('k8s/ingress.yaml')).toMatch(/^# The path routing of docker\/nginx.conf for ingress-nginx/);
  });
});
