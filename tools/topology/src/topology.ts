import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { type Started, startNginx, startNode, stopProcess, waitFor200 } from './processes';

/** The deployables of the production shape, each its own process; ingest-api twice (ops scale ingest alone), one builder. */
export const PROCESSES = [
  { name: 'ingest-api-1', app: 'ingest-api' },
  { name: 'ingest-api-2', app: 'ingest-api' },
  { name: 'read-api', app: 'read-api' },
  { name: 'mcp-gateway', app: 'mcp-gateway' },
  { name: 'admin-api', app: 'admin-api' },
  { name: 'retention-worker', app: 'retention-worker' },
  // Builds the aggregates from what both ingest replicas write (libs/event-store/README.md, "One builder, every mode").
  { name: 'aggregate-builder', app: 'aggregate-builder' },
] as const;
export type ProcessName = (typeof PROCESSES)[number]['name'];

/** nginx upstream name of an app (`ingest-api` -> `ingest_api`), as docker/nginx.conf names them. */
export const upstreamOf = (app: string) => app.replace('-', '_');

export interface TopologyOptions {
  /** Workspace root: holds dist/ (built apps and harness) and docker/nginx.conf. */
  root: string;
  databaseUrl: string;
  redisUrl: string;
  nginxBin: string;
  /** 0 picks a free port. */
  proxyPort: number;
  adminToken: string;
  internalSecret: string;
  ipHashSecret: string;
  /** Harness data (clickhouse/), nginx prefix (nginx/) and every process's log (logs/<name>.log). */
  dataDir: string;
  /** Environment the apps inherit (LOG_LEVEL and the like); the topology's own settings override it. */
  baseEnv?: NodeJS.ProcessEnv;
  /** Settings of one process over the topology's (a replica's store URL through a fault-injecting proxy, in tests). */
  processEnv?: Partial<Record<ProcessName, NodeJS.ProcessEnv>>;
  /** Aborting it during start-up stops whatever was started and rejects. */
  signal?: AbortSignal;
}

export interface Topology {
  proxyUrl: string;
  /** The ClickHouse HTTP test harness every app's CLICKHOUSE_URL points at. */
  clickhouseUrl: string;
  /** The environment every app runs with (what `retention-worker --once` needs to reach the same stores). */
  appEnv: NodeJS.ProcessEnv;
  apps: Record<ProcessName, Started>;
  harness: Started;
  nginx: Started;
  /** Stops every process it started: nginx, then the apps (graceful SIGTERM), then the harness. */
  stop(): Promise<void>;
}

/** Settings that would send an app elsewhere than the topology's stores. */
const FOREIGN = ['CLICKHOUSE_URL', 'CLICKHOUSE_CLUSTER', 'CLICKHOUSE_USER', 'CLICKHOUSE_PASSWORD', 'DATA_DIR', 'PORT'];

/** What one app runs with beyond every app's settings: mcp-gateway serves the OAuth endpoints the proxy routes to it. */
const APP_SETTINGS: Partial<Record<(typeof PROCESSES)[number]['app'], NodeJS.ProcessEnv>> = { 'mcp-gateway': { MCP_OAUTH: 'on' } };

/** A free loopback port held (listening) until `release`, so that no process started meanwhile takes it. */
const holdPort = () =>
  new Promise<{ port: number; release: () => Promise<void> }>((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => done({ port: (srv.address() as AddressInfo).port, release: () => new Promise((r) => srv.close(() => r())) }));
  });

/**
 * The production shape on one machine: the ClickHouse HTTP test harness (one chDB session), the deployables as
 * separate processes on it and on the given PostgreSQL and Redis, and nginx with docker/nginx.conf in front
 * (ingest upstream with both replicas). Resolves once every app answers /readyz and nginx serves.
 */
