import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ClickHouseClient, createClient } from '@clickhouse/client';
import { systemBinary } from '@analytics/testing';
import { PROCESSES, type Started, type Topology, startNode, startTopology, stopProcess, waitFor200 } from '@analytics/topology';
import { newTally, runLoad } from './support/load';
import { ADMIN_TOKEN, INTERNAL_SECRET, IP_HASH_SECRET, ROOT, call, createProject, sleep } from './support/server';

// The production shape under load, with kill -9 of the store, of one ingest replica and of the aggregate builder, each
// at a random moment: after the restarts, stats by day, by event_name and by source/medium, uniques and /v1/sources
// (answered from the aggregates) equal the raw events, and every acknowledged event is stored (issue: one write
// design for both store modes). Real PostgreSQL and Redis (TEST_DATABASE_URL, TEST_REDIS_URL, as CI sets them), the
// ClickHouse HTTP test harness, nginx with docker/nginx.conf.
const NGINX = systemBinary({ name: 'nginx', env: 'NGINX_BIN', defaults: ['/usr/sbin/nginx', 'nginx'], aptPackage: 'nginx-light' });

// Set TEST_DATABASE_URL and TEST_REDIS_URL to run it (.ci/run does).
const PG_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL;
const describeTopology = PG_URL && REDIS_URL ? NGINX.describe : describe.skip;

const FAST = {
  RATE_LIMIT_TRACK_PER_S: '100000', RATE_LIMIT_TRACK_BURST: '100000', RATE_LIMIT_BATCH_PER_S: '100000', RATE_LIMIT_BATCH_BURST: '100000',
  AGGREGATE_INTERVAL_MS: '20',
  // read-api's reads of the aggregates wait for the builder (off by default): after the restarts every figure is
  // compared with the raw events at one moment, everything acknowledged built.
  AGGREGATE_WAIT_MS: '20000',
};

/** A moment in [lo, hi) ms, printed so that a failure can be replayed. */
function moment(what: string, lo: number, hi: number): number {
  const ms = Math.round(lo + Math.random() * (hi - lo));
  console.log(`topology crash: kill -9 of ${what} at ${ms} ms`);
  return ms;
}

