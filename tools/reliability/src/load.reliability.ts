import { newTally, runLoad } from './support/load';
import { type ProjectKeys, type Server, createProject, queryEvents, startServer } from './support/server';

// Bounded: RELIABILITY_LOAD_MS (default 60 s) of mixed load, 12 concurrent clients, loopback only.
const LOAD_MS = Number(process.env.RELIABILITY_LOAD_MS ?? 60_000);

describe('load: nothing lost, nothing duplicated, no 5xx', () => {
  let server: Server;
  let projects: ProjectKeys[];
  const tally = newTally();

  beforeAll(async () => {
    // Limits high enough that the mix mostly passes, low enough that some requests are refused with 429 (and must not be written).
    server = await startServer({ env: { RATE_LIMIT_TRACK_PER_S: '300', RATE_LIMIT_TRACK_BURST: '300', RATE_LIMIT_BATCH_PER_S: '20', RATE_LIMIT_BATCH_BURST: '20' } });
    projects = [await createProject(server.base, 'load-a'), await createProject(server.base, 'load-b')];
    await runLoad({ base: server.base, projects, workers: 12, ms: LOAD_MS, tally, tag: 'L' });
  });
  afterAll(() => server?.dispose());

  it('answered every request without a 5xx or a dropped connection', () => {
    const fivexx = [...tally.statuses].filter(([s]) => s >= 500);
    expect(fivexx).toEqual([]);
    expect(tally.networkErrors).toBe(0);
    expect([...tally.statuses.keys()].every((s) => [200, 202, 429].includes(s))).toBe(true);
    expect(tally.ackedIds.size).toBeGreaterThan(1_000);
  });

  it('stored exactly the acknowledged events per project, each client event_id once, and none of the refused', async () => {
    expect(await server.stop()).toBe(0); // graceful: drained and flushed
    const perProject = queryEvents<{ project_id: string; c: string }>(server.dataDir, 'SELECT toString(project_id) AS project_id, count() AS c FROM analytics.events GROUP BY project_id');
    const counts = Object.fromEntries(perProject.map((r) => [r.project_id, Number(r.c)]));
    for (const p of projects) expect(counts[p.id] ?? 0).toBe(tally.ackedEvents.get(p.id) ?? 0);
    const [ids] = queryEvents<{ c: string; u: string }>(server.dataDir, "SELECT count() AS c, uniqExact(event_id) AS u FROM analytics.events WHERE event_name != '$identify'");
    expect(Number(ids!.c)).toBe(Number(ids!.u)); // no duplicates
    expect(Number(ids!.u)).toBe(tally.ackedIds.size); // nothing from a refused (429) request
    const stored = new Set(queryEvents<{ event_id: string }>(server.dataDir, "SELECT event_id FROM analytics.events WHERE event_name != '$identify'").map((r) => r.event_id));
    expect([...tally.ackedIds].filter((id) => !stored.has(id))).toEqual([]);
  });
});
