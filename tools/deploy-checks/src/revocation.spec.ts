import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemBinary } from '@analytics/testing';
import { TcpProxy, type Topology, hostPortOf, startTopology, viaProxy } from '@analytics/topology';
import { http } from './http';
import { ADMIN_TOKEN, type Keys, REDIS_URL, ROOT, bearer, createProject, post, realStores } from './revocation-support';

// "Revoked at once" in the production shape: DELETE /admin/keys/:prefix through nginx answers 204 only once every
// ingest replica refuses the key, while both replicas serve a steady load. Two ways a replica kept a revoked key: a
// lookup of the key in flight when the revocation committed (it read the key before, and cached that after the
// replica had dropped its entry), and a replica whose Redis connection was down when the revocation went out (the
// message never reached it). Each is made certain rather than left to chance: the ingest replicas reach PostgreSQL
// and (the second) Redis through a TCP proxy that holds the key store's answer or cuts Redis at the chosen moment.
const NGINX = systemBinary({ name: 'nginx', env: 'NGINX_BIN', defaults: ['/usr/sbin/nginx', 'nginx'], aptPackage: 'nginx-light' });
const UNLIMITED = { RATE_LIMIT_TRACK_PER_S: '100000', RATE_LIMIT_TRACK_BURST: '100000' };

NGINX.describe('revocation at once in the production shape under load (nginx, two ingest replicas, PostgreSQL, Redis)', () => {
  let topo: Topology | undefined;
  let dataDir: string;
  let drop: (() => Promise<void>) | undefined;
  let keyStoreProxy: TcpProxy;
  let redisProxy: TcpProxy;
  let proxy: number;
  let replicas: number[];
  const load = { running: true, statuses: new Map<number, number>(), done: Promise.resolve() };

  beforeAll(async () => {
    execFileSync(process.execPath, ['tools/build.mjs'], { cwd: ROOT, stdio: 'ignore' });
    const stores = await realStores('revocation');
    drop = stores.drop;
    keyStoreProxy = await TcpProxy.start(hostPortOf(stores.databaseUrl));
    redisProxy = await TcpProxy.start(hostPortOf(REDIS_URL));
    dataDir = mkdtempSync(join(tmpdir(), 'revocation-'));
    const viaKeyStoreProxy = viaProxy(stores.databaseUrl, keyStoreProxy);
    topo = await startTopology({
      root: ROOT, databaseUrl: stores.databaseUrl, redisUrl: REDIS_URL, nginxBin: NGINX.path, proxyPort: 0, adminToken: ADMIN_TOKEN,
      internalSecret: randomBytes(16).toString('hex'), ipHashSecret: 'revocation', dataDir,
      // Prefixes reach the replicas by announcement only: no periodic reload puts a query of its own behind the proxy.
      baseEnv: { PATH: process.env.PATH, LOG_LEVEL: 'info', KEY_PREFIX_RELOAD_MS: '3600000', ...UNLIMITED },
      processEnv: {
        'ingest-api-1': { DATABASE_URL: viaKeyStoreProxy },
        'ingest-api-2': { DATABASE_URL: viaKeyStoreProxy, REDIS_URL: viaProxy(REDIS_URL, redisProxy) },
      },
    });
    proxy = topo.nginx.port;
    replicas = [topo.apps['ingest-api-1'].port, topo.apps['ingest-api-2'].port];
    // The load: other projects' tracks through nginx, on both replicas, for as long as the checks run.
    const loadKeys = await Promise.all([1, 2, 3].map((i) => createProject(proxy, `load-${i}`)));
    load.done = Promise.all(Array.from({ length: 6 }, async (_, w) => {
      while (load.running) {
        const r = await post(proxy, '/v1/track', loadKeys[w % 3]!.sk, { event: 'load', anonymous_id: `w${w}` }).catch(() => undefined);
        load.statuses.set(r?.status ?? 0, (load.statuses.get(r?.status ?? 0) ?? 0) + 1);
      }
    })).then(() => undefined);
  }, 240_000);

  afterAll(async () => {
    load.running = false;
    await load.done;
    await topo?.stop();
    await keyStoreProxy?.close();
    await redisProxy?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await drop?.();
  }, 180_000);

  const track = (port: number, keys: Keys) => post(port, '/v1/track', keys.sk, { event: 'revocation', anonymous_id: 'r' });
  const revoke = (keys: Keys) => http(proxy, 'DELETE', `/admin/keys/${keys.sk.split('_')[2]}`, bearer(ADMIN_TOKEN));
  /** What tracks sent now get: 12 through nginx (round robin, both replicas between the load's), 2 at each replica. */
  const tracksNow = async (keys: Keys) => {
    const answers: string[] = [];
    const answer = async (port: number) => {
      const r = await track(port, keys);
      answers.push(`${r.status} ${r.json().error ?? 'accepted'}`);
    };
    for (let i = 0; i < 12; i++) await answer(proxy);
    for (const port of replicas) for (let i = 0; i < 2; i++) await answer(port);
    return answers;
  };
  const REFUSED = Array(16).fill('401 invalid_api_key');

  it('refuses every track sent after the 204 though a lookup of the key, in flight when it was revoked, read it before', async () => {
    const keys = await createProject(proxy, 'in-flight');
    // Each replica's key-store pool holds a connection: the lookup below goes out on it at once.
    const warm = await createProject(proxy, 'warm');
    for (const port of replicas) expect((await track(port, warm)).status).toBe(202);

    keyStoreProxy.hold();
    const inFlight = track(replicas[0]!, keys);
    // PostgreSQL answered the lookup (the key as it was before the revocation); the answer waits in the proxy.
    const until = Date.now() + 10_000;
    while (keyStoreProxy.heldChunks === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    expect(keyStoreProxy.heldChunks).toBeGreaterThan(0);
    const revoked = await revoke(keys);
    expect({ status: revoked.status, service: revoked.service }).toEqual({ status: 204, service: 'admin-api' });
    keyStoreProxy.release();
    // Sent before the 204: either answer is right.
    expect([202, 401]).toContain((await inFlight).status);

    expect(await tracksNow(keys)).toEqual(REFUSED);
  });

  it("refuses every track sent after the 204 on a replica whose Redis connection was down when the key was revoked", async () => {
    const keys = await createProject(proxy, 'redis-down');
    for (const port of replicas) expect((await track(port, keys)).status).toBe(202); // cached on both
    await redisProxy.cut('refuse');
    try {
      const revoked = await revoke(keys);
      expect({ status: revoked.status, service: revoked.service }).toEqual({ status: 204, service: 'admin-api' });
      expect(await tracksNow(keys)).toEqual(REFUSED);
    } finally {
      await redisProxy.restore();
    }
    // Reconnected (ioredis retries within 2 s): still refused, the key is not served from before.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await tracksNow(keys)).toEqual(REFUSED);
  });

  it('kept the load flowing through both checks', () => {
    const accepted = load.statuses.get(202) ?? 0;
    expect(accepted).toBeGreaterThan(50);
    expect([...load.statuses.keys()].filter((s) => s !== 202)).toEqual([]);
  });
});
