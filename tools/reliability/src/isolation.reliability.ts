import { ADMIN_TOKEN, INTERNAL_SECRET, ORIGIN, type ProjectKeys, type Server, call, createKey, createProject, startServer } from './support/server';

// Every key kind x every endpoint x own/other project. Keys only ever name their own project, so "other" is
// checked on the data: whatever a project's keys write or read, no row of the other project ever shows up.
type Kind = 'pk' | 'sk' | 'rk' | 'ak' | 'revoked' | 'malformed';
const KINDS: Kind[] = ['pk', 'sk', 'rk', 'ak', 'revoked', 'malformed'];
type Expect = { status: number; error?: string; rpc?: string };

const RANGE = 'from=2020-01-01&to=2100-01-01';
const ENDPOINTS: Array<{ name: string; run: (base: string, key: string, label: string) => Promise<{ status: number; body: unknown }>; expect: (k: Kind) => Expect }> = [
  {
    name: 'POST /v1/track',
    run: (base, key, label) => call(base, 'POST', '/v1/track', { key, headers: { origin: ORIGIN }, body: { event: 'matrix', anonymous_id: `${label}-m`, project_id: 'ignored' } }),
    expect: (k) => (k === 'rk' ? { status: 403, error: 'insufficient_scope' } : writeOk(k, 202)),
  },
  {
    name: 'POST /v1/batch',
    run: (base, key, label) => call(base, 'POST', '/v1/batch', { key, headers: { origin: ORIGIN }, body: { events: [{ event: 'matrix_b', anonymous_id: `${label}-m` }] } }),
    expect: (k) => (k === 'rk' ? { status: 403, error: 'insufficient_scope' } : writeOk(k, 202)),
  },
  {
    name: 'POST /v1/identify',
    run: (base, key, label) => call(base, 'POST', '/v1/identify', { key, headers: { origin: ORIGIN }, body: { anonymous_id: `${label}-m`, user_id: `${label}-user` } }),
    expect: (k) => (k === 'rk' ? { status: 403, error: 'insufficient_scope' } : writeOk(k, 200)),
  },
  {
    name: 'POST /v1/forget',
    run: (base, key, label) => call(base, 'POST', '/v1/forget', { key, headers: { origin: ORIGIN }, body: { user_id: `${label === 'A' ? 'B' : 'A'}-user-0` } }),
    expect: (k) => (k === 'pk' ? { status: 403, error: 'forget_requires_secret_key' } : k === 'rk' ? { status: 403, error: 'insufficient_scope' } : writeOk(k, 202)),
  },
  ...(['/v1/query', '/v1/stats', '/v1/sources', '/v1/export'] as const).map((path) => ({
    name: `GET ${path}`,
    run: (base: string, key: string) => call(base, 'GET', `${path}?${RANGE}&project_id=ignored`, { key, headers: { origin: ORIGIN } }),
    expect: (k: Kind): Expect => (k === 'rk' ? { status: 200 } : readDenied(k)),
  })),
  {
    name: 'POST /mcp track_event',
    run: (base, key, label) => mcp(base, key, 'track_event', { event: 'matrix_mcp', anonymous_id: `${label}-m` }),
    expect: (k) => (k === 'pk' ? { status: 403, error: 'insufficient_scope' } : k === 'rk' ? { status: 200, rpc: 'insufficient_scope' } : k === 'revoked' ? { status: 401, error: 'invalid_api_key' } : k === 'malformed' ? { status: 401, error: 'malformed_api_key' } : { status: 200 }),
  },
  {
    name: 'POST /mcp query_events',
    run: (base, key) => mcp(base, key, 'query_events', { from: '2020-01-01', to: '2100-01-01', limit: 1000 }),
    expect: (k) => (k === 'pk' ? { status: 403, error: 'insufficient_scope' } : k === 'rk' ? { status: 200 } : k === 'revoked' ? { status: 401, error: 'invalid_api_key' } : k === 'malformed' ? { status: 401, error: 'malformed_api_key' } : { status: 200, rpc: 'insufficient_scope' }),
  },
  {
    name: 'GET /admin/projects',
    run: (base, key) => call(base, 'GET', '/admin/projects', { key }),
    expect: () => ({ status: 401, error: 'invalid_session' }),
  },
  {
    name: 'POST /internal/retention/run',
    run: (base, key) => call(base, 'POST', '/internal/retention/run', { key, headers: { 'x-internal-secret': key } }),
    expect: () => ({ status: 401, error: 'unauthorized' }),
  },
];

function writeOk(k: Kind, status: number): Expect {
  if (k === 'revoked') return { status: 401, error: 'invalid_api_key' };
  if (k === 'malformed') return { status: 401, error: 'malformed_api_key' };
  return { status };
}
function readDenied(k: Kind): Expect {
  if (k === 'revoked') return { status: 401, error: 'invalid_api_key' };
  if (k === 'malformed') return { status: 401, error: 'malformed_api_key' };
  return { status: 403, error: 'insufficient_scope' };
}
const mcp = (base: string, key: string, name: string, args: unknown) =>
  call(base, 'POST', '/mcp', { key, body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } } });

