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
