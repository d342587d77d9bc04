import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type ApiRoute, exposureOf, routes } from '@analytics/schema';
import { proxyPaths } from './proxy-routes';

export const root = resolve(__dirname, '../../..');
export const dockerDir = resolve(root, 'docker');
export const readDocker = (path: string) => readFileSync(resolve(dockerDir, path), 'utf8');

/** The deployables, one image each (docker/README.md, "Deploying"). */
export const APPS = ['ingest-api', 'read-api', 'mcp-gateway', 'admin-api', 'retention-worker', 'aggregate-builder'] as const;
export type App = (typeof APPS)[number];

/** The public routes of libs/schema's declarations, by name: what the proxy routes, each to its app (proxy-routes.ts). */
export const PUBLIC_ROUTES: ReadonlyArray<{ name: string; route: ApiRoute & { app: App } }> = Object.entries(routes as Record<string, ApiRoute>)
  .filter(([, route]) => exposureOf(route) === 'public')
  .map(([name, route]) => ({ name, route: route as ApiRoute & { app: App } }));

/** The paths the proxy routes, as `npm run proxy:routes` generates them. */
export const PROXY_PATHS = proxyPaths();

/** The deployables some public route reaches: the proxy's upstreams (nginx) and the Ingress' backends. */
export const PROXIED_APPS: readonly App[] = APPS.filter((app) => PROXY_PATHS.some((p) => p.app === app));

/** The deployables no public path reaches: not in the Ingress or nginx.conf, only pods of their namespace call them. */
export const INTERNAL_APPS: readonly App[] = APPS.filter((app) => !PROXIED_APPS.includes(app));

/** A declared path with each `{param}` replaced by `params[param]` (`x` when not given). */
export const concretePath = (path: string, params: Record<string, string> = {}) => path.replace(/\{([^}]+)\}/g, (_m, name: string) => params[name] ?? 'x');

export { upstreamOf } from '@analytics/topology';

/** The CSP of every dashboard location in an nginx config (`add_header Content-Security-Policy "…" always;`). */
export const cspHeadersOf = (conf: string) => [...conf.matchAll(/add_header Content-Security-Policy "([^"]*)" always;/g)].map((m) => m[1]);

/** Parsed YAML and JSON answers, checked field by field by the specs: typed loosely on purpose. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Loose = any;