describe('tenant isolation and auth', () => {
  let server: Server;
  const projects: Record<'A' | 'B', ProjectKeys & { keys: Record<Kind, string> }> = {} as never;

  beforeAll(async () => {
    server = await startServer();
    for (const label of ['A', 'B'] as const) {
      const p = await createProject(server.base, `iso-${label}`);
      const ak = await createKey(server.base, p.id, 'ak');
      const revoked = await createKey(server.base, p.id, 'sk');
      expect((await call(server.base, 'POST', '/v1/track', { key: revoked, body: { event: 'before_revoke', anonymous_id: `${label}-r` } })).status).toBe(202); // cached
      expect((await call(server.base, 'DELETE', `/admin/keys/${revoked.split('_')[2]}`, { key: ADMIN_TOKEN })).status).toBe(204);
      projects[label] = { ...p, keys: { pk: p.pk, sk: p.sk, rk: p.rk, ak, revoked, malformed: `${p.sk.slice(0, 20)}!` } };
      // Seed: events of this project only, with ids and users that name it.
      const events = Array.from({ length: 30 }, (_, i) => ({ event: `seed_${label}`, anonymous_id: `${label}-anon-${i % 5}`, user_id: `${label}-user-${i % 3}`, url: `https://shop.example.com/${label}?utm_source=src_${label}` }));
      expect((await call(server.base, 'POST', '/v1/batch', { key: p.sk, body: { events } })).status).toBe(202);
    }
  });
  afterAll(() => server?.dispose());

  it('stops a revoked key at once on the instance that revoked it, even though it was cached', async () => {
    for (const label of ['A', 'B'] as const) {
      const r = await call(server.base, 'POST', '/v1/track', { key: projects[label].keys.revoked, body: { event: 'after_revoke' } });
      expect({ status: r.status, body: r.body }).toEqual({ status: 401, body: { error: 'invalid_api_key' } });
    }
  });

  for (const endpoint of ENDPOINTS) {
    it.each(KINDS.flatMap((k) => (['A', 'B'] as const).map((label) => [k, label] as const)))(`${endpoint.name} with %s of project %s`, async (kind, label) => {
      const res = await endpoint.run(server.base, projects[label].keys[kind], label);
      const want = endpoint.expect(kind);
      expect(res.status).toBe(want.status);
      // null for a body that is not one JSON value (an NDJSON export).
      const body = (res.body ?? {}) as { error?: unknown; rows?: unknown };
      if (want.error) expect(body.error).toBe(want.error);
      if (want.rpc) expect(body.error).toMatchObject({ code: -32000, message: want.rpc });
      if (want.status === 200 && !want.rpc) expect(body.error).toBeUndefined();
      // Any rows a read returns belong to the key's own project.
      const other = label === 'A' ? 'B' : 'A';
      expect(`${JSON.stringify(res.body)}${(res as { text?: string }).text ?? ''}`).not.toMatch(new RegExp(`"${other}-|seed_${other}|src_${other}|/${other}\\?`));
    });
  }

  it('never returns another project\'s row from query, export, stats, sources or MCP, and writes land in the key\'s own project', async () => {
    for (const label of ['A', 'B'] as const) {
      const other = label === 'A' ? 'B' : 'A';
      const rk = projects[label].rk;
      const q = await call<{ rows: Array<{ anonymous_id: string; event_name: string }> }>(server.base, 'GET', `/v1/query?${RANGE}&limit=1000`, { key: rk });
      expect(q.status).toBe(200);
      expect(q.body.rows.length).toBeGreaterThan(30);
      expect(q.body.rows.every((r) => r.anonymous_id.startsWith(`${label}-`))).toBe(true);
      const stats = await call<{ rows: Array<{ event_name: string; value: number }> }>(server.base, 'GET', `/v1/stats?${RANGE}&group_by=event_name,source`, { key: rk });
      expect(stats.body.rows.map((r) => r.event_name)).not.toContain(`seed_${other}`);
      expect(stats.body.rows.find((r) => r.event_name === `seed_${label}`)?.value).toBe(30);
      const exported = await call(server.base, 'GET', `/v1/export?${RANGE}`, { key: rk });
      expect(exported.status).toBe(200);
      const exportedRows = exported.text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { anonymous_id: string });
      expect(exportedRows.length).toBeGreaterThan(30);
      expect(exportedRows.every((r) => r.anonymous_id.startsWith(`${label}-`))).toBe(true);
      const sources = await call<{ rows: Array<{ source: string }> }>(server.base, 'GET', `/v1/sources?${RANGE}`, { key: rk });
      expect(sources.body.rows.map((r) => r.source)).not.toContain(`src_${other}`);
      const resource = await call<{ result: { contents: Array<{ text: string }> } }>(server.base, 'POST', '/mcp', { key: rk, body: { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'analytics://project' } } });
      expect(JSON.parse(resource.body.result.contents[0]!.text).id).toBe(projects[label].id);
    }
  });

  it('forget with one project\'s key leaves the other project\'s rows of the same user_id alone', async () => {
    // The matrix sent forget for the OTHER project's user ids; give the mutations time, then count them still there.
    await new Promise((r) => setTimeout(r, 1_500));
    for (const label of ['A', 'B'] as const) {
      const q = await call<{ rows: unknown[] }>(server.base, 'GET', `/v1/query?${RANGE}&user_id=${label}-user-0&limit=1000`, { key: projects[label].rk });
      expect(q.body.rows).toHaveLength(10);
    }
  });

  it('admin and internal endpoints take their own secrets only', async () => {
    expect((await call(server.base, 'GET', '/admin/projects', { key: ADMIN_TOKEN })).status).toBe(200);
    expect((await call(server.base, 'POST', '/internal/retention/run', { key: ADMIN_TOKEN })).status).toBe(401);
    expect((await call(server.base, 'GET', '/admin/projects', { key: INTERNAL_SECRET })).status).toBe(401);
  });
});