describeTopology('topology crash: kill -9 of the store, an ingest replica and the builder under load', () => {
  let topo: Topology | undefined;
  const restarted: Started[] = [];
  let dataDir: string;
  let raw: ClickHouseClient | undefined;

  afterAll(async () => {
    await raw?.close();
    for (const s of restarted.reverse()) await stopProcess(s.proc);
    await topo?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers stats, uniques and sources equal to the raw events, with every acknowledged event stored', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'topology-crash-'));
    topo = await startTopology({
      root: ROOT,
      databaseUrl: PG_URL!,
      redisUrl: REDIS_URL!,
      nginxBin: NGINX.path,
      proxyPort: 0,
      adminToken: ADMIN_TOKEN,
      internalSecret: INTERNAL_SECRET,
      ipHashSecret: IP_HASH_SECRET,
      dataDir,
      baseEnv: { PATH: process.env.PATH, ...FAST },
    });
    const t = topo;
    const base = t.proxyUrl;
    const project = await createProject(base, 'topology-crash');
    const logs = join(dataDir, 'logs');
    const restartApp = async (name: string, app: string, port: number) => {
      const s = await startNode(name, [`dist/apps/${app}/main.js`], { cwd: ROOT, env: { ...t.appEnv, PORT: String(port) }, logFile: join(logs, `${name}.log`) });
      restarted.push(s);
      return s;
    };
    const hasBuilder = PROCESSES.some((p) => p.name === 'aggregate-builder');

    const tally = newTally();
    let stop = false;
    const load = runLoad({ base, projects: [project], workers: 6, ms: 60_000, tally, tag: 'T', stop: () => stop });
    const started = Date.now();
    const at = async (ms: number) => sleep(Math.max(0, ms - (Date.now() - started)));

    // The builder, then an ingest replica, then the store, each restarted as it would be by its supervisor.
    if (hasBuilder) {
      await at(moment('the aggregate builder', 1_000, 3_000));
      const builder = t.apps['aggregate-builder' as keyof typeof t.apps];
      builder.proc.kill('SIGKILL');
      await restartApp('aggregate-builder', 'aggregate-builder', 0);
    }
    await at(moment('ingest-api-1', 3_500, 5_500));
    const ingest = t.apps['ingest-api-1'];
    ingest.proc.kill('SIGKILL');
    const ingestAgain = await restartApp('ingest-api-1', 'ingest-api', ingest.port);
    await at(moment('the store (the ClickHouse harness)', 6_000, 8_000));
    t.harness.proc.kill('SIGKILL');
    await new Promise((r) => (t.harness.proc.exitCode !== null || t.harness.proc.signalCode !== null ? r(undefined) : t.harness.proc.once('exit', r)));
    const harness = await startNode('clickhouse-harness', ['dist/tools/clickhouse-harness/main.js', '--path', join(dataDir, 'clickhouse'), '--port', String(t.harness.port)], {
      cwd: ROOT, env: { PATH: process.env.PATH, NODE_OPTIONS: '' }, logFile: join(logs, 'clickhouse-harness.log'),
    });
    restarted.unshift(harness); // stopped last
    await at(11_000);
    stop = true;
    await load;
    expect(tally.ackedIds.size).toBeGreaterThan(200);
    expect(tally.networkErrors + [...tally.statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0)).toBeGreaterThan(0);
    await waitFor200('ingest-api-1', ingestAgain.port, '/readyz', ingestAgain.proc);

    // Every acknowledged event is stored.
    raw = createClient({ url: t.clickhouseUrl });
    const q = async <T>(sql: string): Promise<T[]> => (await raw!.query({ query: sql, query_params: { p: project.id }, format: 'JSONEachRow' })).json<T>();
    const stored = new Set((await q<{ event_id: string }>('SELECT event_id FROM analytics.events WHERE project_id = {p:UUID}')).map((r) => r.event_id));
    expect([...tally.ackedIds].filter((id) => !stored.has(id))).toEqual([]);

    // Through the API (read-api waits for the builder to build what is stored): every figure equals the raw events.
    const day = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    const range = `from=${new Date(day - 86_400_000).toISOString()}&to=${new Date(day + 2 * 86_400_000).toISOString()}`;
    const get = async <T>(path: string) => {
      const r = await call<T>(base, 'GET', path, { key: project.rk });
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
      return r.body;
    };
    type Rows<R> = { rows: Array<R & { value: number }> };
    const total = Number((await q<{ n: string }>('SELECT count() AS n FROM analytics.events WHERE project_id = {p:UUID}'))[0]!.n);
    expect(total).toBeGreaterThanOrEqual(tally.ackedIds.size);

    const byDay = await get<Rows<{ bucket: string }>>(`/v1/stats?metric=count&interval=day&${range}`);
    const rawByDay = await q<{ d: string; n: string }>("SELECT toString(toDate(timestamp)) AS d, count() AS n FROM analytics.events WHERE project_id = {p:UUID} GROUP BY d ORDER BY d");
    expect(byDay.rows.filter((r) => r.value > 0).map((r) => [r.bucket.slice(0, 10), r.value])).toEqual(rawByDay.map((r) => [r.d, Number(r.n)]));

    const byName = await get<Rows<{ event_name: string }>>(`/v1/stats?metric=count&group_by=event_name&${range}`);
    const rawByName = await q<{ k: string; n: string }>('SELECT event_name AS k, count() AS n FROM analytics.events WHERE project_id = {p:UUID} GROUP BY k ORDER BY k');
    expect(byName.rows.map((r) => [r.event_name, r.value]).sort()).toEqual(rawByName.map((r) => [r.k, Number(r.n)]).sort());

    const byMedium = await get<Rows<{ source: string; medium: string }>>(`/v1/stats?metric=count&group_by=source,medium&${range}`);
    const rawByMedium = await q<{ s: string; m: string; n: string }>('SELECT source AS s, medium AS m, count() AS n FROM analytics.events WHERE project_id = {p:UUID} GROUP BY s, m');
    expect(byMedium.rows.map((r) => `${r.source}/${r.medium}=${r.value}`).sort()).toEqual(rawByMedium.map((r) => `${r.s}/${r.m}=${r.n}`).sort());

    const uniques = await get<Rows<object>>(`/v1/stats?metric=uniques&${range}`);
    const [rawUniques] = await q<{ u: string }>("SELECT uniqCombinedIf(anonymous_id, anonymous_id != '') AS u FROM analytics.events WHERE project_id = {p:UUID}");
    expect(uniques.rows[0]!.value).toBe(Number(rawUniques!.u));

    const sources = await get<{ rows: Array<{ events: number }> }>(`/v1/sources?breakdown=source_medium&${range}`);
    expect(sources.rows.reduce((s, r) => s + r.events, 0)).toBe(total);
  });
});
