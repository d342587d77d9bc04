import { readdirSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import express from 'express';
import { parse, parseAllDocuments } from 'yaml';
import { parseTrustProxy } from '@analytics/runtime';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the header npm start sends is the one nginx must send
import { DASHBOARD_CSP } from '../../../apps/standalone/src/dashboard.route';
import { OAUTH_ROUTES, pathPattern, routes } from '@analytics/schema';
import { INGRESS_CATCH_ALL } from './proxy-routes';
import { APPS, INTERNAL_APPS, type Loose, PROXIED_APPS, PROXY_PATHS, PUBLIC_ROUTES, concretePath, cspHeadersOf, readDocker, upstreamOf } from './routes';

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string> }; spec?: Loose; data?: Loose; stringData?: Loose };

/** Every object of every docker/k8s/*.yaml except the Kustomization, in file order. */
function k8sObjects(): Array<{ file: string; obj: Obj }> {
  const out: Array<{ file: string; obj: Obj }> = [];
  for (const file of readdirSync(`${__dirname}/../../../docker/k8s`).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of parseAllDocuments(readDocker(`k8s/${file}`))) {
      if (doc.errors.length > 0) throw new Error(`docker/k8s/${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const obj = doc.toJS() as Obj | null;
      if (obj && obj.kind !== 'Kustomization') out.push({ file, obj });
    }
  }
  return out;
}

/** The kubernetes-models class for apiVersion/kind (`apps/v1` + `Deployment` -> kubernetes-models/apps/v1/Deployment). */
async function modelOf(apiVersion: string, kind: string): Promise<new (data: unknown) => { validate(): void }> {
  const mod = (await import(`kubernetes-models/${apiVersion}/${kind}`)) as Record<string, new (data: unknown) => { validate(): void }>;
  const model = mod[kind];
  if (!model) throw new Error(`no Kubernetes schema for ${apiVersion} ${kind}`);
  return model;
}

/** The caller address an app configured with TRUST_PROXY `value` sees for a connection from `peer` (express's own rule). */
function clientAddressOf(value: string, peer: string, forwardedFor: string): string {
  const trust = parseTrustProxy(value);
  if (trust === true || typeof trust === 'number') throw new Error(`TRUST_PROXY ${value} trusts whoever connects: name the proxies' addresses`);
  if (trust === false) throw new Error('TRUST_PROXY is unset: behind a proxy every caller would be the proxy');
  for (const entry of trust) {
    const [address, bits, ...rest] = entry.split('/');
    const max = isIP(address!) === 4 ? 32 : 128;
    if (isIP(address!) === 0 || rest.length > 0 || (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= max))) {
      throw new Error(`TRUST_PROXY entry ${entry} is not an address or CIDR`);
    }
  }
  const app = express().set('trust proxy', trust);
  const req = Object.create(app.request, { socket: { value: { remoteAddress: peer } }, headers: { value: { 'x-forwarded-for': forwardedFor } } }) as { ip: string };
  return req.ip;
}

type LabelSelector = { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> };

/** Whether a Kubernetes label selector selects these labels (an empty selector selects everything). */
function selects(selector: LabelSelector, labels: Record<string, string>): boolean {
  const expressions = selector.matchExpressions ?? [];
  return (
    Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v) &&
    expressions.every(({ key, operator, values = [] }) => {
      if (operator === 'In') return key in labels && values.includes(labels[key]!);
      if (operator === 'NotIn') return !(key in labels) || !values.includes(labels[key]!);
      if (operator === 'Exists') return key in labels;
      if (operator === 'DoesNotExist') return !(key in labels);
      throw new Error(`unknown selector operator ${operator}`);
    })
  );
}

/** The Ingress controller the app pods admit, as docker/README.md documents it for the operator to match. */
const INGRESS_CONTROLLER = {
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } },
  podSelector: { matchLabels: { 'app.kubernetes.io/name': 'ingress-nginx', 'app.kubernetes.io/component': 'controller' } },
};

