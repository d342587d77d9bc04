import { newTally, runLoad } from './support/load';
import { type ProjectKeys, type Server, call, createProject, queryEvents, sleep, startServer } from './support/server';

describe('crash: kill -9 during load loses no acknowledged event', () => {
  let first: Server;
  let second: Server | undefined;
  let project: ProjectKeys;
  const tally = newTally();

  afterAll(async () => {
    await second?.stop();
    await first?.dispose(); // the same DATA_DIR
  });

  it('restarts on the same DATA_DIR with every event acknowledged before the kill', async () => {
    first = await startServer({ env: { RATE_LIMIT_TRACK_PER_S: '100000', RATE_LIMIT_TRACK_BURST: '100000', RATE_LIMIT_BATCH_PER_S: '100000', RATE_LIMIT_BATCH_BURST: '100000' } });
    project = await createProject(first.base, 'crash');
    let killed = false;
    const load = runLoad({ base: first.base, projects: [project], workers: 10, ms: 20_000, tally, tag: 'C', stop: () => killed });
    await sleep(5_000);
    await first.kill9(); // mid-load: requests in flight see a reset connection and are not acknowledged
    killed = true;
    await load;
    expect(first.child.signalCode).toBe('SIGKILL');
    expect(tally.ackedIds.size).toBeGreaterThan(100);
    expect(tally.networkErrors).toBeGreaterThan(0); // the kill did land during the load

    second = await startServer({ dataDir: first.dataDir });
    // The key store survived too: the same key still works after the crash.
    const after = await call(second.base, 'POST', '/v1/track', { key: project.sk, body: { event: 'after_restart', event_id: 'after-restart-1' } });
    expect(after.status).toBe(202);
    expect(await second.stop()).toBe(0);

    const stored = new Set(queryEvents<{ event_id: string }>(first.dataDir, `SELECT event_id FROM analytics.events WHERE project_id = '${project.id}'`).map((r) => r.event_id));
    expect([...tally.ackedIds].filter((id) => !stored.has(id))).toEqual([]);
    expect(stored.has('after-restart-1')).toBe(true);
  });
});

