import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export const root = resolve(__dirname, '../../..');
export const dockerDir = resolve(root, 'docker');
export const readDocker = (path: string) => readFileSync(resolve(dockerDir, path), 'utf8');

/** The deployables and, for each public path, the one that must answer it (docker/README.md, "Deploying"). */
export const APPS = ['ingest-api', 'read-api', 'mcp-gateway', 'admin-api', 'retention-worker', 'aggregate-builder'] as const;
export type App = (typeof APPS)[number];

/** The deployables no public path reaches: not in the Ingress or nginx.conf, only pods of their namespace call them. */
export const INTERNAL_APPS: readonly App[] = ['retention-worker', 'aggregate-builder'];

export interface Route {
  method: 'GET' | 'POST';
  path: string;
  app: App;
  /** How the route is matched: the exact path, or every path under a prefix. */
  match: 'exact' | 'prefix';
  /** Public static files (no key): the app answers without its 401. */
  open?: true;
}

export const ROUTES: readonly Route[] = [
  { method: 'POST', path: '/v1/track', app: 'ingest-api', match: 'exact' },
  { method: 'POST', path: '/v1/batch', app: 'ingest-api', match: 'exact' },
  { method: 'POST', path: '/v1/identify', app: 'ingest-api', match: 'exact' },
  { method: 'POST', path: '/v1/forget', app: 'ingest-api', match: 'exact' },
  { method: 'GET', path: '/sdk/', app: 'ingest-api', match: 'prefix', open: true },
  { method: 'GET', path: '/v1/query', app: 'read-api', match: 'exact' },
  { method: 'GET', path: '/v1/stats', app: 'read-api', match: 'exact' },
  { method: 'GET', path: '/v1/sources', app: 'read-api', match: 'exact' },
  { method: 'GET', path: '/v1/export', app: 'read-api', match: 'exact' },
  { method: 'POST', path: '/mcp', app: 'mcp-gateway', match: 'exact' },
  { method: 'GET', path: '/admin/', app: 'admin-api', match: 'prefix' },
  { method: 'GET', path: '/auth/', app: 'admin-api', match: 'prefix' },
];

export { upstreamOf } from '@analytics/topology';

/** The dashboard's static paths: served by nginx itself from <prefix>/dashboard, by the `dashboard` Service in k8s. */
export const DASHBOARD_PATHS = [
  { path: '/', match: 'exact' },
  { path: '/assets/', match: 'prefix' },
] as const;

/** The CSP of every dashboard location in an nginx config (`add_header Content-Security-Policy "…" always;`). */
export const cspHeadersOf = (conf: string) => [...conf.matchAll(/add_header Content-Security-Policy "([^"]*)" always;/g)].map((m) => m[1]);

/** Routes as nginx.conf states them: `location = /p { proxy_pass http://u; }` and `location /p/ { ... }`. */
export function nginxRoutes(conf: string): Array<{ path: string; match: 'exact' | 'prefix'; upstream: string }> {
  const out: Array<{ path: string; match: 'exact' | 'prefix'; upstream: string }> = [];
  for (const m of conf.matchAll(/location\s+(=\s+)?(\S+)\s*\{([^}]*)\}/g)) {
    const pass = /proxy_pass\s+http:\/\/(\w+)\s*;/.exec(m[3]!);
    if (pass) out.push({ path: m[2]!, match: m[1] ? 'exact' : 'prefix', upstream: pass[1]! });
  }
  return out;
}

/** Parsed YAML and JSON answers, checked field by field by the specs: typed loosely on purpose. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Loose = any;