describe('k8s manifests (docker/k8s)', () => {
  const objects = k8sObjects();
  const find = (kind: string, name: string) => objects.find((o) => o.obj.kind === kind && o.obj.metadata.name === name)?.obj;

  it('parse as YAML and validate against the Kubernetes object schemas', async () => {
    expect(objects.length).toBeGreaterThan(10);
    for (const { file, obj } of objects) {
      const Model = await modelOf(obj.apiVersion, obj.kind);
      try {
        new Model(obj).validate();
      } catch (e) {
        throw new Error(`docker/k8s/${file}: ${obj.kind} ${obj.metadata.name}: ${(e as Error).message}`);
      }
      expect(obj.metadata.namespace).toBe(obj.kind === 'Namespace' ? undefined : 'analytics');
    }
  });

  it('a schema violation is caught (the validator is live)', async () => {
    const Model = await modelOf('apps/v1', 'Deployment');
    expect(() => new Model({ metadata: { name: 'x' }, spec: { selector: {}, template: { spec: { containers: [{ name: 'c', ports: [{ containerPort: 'http' }] }] } } } }).validate()).toThrow(/containerPort/);
  });

  it.each(APPS)('%s: a Deployment with readiness on /readyz, liveness and start-up on /healthz, resources, non-root, config from the ConfigMap and Secret; a Service', (app) => {
    const dep = find('Deployment', app);
    expect(dep).toBeDefined();
    const pod = dep!.spec.template.spec;
    expect(dep!.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': app });
    expect(dep!.spec.template.metadata.labels).toMatchObject({ 'app.kubernetes.io/name': app });
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    // serve() force-exits 20 s after SIGTERM: the grace period outlasts it, so the app's own shutdown always runs.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(30);
    const [c] = pod.containers;
    expect(c.image).toMatch(new RegExp(`^analytics/${app}:`));
    // The image's own command (node dist/apps/$APP/main.js), not an override.
    expect(c.command).toBeUndefined();
    for (const probe of ['livenessProbe', 'startupProbe']) expect(c[probe].httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.readinessProbe.timeoutSeconds).toBeGreaterThan(2); // the app bounds each store check at 2 s
    expect(c.ports).toEqual([{ name: 'http', containerPort: 8080 }]);
    for (const r of ['cpu', 'memory']) {
      expect(c.resources.requests[r]).toBeDefined();
      expect(c.resources.limits[r]).toBeDefined();
    }
    expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    expect(c.envFrom).toEqual([{ configMapRef: { name: 'analytics-config' } }, { secretRef: { name: 'analytics-secrets' } }]);
    const svc = find('Service', app);
    expect(svc?.spec.selector).toEqual({ 'app.kubernetes.io/name': app });
    expect(svc?.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http' }]);
  });

  it('the ConfigMap and the example Secret carry every setting the apps need in production', () => {
    const keys = [...Object.keys(find('ConfigMap', 'analytics-config')!.data), ...Object.keys(find('Secret', 'analytics-secrets')!.stringData)];
    for (const k of ['CLICKHOUSE_URL', 'CLICKHOUSE_CLUSTER', 'CLICKHOUSE_USER', 'CLICKHOUSE_PASSWORD', 'DATABASE_URL', 'REDIS_URL', 'IP_HASH_SECRET', 'ADMIN_TOKEN', 'INTERNAL_SECRET', 'TRUST_PROXY', 'PORT']) {
      expect(keys).toContain(k);
    }
  });

  it('ingest-api scales with an HPA; retention runs daily as a CronJob of `main.js --once`', () => {
    const hpa = find('HorizontalPodAutoscaler', 'ingest-api');
    expect(hpa?.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'ingest-api' });
    expect(hpa?.spec.minReplicas).toBeGreaterThanOrEqual(2);
    const cron = find('CronJob', 'retention-daily');
    expect(cron?.spec.schedule).toMatch(/^\d+ \d+ \* \* \*$/);
    const [c] = cron!.spec.jobTemplate.spec.template.spec.containers;
    expect(c.command).toEqual(['node', 'dist/apps/retention-worker/main.js', '--once']);
    expect(c.image).toMatch(/^analytics\/retention-worker:/);
  });

  it('retention-worker: two replicas (the scheduler runs on the one holding its lease, the other is a standby), one replaced at a time', () => {
    const dep = find('Deployment', 'retention-worker');
    expect(dep?.spec.replicas).toBe(2);
    expect(dep?.spec.strategy.rollingUpdate).toMatchObject({ maxUnavailable: 0 });
  });

  it('aggregate-builder: two replicas (one builds under the lease, the other is a ready standby), one evicted at a time', () => {
    const dep = find('Deployment', 'aggregate-builder');
    expect(dep?.spec.replicas).toBe(2);
    // A rollout replaces one pod at a time and never goes below two: a standby is there whenever the holder stops.
    expect(dep?.spec.strategy.rollingUpdate).toMatchObject({ maxUnavailable: 0 });
    expect(find('HorizontalPodAutoscaler', 'aggregate-builder')).toBeUndefined();
    const pdb = find('PodDisruptionBudget', 'aggregate-builder');
    expect(pdb?.spec).toEqual({ minAvailable: 1, selector: { matchLabels: { 'app.kubernetes.io/name': 'aggregate-builder' } } });
  });

  it('the Ingress objects route exactly the public paths, each to its app\'s Service, every other path to the dashboard\'s JSON 404', () => {
    const ingresses = objects.filter((o) => o.obj.kind === 'Ingress').map((o) => o.obj);
    type Path = { path: string; pathType: string; backend: { service: { name: string } } };
    const paths = ingresses.flatMap((ing) => ing.spec.rules.flatMap((r: Loose) => r.http.paths) as Path[]);
    expect(paths.map((p) => ({ path: p.path, service: p.backend.service.name })).sort((a, b) => a.path.localeCompare(b.path))).toEqual(
      [...PROXY_PATHS.map((p) => ({ path: pathPattern(p.path).slice(1), service: p.app })), { path: '/', service: INGRESS_CATCH_ALL }].sort((a, b) => a.path.localeCompare(b.path)),
    );
    // use-regex on one Ingress of a host applies to every path of it: all say so, all paths are regexes.
    for (const ing of ingresses) {
      expect({ name: ing.metadata.name, annotations: ing.metadata.annotations }).toMatchObject({ name: ing.metadata.name, annotations: { 'nginx.ingress.kubernetes.io/use-regex': 'true', 'nginx.ingress.kubernetes.io/proxy-body-size': '16m' } });
    }
    expect([...new Set(paths.map((p) => p.pathType))]).toEqual(['ImplementationSpecific']);
    // The internal deployables (retention-worker, aggregate-builder) are never a backend.
    expect(paths.filter((p) => (INTERNAL_APPS as readonly string[]).includes(p.backend.service.name))).toEqual([]);

    // ingress-nginx writes each path as `location ~* "^<path>"`, longest first, and takes the first that matches.
    const locations = paths.map((p) => ({ re: new RegExp(`^${p.path}`, 'i'), length: p.path.length, service: p.backend.service.name })).sort((a, b) => b.length - a.length);
    const serviceOf = (path: string) => locations.find((l) => l.re.test(path))?.service;
    for (const { name, route } of PUBLIC_ROUTES) {
      const path = concretePath(route.path, { id: '6f1c0a52-5b7e-4a43-9a55-1b0c1c3e2a10', prefix: 'sk_live_ab12cd34', version: '1.2.3' });
      expect({ name, path, service: serviceOf(path) }).toEqual({ name, path, service: route.app });
    }
    for (const { name, path, app } of OAUTH_ROUTES) expect({ name, path, service: serviceOf(path) }).toEqual({ name, path, service: app });
    for (const path of ['/', '/assets/dashboard.js', '/v1/unknown', '/v1/track/extra', '/v1/trackx', '/admin/', '/admin/nope', '/admin/projects/a/b', '/admin/keys/', '/internal/retention/run', '/metrics', '/healthz', '/sdk/', '/sdk/nope.js', '/sdk/a/b/analytics.min.js', '/openapi.json', '/.well-known/openid-configuration', '/.well-known/oauth-protected-resource/x', '/authorize/x']) {
      expect({ path, service: serviceOf(path) }).toEqual({ path, service: INGRESS_CATCH_ALL });
    }

    // Streamed answers: their Ingress passes them on unbuffered, with the declared wait between chunks; no other is unbuffered.
    for (const ing of ingresses) {
      const streamed = PROXY_PATHS.filter((p) => (ing.spec.rules.flatMap((r: Loose) => r.http.paths) as Path[]).some((q) => q.path === pathPattern(p.path).slice(1)) && p.streaming);
      const annotations = ing.metadata.annotations as Record<string, string>;
      expect({ name: ing.metadata.name, buffering: annotations['nginx.ingress.kubernetes.io/proxy-buffering'] }).toEqual({ name: ing.metadata.name, buffering: streamed.length ? 'off' : undefined });
      const timeout = String(streamed[0]?.streaming?.idleTimeoutS ?? 60);
      expect({ name: ing.metadata.name, read: annotations['nginx.ingress.kubernetes.io/proxy-read-timeout'] }).toEqual({ name: ing.metadata.name, read: timeout });
    }
  });

  it.each(APPS)('the %s Service carries the prometheus.io scrape annotations (port and path of GET /metrics)', (app) => {
    expect((find('Service', app) as Loose)?.metadata.annotations).toEqual({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': '8080', 'prometheus.io/path': '/metrics' });
  });

  it('dashboard: a Deployment of the static build (non-root, read-only, probes on /healthz) and a Service, no secret', () => {
    const dep = find('Deployment', 'dashboard');
    const pod = dep!.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    const [c] = pod.containers;
    expect(c.image).toMatch(/^analytics\/dashboard:/);
    expect(c.ports).toEqual([{ name: 'http', containerPort: 8080 }]);
    for (const probe of ['readinessProbe', 'livenessProbe']) expect(c[probe].httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    expect(c.envFrom).toBeUndefined();
    expect(find('Service', 'dashboard')?.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http' }]);
    const k = parse(readDocker('k8s/kustomization.yaml')) as { images: Array<{ name: string }> };
    expect(k.images.map((i) => i.name)).toContain('analytics/dashboard');
  });

  it('TRUST_PROXY names private address ranges (the Ingress controller\'s pods), not a hop count: the app sees the address the controller set, and a public peer its own', () => {
    const value = String(find('ConfigMap', 'analytics-config')!.data.TRUST_PROXY);
    expect(clientAddressOf(value, '10.244.3.17', '6.6.6.6, 203.0.113.5')).toBe('203.0.113.5');
    expect(clientAddressOf(value, '::ffff:10.244.3.17', '203.0.113.5')).toBe('203.0.113.5');
    expect(clientAddressOf(value, 'fd00:10:244::7', '203.0.113.5')).toBe('203.0.113.5');
    // No public address is a trusted proxy: one reaching an app is taken at its word for nothing.
    for (const peer of ['8.8.8.8', '1.1.1.1', '203.0.113.9', '2001:4860:4860::8888']) expect(clientAddressOf(value, peer, '6.6.6.6')).toBe(peer);
    expect(() => clientAddressOf('1', '10.0.0.1', '6.6.6.6')).toThrow(/trusts whoever connects/); // the check is live
  });

  it('every app behind the Ingress admits only the Ingress controller (NetworkPolicy); the internal ones (retention-worker, aggregate-builder) only pods of their namespace', () => {
    const policies = objects.filter((o) => o.obj.kind === 'NetworkPolicy').map((o) => o.obj);
    const admitted = (app: string) => {
      const labels = find('Deployment', app)!.spec.template.metadata.labels as Record<string, string>;
      const isolating = policies.filter((p) => selects(p.spec.podSelector, labels) && (p.spec.policyTypes ?? ['Ingress']).includes('Ingress'));
      expect({ app, isolated: isolating.length > 0 }).toEqual({ app, isolated: true });
      return isolating.flatMap((p) => (p.spec.ingress ?? []) as Array<{ from?: unknown[]; ports?: unknown[] }>);
    };
    for (const app of [...PROXIED_APPS, 'dashboard']) {
      for (const rule of admitted(app)) {
        // A rule without `from` admits every source; ipBlock would admit addresses outside the cluster's selectors.
        expect({ app, from: rule.from }).toEqual({ app, from: [INGRESS_CONTROLLER] });
        expect({ app, ports: rule.ports }).toEqual({ app, ports: [{ port: 'http', protocol: 'TCP' }] });
      }
    }
    for (const app of INTERNAL_APPS) {
      const rules = admitted(app);
      expect({ app, rules: rules.length }).toEqual({ app, rules: 1 });
      for (const rule of rules) expect({ app, from: rule.from }).toEqual({ app, from: [{ podSelector: {} }] });
    }
    // The selector the operator must match is the one the docs name.
    const docs = readDocker('README.md');
    expect(docs).toContain('kubernetes.io/metadata.name: ingress-nginx');
    expect(docs).toContain('app.kubernetes.io/component: controller');
  });

  it('kustomization.yaml lists every manifest except the example Secret', () => {
    const k = parse(readDocker('k8s/kustomization.yaml')) as { resources: string[] };
    const files = readdirSync(`${__dirname}/../../../docker/k8s`).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml' && f !== 'secret.example.yaml');
    expect([...k.resources].sort()).toEqual(files.sort());
  });

  it("kustomization.yaml sets every app's image (and the dashboard's) to one release tag", () => {
    const k = parse(readDocker('k8s/kustomization.yaml')) as { images: Array<{ name: string; newTag: string }> };
    expect(k.images.map((i) => i.name).sort()).toEqual([...APPS, 'dashboard'].map((a) => `analytics/${a}`).sort());
    expect(new Set(k.images.map((i) => i.newTag)).size).toBe(1);
  });
});

describe('compose file (docker/compose.yml)', () => {
  const compose = parse(readDocker('compose.yml'), { merge: true }) as { services: Record<string, Loose> };
  const services = compose.services;

  it('parses and names every required service: a ClickHouse cluster with Keeper, PostgreSQL, Redis, nginx, every app', () => {
    for (const s of ['keeper', 'postgres', 'redis', 'nginx', ...APPS]) expect(Object.keys(services)).toContain(s);
    const clickhouse = Object.entries(services).filter(([, s]) => String(s.image).startsWith('clickhouse/clickhouse-server'));
    expect(clickhouse.length).toBeGreaterThanOrEqual(2);
    const shards = new Map<string, string[]>();
    for (const [name, s] of clickhouse) {
      shards.set(s.environment.CH_SHARD, [...(shards.get(s.environment.CH_SHARD) ?? []), s.environment.CH_REPLICA]);
      expect(s.environment.CH_REPLICA).toBe(name);
      expect(s.volumes).toContain('./clickhouse/config.d/cluster.xml:/etc/clickhouse-server/config.d/cluster.xml:ro');
    }
    // every shard has at least two replicas
    for (const replicas of shards.values()) expect(replicas.length).toBeGreaterThanOrEqual(2);
    expect(String(services.keeper.image)).toMatch(/^clickhouse\/clickhouse-keeper:/);
  });

  it('ingest-api can be scaled (no container_name, no host port) and every app gets the production settings', () => {
    expect(services['ingest-api'].container_name).toBeUndefined();
    expect(services['ingest-api'].ports).toBeUndefined();
    for (const app of APPS) {
      const s = services[app];
      expect(s.build).toEqual({ context: '..', dockerfile: 'docker/Dockerfile', args: { APP: app } });
      for (const k of ['CLICKHOUSE_URL', 'CLICKHOUSE_CLUSTER', 'DATABASE_URL', 'REDIS_URL', 'IP_HASH_SECRET', 'ADMIN_TOKEN', 'INTERNAL_SECRET', 'TRUST_PROXY']) {
        expect(s.environment[k]).toBeTruthy();
      }
      expect(s.environment.CLICKHOUSE_CLUSTER).toBe('analytics');
    }
    // Secrets are never written into the file: each is required from docker/.env.
    for (const k of ['IP_HASH_SECRET', 'ADMIN_TOKEN', 'INTERNAL_SECRET']) expect(services['ingest-api'].environment[k]).toMatch(new RegExp(`^\\$\\{${k}:\\?`));
  });

  it("TRUST_PROXY names nginx's fixed address, not a hop count: the app sees the address nginx added, and any other container its own", () => {
    const compose = parse(readDocker('compose.yml'), { merge: true }) as { networks: Loose };
    const ipam = (compose.networks.default.ipam.config as Array<{ subnet: string; ip_range: string; gateway: string }>)[0]!;
    const nginx = services.nginx.networks.default.ipv4_address as string;
    const inSubnet = (address: string, cidr: string) => {
      const [net, bits] = cidr.split('/');
      const list = new BlockList();
      list.addSubnet(net!, Number(bits));
      return list.check(address);
    };
    expect(inSubnet(nginx, ipam.subnet)).toBe(true);
    expect(inSubnet(nginx, ipam.ip_range)).toBe(false); // no container is given nginx's address
    for (const app of APPS) {
      const value = String(services[app].environment.TRUST_PROXY);
      expect({ app, trustProxy: parseTrustProxy(value) }).toEqual({ app, trustProxy: [nginx] });
      expect(clientAddressOf(value, nginx, '6.6.6.6, 203.0.113.5')).toBe('203.0.113.5');
      // A client on the host itself reaches nginx through the network's gateway: its address, not what it sent.
      expect(clientAddressOf(value, nginx, `6.6.6.6, ${ipam.gateway}`)).toBe(ipam.gateway);
      expect(clientAddressOf(value, '172.28.0.130', '6.6.6.6')).toBe('172.28.0.130');
    }
  });

  it('aggregate-builder: internal, scalable to a standby, started once ClickHouse and PostgreSQL (its lease) are healthy', () => {
    const s = services['aggregate-builder'];
    expect(s.image).toBe('analytics/aggregate-builder:local');
    // A second one (`--scale aggregate-builder=2`) is a standby: no container_name, no host port.
    expect(s.container_name).toBeUndefined();
    expect(s.ports).toBeUndefined();
    expect(s.depends_on).toEqual(services['read-api'].depends_on);
    for (const dep of ['postgres', 'ch-s1-r1', 'ch-s2-r1']) expect(s.depends_on[dep]).toEqual({ condition: 'service_healthy' });
    // The image's HEALTHCHECK (GET /healthz), as for the other apps.
    expect(s.healthcheck).toBeUndefined();
    expect(services.nginx.depends_on['aggregate-builder']).toBeUndefined();
    for (const app of INTERNAL_APPS) expect(readDocker('nginx.d/upstreams.conf')).not.toContain(`${app}:8080`);
  });

  it("nginx is built with the dashboard's static build under its prefix (Dockerfile target proxy)", () => {
    expect(services.nginx.build).toEqual({ context: '..', dockerfile: 'docker/Dockerfile', target: 'proxy' });
    expect(services.nginx.command).toEqual(expect.arrayContaining(['-p', '/var/cache/nginx/']));
    const dockerfile = readDocker('Dockerfile');
    expect(dockerfile).toMatch(/FROM \S+ AS proxy\nCOPY --from=build \/src\/dist\/apps\/dashboard \/var\/cache\/nginx\/dashboard\n/);
    expect(dockerfile).toMatch(/FROM \S+ AS dashboard\nCOPY docker\/dashboard.nginx.conf \/etc\/nginx\/nginx.conf\nCOPY --from=build \/src\/dist\/apps\/dashboard \/usr\/share\/nginx\/dashboard\n/);
  });

  it('nginx mounts docker/nginx.conf and its compose upstreams, which name the compose services the routes need', () => {
    expect(services.nginx.volumes).toEqual(expect.arrayContaining(['./nginx.conf:/etc/nginx/nginx.conf:ro', './nginx.d:/etc/nginx/nginx.d:ro']));
    const upstreams = readDocker('nginx.d/upstreams.conf');
    for (const app of PROXIED_APPS) {
      expect(upstreams).toMatch(new RegExp(`upstream ${upstreamOf(app)} \\{[^}]*server ${app}:8080 resolve;`));
      expect(services[app]).toBeDefined();
    }
    // nginx starts once every app it routes to is healthy, and waits on no other.
    expect(Object.keys(services.nginx.depends_on).sort()).toEqual([...PROXIED_APPS].sort());
    for (const app of PROXIED_APPS) expect(services.nginx.depends_on[app]).toEqual({ condition: 'service_healthy' });
  });
});

describe('Dockerfile (docker/Dockerfile)', () => {
  it('names every app among the APP values, in its header and in the error a build without APP stops with', () => {
    const dockerfile = readDocker('Dockerfile');
    const header = /^# APP is one of: ([^(]*)\(/m.exec(dockerfile)?.[1];
    const error = /build with --build-arg APP=<app> \(([^)]*)\)/.exec(dockerfile)?.[1];
    for (const list of [header, error]) expect(list?.split(',').map((a) => a.trim()).filter(Boolean)).toEqual([...APPS]);
  });
});

describe('nginx.conf routing rules (docker/nginx.conf)', () => {
  it('proxies only in the generated block (one location per public path) and answers /internal/ itself', () => {
    const conf = readDocker('nginx.conf');
    const [before, rest] = conf.split(/^ *# BEGIN proxy routes.*$/m);
    const [block, after] = rest!.split(/^ *# END proxy routes$/m);
    // Outside it, only the share link page's auth_request to admin-api (docs/saved-and-shared.md), at its declared path.
    expect(`${before}${after}`.match(/proxy_pass .*/g)).toEqual([`proxy_pass http://admin_api${routes.shareFrameAncestors.path}?token=$share_token&embed=$share_embed;`]);
    expect(block!.match(/proxy_pass http:\/\/\w+;/g)).toHaveLength(PROXY_PATHS.length);
    expect(conf).toMatch(/location \/ \{ return 404 '\{"error":"not_found"\}\\n'; \}/);
    expect(conf).toMatch(/location \/internal\/ \{ return 404 /);
    expect(conf).toMatch(/location = \/metrics \{ return 404 /);
    expect(conf).toMatch(/client_max_body_size 16m;/);
    // The apps' header and body deadlines (serve.ts headersTimeout, BODY_READ_TIMEOUT_MS's default).
    expect(conf).toMatch(/client_header_timeout 30s;/);
    expect(conf).toMatch(/client_body_timeout 10s;/);
    expect(conf).toMatch(/proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/);
    // The raw caller IP is never stored: no address and no query string in the access log, no error-level lines.
    const logFormat = /log_format analytics ([^;]*);/.exec(conf)?.[1];
    // The path as $uri (no query string), a share link's secret dropped ($logged_uri maps /share/shr_{id}_{secret}).
    expect(logFormat).toMatch(/\$logged_uri/);
    expect(conf).toMatch(/map \$uri \$logged_uri \{\s*"~\^\/share\/shr_\(\?<share_id>\[0-9A-Za-z\]\+\)_" "\/share\/shr_\$\{share_id\}_\[redacted\]";\s*default \$uri;/);
    expect(logFormat).not.toMatch(/remote_addr|forwarded_for|request_uri|\$request |\$args|query_string/);
    expect(conf).toMatch(/^error_log stderr crit;$/m);
  });

  it("serves the dashboard's files with the CSP npm start sends, in nginx.conf and in the dashboard's own server", () => {
    for (const file of ['nginx.conf', 'dashboard.nginx.conf']) {
      const conf = readDocker(file);
      // The page, a share link's page (its frame-ancestors: admin-api's answer in nginx.conf, 'none' in the dashboard's
      // own server, which does not reach admin-api), the files.
      const share = file === 'nginx.conf' ? DASHBOARD_CSP.replace("frame-ancestors 'none'", 'frame-ancestors $share_frame_ancestors_csp') : DASHBOARD_CSP;
      expect({ file, csp: cspHeadersOf(conf) }).toEqual({ file, csp: [DASHBOARD_CSP, share, DASHBOARD_CSP] });
      expect(conf).toMatch(/location = \/ \{[^}]*try_files \/index.html @not_found;/);
      expect(conf).toMatch(/location \/assets\/ \{[^}]*try_files \$uri @not_found;/);
    }
    expect(readDocker('nginx.conf')).toMatch(/location = \/ \{\s*root dashboard;/);
  });
});
