import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { z } from 'zod';
import { envInt, envString, loadConfig } from '@analytics/runtime';
import { findExecutable } from '@analytics/testing';
import { type Topology, startTopology } from './topology';

/**
 * `npm run topology`: the production shape on this machine (docs/deploying.md): two ingest-api replicas, read-api,
 * mcp-gateway, admin-api and retention-worker as separate processes on one ClickHouse HTTP test harness, the given
 * PostgreSQL and Redis, behind Debian's nginx with docker/nginx.conf. Stops everything on SIGINT/SIGTERM.
 */
const topologyEnv = z.object({
  DATABASE_URL: envString(),
  REDIS_URL: envString(),
  NGINX_BIN: envString(),
  PROXY_PORT: envInt(8088, 0, 65535),
  ADMIN_TOKEN: envString(),
  INTERNAL_SECRET: envString(),
  IP_HASH_SECRET: envString(),
  DATA_DIR: envString(),
  PATH: envString(),
});

const ROOT = resolve(__dirname, '../../..');

function fail(message: string): never {
  process.stderr.write(`topology: ${message}\n`);
  process.exit(1);
}

async function main() {
  const env = loadConfig(topologyEnv);
  const missing = (['DATABASE_URL', 'REDIS_URL'] as const).filter((k) => !env[k]);
  if (missing.length) {
    fail(`missing required settings ${missing.join(', ')}: the processes share one PostgreSQL and one Redis, e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npm run topology`);
  }
  const nginxBin = findExecutable(env.NGINX_BIN ? [env.NGINX_BIN] : ['nginx', '/usr/sbin/nginx'], env.PATH ?? '');
  if (!nginxBin) fail(`nginx not found (looked at ${env.NGINX_BIN ? `NGINX_BIN=${env.NGINX_BIN}` : 'PATH and /usr/sbin/nginx'}); install it with: apt-get install -y nginx-light, or set NGINX_BIN`);

  const secret = (name: 'ADMIN_TOKEN' | 'INTERNAL_SECRET' | 'IP_HASH_SECRET') => {
    const given = env[name];
    if (given) return given;
    const made = randomBytes(24).toString('hex');
    console.log(`Generated ${name}: ${made}`);
    return made;
  };
  const dataDir = resolve(env.DATA_DIR ?? '.data/topology');
  const abort = new AbortController();
  let stopping = false;
  const running: { topology?: Topology } = {};
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`topology: ${signal}, stopping every process`);
    abort.abort();
    // During start-up startTopology stops what it started, then rejects.
    if (running.topology) void running.topology.stop().then(() => process.exit(0));
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  const topology: Topology = await startTopology({
    root: ROOT, databaseUrl: env.DATABASE_URL!, redisUrl: env.REDIS_URL!, nginxBin, proxyPort: env.PROXY_PORT,
    adminToken: secret('ADMIN_TOKEN'), internalSecret: secret('INTERNAL_SECRET'), ipHashSecret: secret('IP_HASH_SECRET'), dataDir, baseEnv: process.env,
    signal: abort.signal,
  }).catch((e: unknown) => {
    // Interrupted during start-up: what had started is stopped, and that is what was asked.
    if (abort.signal.aborted) process.exit(0);
    throw e;
  });
  running.topology = topology;
  for (const [name, s] of Object.entries(topology.apps)) {
    console.log(`${name.padEnd(18)} pid ${String(s.proc.pid).padEnd(8)} http://127.0.0.1:${s.port}`);
    s.proc.once('exit', (code, signal) => void (!stopping && console.log(`topology: ${name} (pid ${s.proc.pid}) exited (${signal ?? code}); nginx routes around it`)));
  }
  console.log(`${'clickhouse-harness'.padEnd(18)} pid ${String(topology.harness.proc.pid).padEnd(8)} ${topology.clickhouseUrl} (test harness: production runs a ClickHouse server)`);
  console.log(`${'nginx'.padEnd(18)} pid ${String(topology.nginx.proc.pid).padEnd(8)} ${topology.proxyUrl}`);
  console.log(`Logs in ${dataDir}/logs. Ready: ${topology.proxyUrl}`);
}

main().catch((e: unknown) => fail((e as Error).message));
