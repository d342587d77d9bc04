import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createClient } from '@clickhouse/client';
import {
  AggregateBuilder,
  BUILD_TAG_PREFIX,
  EVENT_INSERT_COLUMNS,
  type EventStore,
  StoreFrontier,
  ForgetQueue,
  type TableLayout,
  buildInsights,
  buildQueryEvents,
  buildSources,
  forgetUser,
  killBuildsSql,
  killByTag,
  migrateEventStore,
  newCancelTag,
  planStats,
  quartersFit,
  renderMigrations,
  rollupFits,
  runRetention,
  uniquesFits,
  visitDimsShape,
} from '@analytics/event-store';
import { type EventRow, type StatsParams, insightsBodySchema, parseGroupBy } from '@analytics/schema';
import { dockerDir, root } from './routes';

// chDB (ClickHouse 26.x in-process) checks the cluster form of the event store with ClickHouse's own parser and
// config loader, and runs its topology (Distributed tables over *_local tables, the aggregates built by the aggregate
// builder through them) on a one-shard cluster. It cannot run Keeper or ON CLUSTER DDL, so that run uses the rendered statements minus those two.
// One chDB connection at a time per process: sessions are opened one after the other.
const chdb = require('chdb') as typeof import('chdb');
type Session = InstanceType<typeof chdb.Session>;

const CLUSTER = 'analytics';
let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'deploy-checks-chdb-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function withSession<T>(name: string, configFile: string | undefined, fn: (s: Session) => T | Promise<T>): Promise<T> {
  const s = new chdb.Session(join(tmp, name), configFile ? { connectionArgs: [`--config-file=${configFile}`] } : undefined);
  try {
    return await fn(s);
  } finally {
    s.close();
    await chdb.drainPending();
  }
}

const jsonRows = <T>(out: string): T[] => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as T);

/** Every statement the event store sends in cluster mode: migrations (run against a recording client), forget, retention. */
async function clusterStatements(): Promise<string[]> {
  const sent: string[] = [];
  const client = {
    command: async ({ query }: { query: string }) => void sent.push(query),
    query: async () => ({ json: async () => [] }),
    insert: async () => undefined,
  };
  await migrateEventStore(client as never, { db: 'analytics', cluster: CLUSTER });
  const store = {
    db: 'analytics',
    cluster: CLUSTER,
    eventsTable: 'analytics.events',
    localEventsTable: 'analytics.events_local',
    client,
    command: async (query: string) => void sent.push(query),
    // a server's store: no aggregate builder to wait for before a delete
    settleForDelete: async () => undefined,
    writer: { exclusiveFar: <T>(run: () => Promise<T>) => run() },
    select: async (query: string) => {
      sent.push(query);
      if (query.includes('system.parts')) return [{ partition_id: '201901' }];
      if (query.includes('system.mutations')) return [{ n: '0' }];
      return query.includes('DISTINCT user_id') ? [{ user_id: 'u-1' }] : [{ n: '1' }];
    },
  } as unknown as EventStore & { forgets: ForgetQueue };
  store.forgets = new ForgetQueue(store);
  await forgetUser(store, randomUUID(), 'u-1');
  await runRetention(store, [{ id: randomUUID(), retention_days: 30 }]);
  return sent;
}