export async function startTopology(o: TopologyOptions): Promise<Topology> {
  // Every process spawned, listening or not: stop() reaches them all whatever happened.
  const spawned: Array<{ name: string; proc: ChildProcess }> = [];
  const onSpawn = (name: string) => (proc: ChildProcess) => {
    spawned.push({ name, proc });
    if (o.signal?.aborted) proc.kill('SIGTERM');
  };
  const stop = async () => {
    const of = (names: (n: string) => boolean) => spawned.filter((s) => names(s.name)).map((s) => stopProcess(s.proc));
    await Promise.all(of((n) => n === 'nginx'));
    await Promise.all(of((n) => n !== 'nginx' && n !== 'clickhouse-harness'));
    await Promise.all(of((n) => n === 'clickhouse-harness'));
  };
  const track = (s: Started) => {
    if (o.signal?.aborted) throw new Error('topology: stopped during start-up');
    return s;
  };
  o.signal?.addEventListener('abort', () => void stop(), { once: true });
  const logs = join(o.dataDir, 'logs');
  mkdirSync(logs, { recursive: true });
  // nginx's workers (nobody, when started as root) reach their prefix, nginx/ and its dashboard link, through it.
  chmodSync(o.dataDir, 0o711);
  mkdirSync(join(o.dataDir, 'clickhouse'), { recursive: true });
  // The proxy's port is known before the apps start: their PUBLIC_URL names it.
  const held = o.proxyPort ? undefined : await holdPort();
  const proxyPort = o.proxyPort || held!.port;
  const proxyUrl = `http://127.0.0.1:${proxyPort}`;
  try {
    const harness = track(
      await startNode('clickhouse-harness', ['dist/tools/clickhouse-harness/main.js', '--path', join(o.dataDir, 'clickhouse')], {
        cwd: o.root, env: { ...o.baseEnv, NODE_OPTIONS: '' }, logFile: join(logs, 'clickhouse-harness.log'), onSpawn: onSpawn('clickhouse-harness'),
      }),
    );
    const clickhouseUrl = `http://127.0.0.1:${harness.port}`;
    const appEnv: NodeJS.ProcessEnv = { ...o.baseEnv, NODE_OPTIONS: '' };
    for (const k of FOREIGN) delete appEnv[k];
    Object.assign(appEnv, {
      CLICKHOUSE_URL: clickhouseUrl, DATABASE_URL: o.databaseUrl, REDIS_URL: o.redisUrl, ADMIN_TOKEN: o.adminToken,
      INTERNAL_SECRET: o.internalSecret, IP_HASH_SECRET: o.ipHashSecret,
      // nginx on loopback is the one trusted proxy (compose names nginx's fixed address the same way).
      TRUST_PROXY: 'loopback',
      // The origin clients reach, as behind any proxy (nginx's Host has no port): the OAuth issuer and endpoints, links.
      PUBLIC_URL: proxyUrl,
    });
    const start = async (p: (typeof PROCESSES)[number]) => {
      const env = { ...appEnv, ...APP_SETTINGS[p.app], ...o.processEnv?.[p.name], PORT: '0' };
      const s = track(await startNode(p.name, [`dist/apps/${p.app}/main.js`], { cwd: o.root, env, logFile: join(logs, `${p.name}.log`), onSpawn: onSpawn(p.name) }));
      await waitFor200(p.name, s.port, '/readyz', s.proc);
      return [p.name, s] as const;
    };
    // The first one migrates both stores; the others then start together, as a rollout scales out.
    const first = await start(PROCESSES[0]);
    const rest = await Promise.all(PROCESSES.slice(1).map(start));
    const apps = Object.fromEntries([first, ...rest]) as Record<ProcessName, Started>;
    const ports = (app: string) => PROCESSES.filter((p) => p.app === app).map((p) => apps[p.name].port);
    const upstreams = Object.fromEntries([...new Set(PROCESSES.map((p) => p.app))].map((app) => [upstreamOf(app), ports(app)]));
    await held?.release();
    const nginx = await startNginx(o.nginxBin, join(o.root, 'docker/nginx.conf'), join(o.dataDir, 'nginx'), upstreams, proxyPort, join(o.root, 'dist/apps/dashboard'));
    spawned.push({ name: 'nginx', proc: nginx.proc });
    track(nginx);
    return { proxyUrl, clickhouseUrl, appEnv, apps, harness, nginx, stop };
  } catch (e) {
    await held?.release();
    await stop();
    throw e;
  }
}
