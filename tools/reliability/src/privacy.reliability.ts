import { ADMIN_TOKEN, INTERNAL_SECRET, IP_HASH_SECRET, ORIGIN, type Response, type Server, call, createKey, createProject, dumpEventStore, dumpKeyStore, startServer } from './support/server';

// Distinctive caller addresses (documentation ranges), sent through X-Forwarded-For with TRUST_PROXY=loopback.
const IPS = ['198.51.100.77', '203.0.113.199', '2001:db8:0:0:0:0:dead:beef', '2001:db8::dead:beef', '::ffff:192.0.2.123'];
// How they could also show up: bare IPv4 of the mapped form, and the addresses' bytes in hex (binary columns).
const FORMS = [...IPS, '192.0.2.123', 'C633644D', 'CB0071C7', '20010DB8000000000000000000DEADBEEF', 'C000027B'];

describe('privacy: no raw IP or key secret stored or logged, no cookies', () => {
  let server: Server;
  const secrets: string[] = [];
  const responses: Response[] = [];
  const record = async (p: Promise<Response>) => {
    const r = await p;
    responses.push(r);
    return r;
  };

  beforeAll(async () => {
    server = await startServer({ env: { LOG_LEVEL: 'debug' } });
    const p = await createProject(server.base, 'privacy');
    const ak = await createKey(server.base, p.id, 'ak');
    const keys = [p.pk, p.sk, p.rk, ak];
    for (const k of keys) secrets.push(k, k.split('_')[3]!);
    secrets.push(ADMIN_TOKEN, INTERNAL_SECRET, IP_HASH_SECRET);

    for (const [i, ip] of IPS.entries()) {
      const headers = { 'x-forwarded-for': ip, origin: ORIGIN, 'user-agent': `Mozilla/5.0 (X11; Linux x86_64) probe/${ip}` };
      await record(call(server.base, 'POST', '/v1/track', { key: p.pk, headers, body: { event: 'pageview', anonymous_id: `a-${i}`, properties: { note: 'no ip here' } } }));
      await record(call(server.base, 'POST', '/v1/batch', { key: p.sk, headers, body: { events: [{ event: 'a' }, { event: 'b', user_id: `u-${i}` }] } }));
      await record(call(server.base, 'POST', '/v1/identify', { key: p.sk, headers, body: { anonymous_id: `a-${i}`, user_id: `u-${i}` } }));
      await record(call(server.base, 'POST', '/mcp', { key: ak, headers, body: { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'track_event', arguments: { event: 'agent_task_started' } } } }));
      // Failures log too: invalid payloads, wrong secrets, wrong keys, a not-found.
      await record(call(server.base, 'POST', '/v1/track', { key: p.sk, headers, body: { event: '' } }));
      await record(call(server.base, 'POST', '/v1/track', { key: `${p.sk.slice(0, -4)}ZZZZ`, headers, body: { event: 'x' } }));
      await record(call(server.base, 'POST', '/v1/track', { key: p.rk, headers, body: { event: 'x' } }));
      await record(call(server.base, 'GET', `/v1/query?from=2020-01-01&to=2100-01-01`, { key: p.rk, headers }));
      await record(call(server.base, 'GET', `/v1/stats?from=nope`, { key: p.rk, headers }));
      await record(call(server.base, 'POST', '/internal/retention/run', { headers: { ...headers, 'x-internal-secret': `${INTERNAL_SECRET}x` } }));
      await record(call(server.base, 'GET', `/admin/projects/${p.id}`, { key: ADMIN_TOKEN, headers }));
      await record(call(server.base, 'GET', '/nope', { headers }));
      await record(call(server.base, 'OPTIONS', '/v1/track', { headers: { ...headers, 'access-control-request-method': 'POST' } }));
    }
    await record(call(server.base, 'POST', '/internal/retention/run', { headers: { 'x-internal-secret': INTERNAL_SECRET } }));
    // Admin and MCP routes, and keys where a path or a query string can carry them: the whole key in the revoke path
    // (plain and percent-encoded), a key in a query value, a 405 and a wrong method on a known path.
    const revoked = [await createKey(server.base, p.id, 'sk'), await createKey(server.base, p.id, 'rk')];
    for (const k of revoked) secrets.push(k, k.split('_')[3]!);
    await record(call(server.base, 'DELETE', `/admin/keys/${revoked[0]}`, { key: ADMIN_TOKEN }));
    await record(call(server.base, 'DELETE', `/admin/keys/${encodeURIComponent(revoked[1]!).replace(/_/g, '%5F')}`, { key: ADMIN_TOKEN }));
    await record(call(server.base, 'PATCH', `/admin/projects/${p.id}`, { key: ADMIN_TOKEN, body: { retention_days: 30 } }));
    await record(call(server.base, 'GET', '/admin/projects', { key: ADMIN_TOKEN }));
    await record(call(server.base, 'POST', '/mcp', { key: p.rk, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }));
    await record(call(server.base, 'POST', '/mcp', { key: p.rk, body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_stats', arguments: { from: '2020-01-01', to: '2100-01-01' } } } }));
    await record(call(server.base, 'GET', `/v1/stats?from=2020-01-01&to=2100-01-01&key=${p.sk}&token=${ADMIN_TOKEN}`, { key: p.rk }));
    await record(call(server.base, 'GET', `/v1/track?key=${p.pk}`));
    await record(call(server.base, 'GET', `/nope/${p.sk}`));
    expect(await server.stop()).toBe(0);
  });

  afterAll(() => server?.dispose());

  it('sets no cookie on any response', () => {
    expect(responses.length).toBeGreaterThan(70);
    expect(responses.filter((r) => r.headers.has('set-cookie')).map((r) => r.headers.get('set-cookie'))).toEqual([]);
  });

  it('stored the events with an ip_hash, and no raw IP or key secret in any table of any database of either store', () => {
    const tables = { ...dumpEventStore(server.dataDir), ...dumpKeyStore(server.dataDir) };
    expect(Object.keys(tables)).toEqual(expect.arrayContaining(['analytics.events', 'analytics.daily_rollup', 'analytics.sessions', 'public.projects', 'public.api_keys']));
    expect(tables['analytics.events']).toContain('pageview');
    const found: string[] = [];
    for (const [table, text] of Object.entries(tables)) {
      for (const needle of [...FORMS, ...secrets]) if (text.toUpperCase().includes(needle.toUpperCase())) found.push(`${needle} in ${table}`);
    }
    expect(found).toEqual([]);
  });

  it('logged requests of every route (LOG_LEVEL=debug, admin and MCP included) without any IP, key, secret or Authorization header', () => {
    const log = server.log();
    expect(log).toContain('"msg":"request"'); // debug request lines were written
    for (const path of ['/admin/keys/', '/mcp', '/admin/projects', '/v1/stats', '/internal/retention/run']) expect(log).toContain(`"path":"${path}`);
    expect(log).toContain('_[redacted]'); // the revoke paths were logged, without their secrets
    const found = [...FORMS, ...secrets].filter((needle) => log.toUpperCase().includes(needle.toUpperCase()));
    expect(found).toEqual([]);
    expect(log.toLowerCase()).not.toContain('authorization');
    expect(log.toLowerCase()).not.toContain('x-forwarded-for');
  });
});