describe('cluster-mode statements parse in ClickHouse', () => {
  it('every statement of every migration, rendered with a cluster, and those of forget and retention', async () => {
    const statements = await clusterStatements();
    for (const s of renderMigrations({ db: 'analytics', cluster: CLUSTER }).flat()) expect(statements).toContain(s);
    expect(statements.filter((s) => /^(CREATE|ALTER)/.test(s)).every((s) => s.includes(`ON CLUSTER ${CLUSTER}`))).toBe(true);
    await withSession('parse', undefined, (s) => {
      for (const q of statements) {
        let formatted: string;
        try {
          formatted = s.queryBind('SELECT formatQuery({q:String})', { q }, 'TSVRaw');
        } catch (e) {
          throw new Error(`ClickHouse does not parse:\n${q}\n${(e as Error).message}`);
        }
        expect(formatted.trim().length).toBeGreaterThan(0);
      }
      // the parser is live: a broken statement is refused
      expect(() => s.queryBind('SELECT formatQuery({q:String})', { q: 'CREATE TABLE t ON CLUSTER c (a UInt8 ENGINE = Distributed(' }, 'TSVRaw')).toThrow(/Syntax error/);
    });
    expect(statements.some((s) => s.includes('ENGINE = Distributed(analytics, analytics, events_local, cityHash64(project_id, session_id))'))).toBe(true);
    expect(statements.some((s) => s.startsWith('ALTER TABLE analytics.events_local ON CLUSTER analytics DELETE WHERE project_id'))).toBe(true);
  });

  it("the builder's cancels reach every node: a new lease holder's KILL of build statements and a halt's KILL of one", async () => {
    const kills = [killBuildsSql(CLUSTER), killByTag(newCancelTag(BUILD_TAG_PREFIX), CLUSTER)];
    for (const k of kills) expect(k).toMatch(/^KILL QUERY ON CLUSTER analytics WHERE /);
    await withSession('parse-kill', undefined, (s) => {
      for (const q of kills) expect(s.queryBind('SELECT formatQuery({q:String})', { q }, 'TSVRaw').trim()).toMatch(/^KILL QUERY ON CLUSTER analytics/);
    });
    // A single server: no ON CLUSTER.
    expect(killBuildsSql()).toMatch(/^KILL QUERY WHERE /);
  });
});