describe('crash: kill -9 at any moment leaves the aggregates equal to the raw events after a restart', () => {
  const servers: Server[] = [];
  const tally = newTally();
  const FAST = { RATE_LIMIT_TRACK_PER_S: '100000', RATE_LIMIT_TRACK_BURST: '100000', RATE_LIMIT_BATCH_PER_S: '100000', RATE_LIMIT_BATCH_BURST: '100000', AGGREGATE_INTERVAL_MS: '20' };

  afterAll(async () => {
    await servers.at(-1)?.stop();
    await servers[0]?.dispose(); // the same DATA_DIR throughout
  });

  it('counts every stored event once in daily_rollup, daily_uniques, daily_uniques_by and sessions, and the API agrees with the raw events', async () => {
    // The builder runs every 20 ms under load, so each kill lands in a build or between two with good odds; three
    // kills at different moments.
    servers.push(await startServer({ env: FAST }));
    const dataDir = servers[0]!.dataDir;
    const project = await createProject(servers[0]!.base, 'crash-aggregates');
    for (const [round, ms] of [1_500, 2_700, 3_900].entries()) {
      const server = servers.at(-1)!;
      let killed = false;
      const load = runLoad({ base: server.base, projects: [project], workers: 12, ms: 20_000, tally, tag: `A${round}`, stop: () => killed });
      await sleep(ms);
      await server.kill9();
      killed = true;
      await load;
      expect(server.child.signalCode).toBe('SIGKILL');
      servers.push(await startServer({ dataDir, env: FAST }));
    }
    expect(tally.ackedIds.size).toBeGreaterThan(300);

    // Through the API, on the restarted server: totals from the aggregates (the planner's day-aligned paths).
    const base = servers.at(-1)!.base;
    const day = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    const range = `from=${new Date(day - 86_400_000).toISOString()}&to=${new Date(day + 2 * 86_400_000).toISOString()}`;
    const byName = await call<{ rows: Array<{ event_name: string; value: number }> }>(base, 'GET', `/v1/stats?metric=count&group_by=event_name&${range}`, { key: project.rk });
    const byMedium = await call<{ rows: Array<{ source: string; medium: string; value: number }> }>(base, 'GET', `/v1/stats?metric=count&group_by=source,medium&interval=day&${range}`, { key: project.rk });
    const uniques = await call<{ rows: Array<{ value: number }> }>(base, 'GET', `/v1/stats?metric=uniques&${range}`, { key: project.rk });
    const sources = await call<{ rows: Array<{ source: string; medium: string; events: number }> }>(base, 'GET', `/v1/sources?breakdown=source_medium&${range}`, { key: project.rk });
    for (const r of [byName, byMedium, uniques, sources]) expect(r.status).toBe(200);
    expect(await servers.at(-1)!.stop()).toBe(0);

    const q = <T>(sql: string) => queryEvents<T>(dataDir, sql.replaceAll('$P', project.id));
    const grain = 'day, event_name, source, medium, country, device_type';
    const rollup = q(`SELECT ${grain}, toUInt64(sum(events)) AS n FROM analytics.daily_rollup WHERE project_id = '$P' GROUP BY ${grain} ORDER BY ${grain}`);
    const raw = q(`SELECT toDate(timestamp) AS day, event_name, source, medium, country, device_type, count() AS n FROM analytics.events WHERE project_id = '$P' GROUP BY ${grain} ORDER BY ${grain}`);
    expect(raw.length).toBeGreaterThan(0);
    expect(rollup).toEqual(raw);

    const sketch = `uniqCombinedIf(anonymous_id, anonymous_id != '')`;
    const dailyUniques = q(`SELECT day, event_name, uniqCombinedMerge(uniques) AS u FROM analytics.daily_uniques WHERE project_id = '$P' GROUP BY day, event_name ORDER BY day, event_name`);
    expect(dailyUniques).toEqual(q(`SELECT toDate(timestamp) AS day, event_name, ${sketch} AS u FROM analytics.events WHERE project_id = '$P' GROUP BY day, event_name ORDER BY day, event_name`));
    expect(q(`SELECT day, event_name, uniqCombinedMerge(uniques) AS u FROM analytics.daily_rollup WHERE project_id = '$P' GROUP BY day, event_name ORDER BY day, event_name`)).toEqual(dailyUniques);

    // daily_uniques_by (the builder's fourth table): all visitors, and by source and by country, for every event and per event name.
    const byDim = q(`SELECT day, event_name, dim, dim_value, uniqCombinedMerge(uniques) AS u FROM analytics.daily_uniques_by WHERE project_id = '$P' AND dim IN ('', 'source', 'country') GROUP BY day, event_name, dim, dim_value ORDER BY day, event_name, dim, dim_value`);
    const rawByDim = [
      `SELECT toDate(timestamp) AS day, '' AS event_name, '' AS dim, '' AS dim_value, ${sketch} AS u FROM analytics.events WHERE project_id = '$P' GROUP BY day`,
      ...['source', 'country'].flatMap((d) => [
        `SELECT toDate(timestamp) AS day, '' AS event_name, '${d}' AS dim, toString(${d}) AS dim_value, ${sketch} AS u FROM analytics.events WHERE project_id = '$P' GROUP BY day, dim_value`,
        `SELECT toDate(timestamp) AS day, event_name, '${d}' AS dim, toString(${d}) AS dim_value, ${sketch} AS u FROM analytics.events WHERE project_id = '$P' GROUP BY day, event_name, dim_value`,
      ]),
    ];
    expect(byDim.length).toBeGreaterThan(0);
    expect(byDim).toEqual(q(`SELECT * FROM (${rawByDim.join(' UNION ALL ')}) ORDER BY day, event_name, dim, dim_value`));

    const entry = `min(concat(leftPad(toString(toUnixTimestamp64Milli(timestamp)), 15, '0'), leftPad(toString(length(source)), 5, '0'), source, medium))`;
    const sessions = q(`SELECT session_id, anonymous_id, min(entry) AS e, toUInt64(sum(events)) AS n, toUInt64(sum(paid_events)) AS paid FROM analytics.sessions WHERE project_id = '$P' GROUP BY session_key, session_id, anonymous_id ORDER BY session_id, anonymous_id`);
    const rawSessions = q(`SELECT session_id, anonymous_id, ${entry} AS e, count() AS n, countIf(medium = 'paid') AS paid FROM analytics.events WHERE project_id = '$P' GROUP BY session_id, anonymous_id ORDER BY session_id, anonymous_id`);
    expect(sessions).toEqual(rawSessions);

    // The API's answers, from the aggregates, equal the raw events' (all of them fall inside the range).
    const total = raw.reduce((sum: number, r) => sum + Number((r as { n: string }).n), 0);
    expect(byName.body.rows.reduce((s, r) => s + r.value, 0)).toBe(total);
    expect(byMedium.body.rows.reduce((s, r) => s + r.value, 0)).toBe(total);
    expect(sources.body.rows.reduce((s, r) => s + r.events, 0)).toBe(total);
    const [rawUniques] = q<{ u: string }>(`SELECT ${sketch} AS u FROM analytics.events WHERE project_id = '$P'`);
    expect(uniques.body.rows[0]!.value).toBe(Number(rawUniques!.u));
    // And every acknowledged event is stored.
    const stored = new Set(q<{ event_id: string }>(`SELECT event_id FROM analytics.events WHERE project_id = '$P'`).map((r) => r.event_id));
    expect([...tally.ackedIds].filter((id) => !stored.has(id))).toEqual([]);
  });
});