describe("compose's ClickHouse configuration (docker/clickhouse/config.d)", () => {
  it('loads in ClickHouse: macros and interserver host from the environment, cluster `analytics` of 2 shards x 2 replicas', () => {
    // A child process: ClickHouse reads from_env values with getenv, which jest's sandboxed process.env never reaches.
    const script = `
      const chdb = require('chdb');
      const s = new chdb.Session(process.argv[1], { connectionArgs: ['--config-file=' + process.argv[2]] });
      const q = (sql) => s.query(sql, 'JSONEachRow').split('\\n').filter(Boolean).map((l) => JSON.parse(l));
      console.log(JSON.stringify({
        macros: q('SELECT macro, substitution FROM system.macros ORDER BY macro'),
        hosts: q("SELECT shard_num, host_name, port FROM system.clusters WHERE cluster = 'analytics' ORDER BY shard_num, replica_num"),
        settings: q("SELECT name, value FROM system.server_settings WHERE name IN ('interserver_http_host') ORDER BY name"),
      }));
      s.close();`;
    const run = spawnSync(process.execPath, ['-e', script, join(tmp, 'compose-config'), resolve(dockerDir, 'clickhouse/config.d/cluster.xml')], {
      cwd: root,
      env: { ...process.env, NODE_OPTIONS: '', CH_SHARD: '02', CH_REPLICA: 'ch-s2-r1', CLICKHOUSE_CLUSTER_SECRET: 'x' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    const got = JSON.parse(run.stdout) as { macros: unknown; hosts: unknown; settings: unknown };
    expect(got.macros).toEqual([
      { macro: 'cluster', substitution: 'analytics' },
      { macro: 'replica', substitution: 'ch-s2-r1' },
      { macro: 'shard', substitution: '02' },
    ]);
    expect(got.hosts).toEqual([
      { shard_num: 1, host_name: 'ch-s1-r1', port: 9000 },
      { shard_num: 1, host_name: 'ch-s1-r2', port: 9000 },
      { shard_num: 2, host_name: 'ch-s2-r1', port: 9000 },
      { shard_num: 2, host_name: 'ch-s2-r2', port: 9000 },
    ]);
    expect(got.settings).toEqual([{ name: 'interserver_http_host', value: 'ch-s2-r1' }]);
  });
});

describe('the cluster topology answers like a single node', () => {
  const DAY = 86_400_000;
  const T0 = Date.UTC(2026, 2, 2);
  const P = randomUUID();
  const at = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 23);

  /** A deterministic mix: sessions across midnight, paid and organic entries, user-only events, timestamp ties. */
  function rows(): EventRow[] {
    const out: EventRow[] = [];
    const sources = [['google', 'organic'], ['facebook', 'paid'], ['newsletter', 'email'], ['direct', 'direct'], ['bing', 'paid']] as const;
    for (let i = 0; i < 400; i++) {
      const anon = i % 7 === 0 ? '' : `a-${i % 37}`;
      const ts = T0 + ((i * 7_919_000) % (3 * DAY)) + (i % 5 === 0 ? 0 : i);
      const [source, medium] = sources[(i * 3) % sources.length]!;
      out.push({
        project_id: P, timestamp: at(ts), event_id: `e-${String(i).padStart(4, '0')}`, event_name: i % 3 === 0 ? '$pageview' : 'signup',
        anonymous_id: anon, user_id: anon === '' ? `u-${i % 11}` : null, session_id: `${anon || `u-${i % 11}`}-${Math.floor(ts / 1_800_000)}`,
        source, medium, campaign: null, source_confidence: 'high', source_rule_id: 'r', channel: medium === 'paid' ? 'paid_other' : 'referral', referrer: null, url: null, path: `/p${i % 4}`,
        country: ['GB', 'US', 'DE'][i % 3]!, device_type: i % 2 ? 'mobile' : 'desktop', browser: 'Chrome', os: 'Linux', ip_hash_hex: 'ab'.repeat(16), properties: '{}',
      });
    }
    return out;
  }

  it('inserts through Distributed `events`, builds the *_local aggregates through the Distributed ones, and reads the same answers', async () => {
    const config = join(tmp, 'one-shard.xml');
    writeFileSync(config, `<clickhouse><tcp_port>9000</tcp_port><macros><shard>01</shard><replica>r1</replica></macros>
      <remote_servers><${CLUSTER}><shard><internal_replication>true</internal_replication><replica><host>localhost</host><port>9000</port></replica></shard></${CLUSTER}></remote_servers></clickhouse>`);
    const single = `s_${randomBytes(4).toString('hex')}`;
    const cluster = `c_${randomBytes(4).toString('hex')}`;
    await withSession('topology', config, async (s) => {
      const run = (q: string, params: Record<string, unknown> = {}) => s.queryBind(q, params, 'JSONEachRow');
      s.query(`CREATE DATABASE ${single}`);
      s.query(`CREATE DATABASE ${cluster}`);
      for (const q of renderMigrations({ db: single }).flat()) s.query(q);
      for (const q of renderMigrations({ db: cluster, cluster: CLUSTER }).flat()) {
        // chDB has no Keeper and no DDL queue: the same statements as plain tables on this one node.
        const local = q.replace(` ON CLUSTER ${CLUSTER}`, '').replace(/Replicated(\w*MergeTree)\('\/clickhouse\/tables\/[^']+', '[^']+'(?:, )?/, '$1(');
        expect(local).not.toMatch(/ON CLUSTER|Replicated/);
        s.query(local);
      }
      const engines = Object.fromEntries(jsonRows<{ name: string; engine: string }>(run('SELECT name, engine FROM system.tables WHERE database = {db:String}', { db: cluster })).map((t) => [t.name, t.engine]));
      expect(engines).toMatchObject({
        events: 'Distributed', events_local: 'MergeTree', daily_rollup: 'Distributed', daily_rollup_local: 'AggregatingMergeTree',
        sessions: 'Distributed', sessions_local: 'AggregatingMergeTree', daily_uniques: 'Distributed', daily_uniques_local: 'AggregatingMergeTree',
        visits: 'Distributed', visits_local: 'AggregatingMergeTree', visit_spans: 'Distributed', visit_spans_local: 'AggregatingMergeTree',
        daily_uniques_by: 'Distributed', daily_uniques_by_local: 'AggregatingMergeTree',
        sources_daily: 'Distributed', sources_daily_local: 'ReplacingMergeTree', aggregate_progress: 'ReplacingMergeTree',
        visit_dims: 'Distributed', visit_dims_local: 'ReplacingMergeTree', visit_dims_days: 'ReplacingMergeTree',
      });
      // Migration 012: no view builds anything any more.
      expect(Object.values(engines)).not.toContain('MaterializedView');

      // Each INSERT as an ingest replica sends it (writer, seq, row count); through the Distributed events in the cluster.
      // (A server sends them as the EPHEMERAL inputs, a cluster as the stored columns: insertEventRows' stampColumns.)
      const seq = Date.now() * 1000;
      const body = (inputs: boolean) =>
        rows().map((r) => JSON.stringify({ ...r, ...(inputs ? { insert_seq_in: seq, insert_writer_in: 1, insert_rows_in: 400 } : { insert_seq: seq, insert_writer: 1, insert_rows: 400 }) })).join('\n');
      const cols = (inputs: boolean) => [...EVENT_INSERT_COLUMNS, ...(inputs ? ['insert_seq_in', 'insert_writer_in', 'insert_rows_in'] : ['insert_seq', 'insert_writer', 'insert_rows'])].join(', ');
      s.query(`INSERT INTO ${single}.events (${cols(true)}) FORMAT JSONEachRow\n${body(true)}`);
      s.query(`INSERT INTO ${cluster}.events (${cols(false)}) SETTINGS insert_deduplicate = 0, insert_distributed_sync = 1 FORMAT JSONEachRow\n${body(false)}`);
      const count = (t: string) => Number(jsonRows<{ n: string }>(run(`SELECT count() AS n FROM ${t}`))[0]!.n);
      expect(count(`${cluster}.events_local`)).toBe(400);
      // The stamps reached the shard's events_local, where the builder reads them.
      expect(jsonRows(run(`SELECT DISTINCT insert_writer, insert_rows FROM ${cluster}.events_local`))).toEqual([{ insert_writer: 1, insert_rows: 400 }]);
      // The aggregate builder, as apps/aggregate-builder runs it: single node, and through the Distributed tables.
      const { createChdbConnection } = require('chdb/connection') as typeof import('chdb/connection');
      const client = createClient({ connection: createChdbConnection({ path: join(tmp, 'topology') }) } as never);
      try {
        for (const [db, isCluster] of [[single, false], [cluster, true]] as const) {
          const builder = new AggregateBuilder({ db, client, frontier: new StoreFrontier({ db, client }), cluster: isCluster, recordDone: true });
          await builder.init();
          await builder.catchUp();
          expect(builder.state.built.get(1)).toBeGreaterThan(0);
          // sources_daily's and visit_dims' days, as the builder's keeper refreshes them between builds
          expect(await builder.refreshSources(true)).toBeGreaterThan(0);
        }
      } finally {
        await client.close();
      }
      expect(count(`${cluster}.daily_rollup_local`)).toBeGreaterThan(0);
      expect(count(`${cluster}.sessions_local`)).toBeGreaterThan(0);
      expect(count(`${cluster}.daily_uniques_local`)).toBeGreaterThan(0);
      expect(count(`${cluster}.visits_local`)).toBeGreaterThan(0);
      expect(count(`${cluster}.visit_dims_local`)).toBeGreaterThan(0);

      const tables = (db: string) => ({ events: `${db}.events`, dailyRollup: `${db}.daily_rollup`, dailyUniques: `${db}.daily_uniques`, sessions: `${db}.sessions`, visits: `${db}.visits`, visitSpans: `${db}.visit_spans`, dailyDims: `${db}.daily_dims`, quarterHours: `${db}.quarter_hours`, visitDims: `${db}.visit_dims`, visitDimsDays: `${db}.visit_dims_days` });
      const both = (build: (t: ReturnType<typeof tables>) => { sql: string; params: Record<string, unknown> }) => {
        const [a, b] = [single, cluster].map((db) => {
          const q = build(tables(db));
          return jsonRows(run(q.sql, q.params));
        });
        expect(a!.length).toBeGreaterThan(0);
        expect(b).toEqual(a);
      };
      const range = { from: T0, to: T0 + 3 * DAY };
      both((t) => buildQueryEvents(t, P, { ...range, limit: 1000 }));
      for (const stats of [
        { group_by: 'source,medium', interval: 'day' },
        { group_by: 'country', metric: 'uniques' },
        { group_by: 'path,browser', interval: 'hour' },
        { metric: 'uniques', interval: 'day' },
        { metric: 'uniques', group_by: 'event_name', interval: 'week' },
        { interval: 'hour' },
        { metric: 'uniques', interval: 'day', tz: 'Asia/Kolkata' },
      ] as Array<Omit<Partial<StatsParams>, 'group_by'> & { group_by?: string }>) {
        for (const force of ['uniques', 'rollup', 'quarters', 'events'] as const) {
          const { group_by, ...rest } = stats;
          const params = { ...range, metric: 'count', limit: 1000, ...rest } as StatsParams;
          const groupBy = parseGroupBy(group_by);
          if (force === 'rollup' && !rollupFits(params, groupBy)) continue;
          if (force === 'uniques' && !uniquesFits(params, groupBy)) continue;
          if (force === 'quarters' && !quartersFit(params, groupBy)) continue;
          both((t) => planStats(t, P, params, groupBy, force));
        }
      }
      // migration 3's backfill, run again now that events exist: through the Distributed tables it writes shard-locally
      // (parallel_distributed_insert_select = 2), and a second pass over the same events changes no sketch.
      const uniquesByDay = () =>
        [single, cluster].map((db) => {
          const q = planStats(tables(db), P, { ...range, metric: 'uniques', interval: 'day', limit: 1000 }, [], 'uniques');
          return jsonRows(run(q.sql, q.params));
        });
      const before = uniquesByDay();
      const backfill = (layout: TableLayout) => renderMigrations(layout)[2]!.at(-1)!;
      expect(backfill({ db: cluster, cluster: CLUSTER })).toMatch(/^INSERT INTO c_\w+\.daily_uniques [\s\S]*FROM c_\w+\.events\n[\s\S]*parallel_distributed_insert_select = 2$/);
      const localRows = count(`${cluster}.daily_uniques_local`);
      s.query(backfill({ db: single }));
      s.query(backfill({ db: cluster, cluster: CLUSTER }));
      expect(count(`${cluster}.daily_uniques_local`)).toBeGreaterThan(localRows);
      const after = uniquesByDay();
      expect(after[0]!.length).toBe(3);
      expect(after).toEqual(before);
      expect(after[1]).toEqual(after[0]);
      both((t) => buildSources(t, P, { ...range, breakdown: 'source_medium', include_bots: true, limit: 200 }));
      both((t) => buildSources(t, P, { ...range, breakdown: 'source', include_bots: true, limit: 200 }));
      // include_bots=false reads the Distributed visits (bot = 0)
      both((t) => buildSources(t, P, { ...range, breakdown: 'source_medium', include_bots: false, limit: 200 }));
      // insights from the visits aggregate (whole days, visit dimensions) read through the Distributed visits, and the
      // events joined to its rows
      for (const body of [
        { metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration', 'views_per_visit'] },
        { metrics: ['visits', 'bounce_rate'], dimensions: ['source', 'entry_path'], compare: 'previous_period' },
        { metrics: ['visitors', 'visits', 'bounce_rate', 'visit_duration'], dimensions: ['entry_path'], compare: 'previous_period' },
        // an event dimension and an event filter beside a visit filter: the events grouped per visit, joined to the visit rows
        { metrics: ['visitors', 'visits', 'bounce_rate'], dimensions: ['country'], filters: [['is', 'event_name', ['$pageview']], ['is_not', 'channel', ['email']]], compare: 'previous_period' },
      ]) {
        const q = insightsBodySchema.parse({ from: new Date(range.from).toISOString(), to: new Date(range.to).toISOString(), ...body });
        expect(buildInsights(tables(single), P, q).sql).toMatch(/\.visits\n/);
        both((t) => buildInsights(t, P, q));
        // ... and with visit_dims' days (each refreshed above), read through the Distributed visit_dims
        if (!visitDimsShape(q)) continue;
        const visitDays = ['2026-03-02', '2026-03-03', '2026-03-04'].filter((d) => Date.parse(d) >= range.from && Date.parse(d) < range.to);
        expect(buildInsights(tables(single), P, q, { visitDays }).sql).toMatch(/\.visit_dims FINAL/);
        both((t) => buildInsights(t, P, q, { visitDays }));
      }
    });
  });
});
