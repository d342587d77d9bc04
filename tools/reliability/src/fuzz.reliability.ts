import fc from 'fast-check';
import { BODY_READS, MAX_ERROR_ANSWER_BYTES, fuzz } from '@analytics/testing';
import { MCP_CAPABILITIES } from '@analytics/schema';
import { ADMIN_TOKEN, INTERNAL_SECRET, ORIGIN, type ProjectKeys, type Server, call, createKey, createProject, queryEvents, startServer } from './support/server';

// Property-based fuzzing of every endpoint against the real server: never a 5xx, never a crash, the right 4xx code,
// and nothing written by a rejected request (the stored count of the fuzzed project equals what was acknowledged).
const RUNS = Number(process.env.RELIABILITY_FUZZ_RUNS ?? 300);

const HOSTILE = [
  "'; DROP TABLE analytics.events; --", "' OR '1'='1", '{p:UUID}', '{{x}}', "1) UNION SELECT * FROM system.users --", '\\', '\\\\N', '\t\n\r',
  '\u0000', 'a\u0000b', '\u0000'.repeat(200), '\uFFFD', '\uD800', '\uDFFF', '😀'.repeat(70), 'e\u0301', '\u202Egnp.exe', '../../etc/passwd', '%00', '%s%n',
  '${jndi:ldap://x}', '<script>alert(1)</script>', 'null', 'undefined', 'NaN', '-0', '1e309', '9'.repeat(400), ' ', '', '$pageview', '$identify',
  'x'.repeat(128), 'x'.repeat(129), 'x'.repeat(256), 'x'.repeat(257), 'x'.repeat(2048), 'x'.repeat(2049), 'https://a.example/' + 'p'.repeat(2040),
  'javascript:alert(1)', 'http://[::1]:80/', 'https://user:pass@shop.example.com/?gclid=1', 'https://xn--80ak6aa92e.com/', '2026-02-30T00:00:00Z',
  '0000-01-01', '9999-12-31T23:59:59Z', '2026-01-01T00:00:00+99:99', '1970-01-01', '2199-12-31T23:59:59.999Z',
];
const str = fc.oneof(fc.constantFrom(...HOSTILE), fc.string(), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ minLength: 120, maxLength: 300 }));
const scalar = fc.oneof(str, fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
const anyJson = fc.oneof({ weight: 3, arbitrary: fc.jsonValue({ maxDepth: 4 }) }, scalar, fc.array(scalar, { maxLength: 5 }));
const props = fc.oneof(fc.dictionary(str, anyJson, { maxKeys: 6 }), anyJson, fc.constant({ big: 'x'.repeat(8200) }));
const field = (v: fc.Arbitrary<unknown>) => fc.option(fc.oneof({ weight: 4, arbitrary: v }, anyJson), { nil: undefined, freq: 3 });
const eventLike = fc.record(
  {
    event: field(str),
    event_id: field(str),
    timestamp: field(str),
    anonymous_id: field(str),
    user_id: field(str),
    session_id: field(str),
    url: field(fc.oneof(fc.webUrl({ withQueryParameters: true }), str)),
    path: field(str),
    referrer: field(fc.oneof(fc.webUrl(), str)),
    properties: field(props),
    source: field(str),
    ip_hash: field(str),
  },
  { requiredKeys: [] },
);
// Mostly valid events, so that batches (all-or-nothing) also pass validation and get written.
const validEvent = fc.record(
  { event: fc.string({ minLength: 1, maxLength: 60 }), anonymous_id: fc.string({ minLength: 1, maxLength: 60 }), user_id: fc.option(str, { nil: undefined }), properties: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }) },
  { requiredKeys: ['event'] },
);
const headerValue = fc.string({ maxLength: 200 }).filter((s) => !/[\0\r\n]/.test(s) && [...s].every((c) => c.charCodeAt(0) < 256));

describe('fuzzing every endpoint', () => {
  let server: Server;
  let p: ProjectKeys; // track / batch / identify: every acknowledged event counted
  let f: ProjectKeys; // forget (deletes only its own project's events)
  let m: ProjectKeys; // MCP
  let ak: string;
  let accepted = 0;
  const statuses = new Map<string, Set<number>>();
  const note = (what: string, status: number) => {
    if (!statuses.has(what)) statuses.set(what, new Set());
    statuses.get(what)!.add(status);
  };

  beforeAll(async () => {
    server = await startServer({ env: { RATE_LIMIT_TRACK_PER_S: '100000', RATE_LIMIT_TRACK_BURST: '100000', RATE_LIMIT_BATCH_PER_S: '100000', RATE_LIMIT_BATCH_BURST: '100000' } });
    p = await createProject(server.base, 'fuzz');
    f = await createProject(server.base, 'fuzz-forget');
    m = await createProject(server.base, 'fuzz-mcp');
    ak = await createKey(server.base, m.id, 'ak');
  });
  afterAll(() => server?.dispose());

  const expectCode = (res: { status: number; body: unknown }, allowed: Record<number, string[] | null>) => {
    expect(Object.keys(allowed).map(Number)).toContain(res.status);
    const codes = allowed[res.status];
    if (codes) expect(codes).toContain((res.body as { error?: string })?.error);
  };

  it('POST /v1/track: any body is 202 (then written) or 400 invalid_payload (then not)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof({ weight: 4, arbitrary: eventLike }, anyJson), async (body) => {
        const res = await call(server.base, 'POST', '/v1/track', { key: p.sk, body: body === undefined ? 'null' : body });
        note('track', res.status);
        expectCode(res, { 202: null, 400: ['invalid_payload'] });
        if (res.status === 202) accepted++;
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('POST /v1/batch: all-or-nothing for any list of events', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof({ weight: 4, arbitrary: fc.record({ events: fc.array(fc.oneof({ weight: 6, arbitrary: validEvent }, eventLike), { maxLength: 8 }) }) }, fc.record({ events: anyJson }), anyJson), async (body) => {
        const res = await call<{ count?: number }>(server.base, 'POST', '/v1/batch', { key: p.sk, body: body === undefined ? 'null' : body });
        note('batch', res.status);
        expectCode(res, { 202: null, 400: ['invalid_payload'] });
        if (res.status === 202) accepted += res.body.count!;
      }),
      { numRuns: RUNS },
    );
  });

  it('POST /v1/identify and /v1/forget: 200/202 or 400 invalid_payload', async () => {
    await fc.assert(
      fc.asyncProperty(fc.record({ anonymous_id: field(str), user_id: field(str), traits: field(props) }, { requiredKeys: [] }), async (body) => {
        const id = await call(server.base, 'POST', '/v1/identify', { key: p.sk, body });
        note('identify', id.status);
        expectCode(id, { 200: null, 400: ['invalid_payload'] });
        if (id.status === 200) accepted++;
        const forget = await call(server.base, 'POST', '/v1/forget', { key: f.sk, body: { user_id: body.user_id } });
        note('forget', forget.status);
        expectCode(forget, { 202: null, 400: ['invalid_payload'] });
      }),
      { numRuns: RUNS },
    );
  });

  it('raw bytes and content types on the ingest endpoints are 4xx, never 5xx', async () => {
    const types = fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'application/json; charset=nope', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/octet-stream', '');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/v1/track', '/v1/batch', '/v1/identify', '/v1/forget'), types, fc.oneof(fc.string(), fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b))), async (path, type, raw) => {
        const headers: Record<string, string> = type ? { 'content-type': type } : {};
        const res = await call(server.base, 'POST', path, { key: path === '/v1/forget' ? f.sk : p.sk, body: raw, headers });
        note(`raw ${path}`, res.status);
        if (res.status === 202 || res.status === 200) {
          // A raw body can only pass when it is itself valid JSON of the right shape.
          accepted += path === '/v1/batch' ? ((res.body as { count?: number }).count ?? 0) : path === '/v1/forget' ? 0 : 1;
          return;
        }
        // A charset other than UTF-8 is 415 unsupported_encoding; a missing body or a non-JSON type, 400 saying so.
        expectCode(res, { 400: ['invalid_payload'], 413: ['payload_too_large'], 415: ['unsupported_encoding'] });
        if (res.status === 415) expect(type).toMatch(/charset=(?!utf-8)/);
      }),
      { numRuns: RUNS },
    );
  });

  it('hostile bodies: 10 MB, over 16 MB, deep JSON, invalid UTF-8, NUL bytes', async () => {
    const cases: Array<[string, string | Buffer, number, string]> = [
      ['10 MB of properties', JSON.stringify({ event: 'x', properties: { blob: 'x'.repeat(10 * 1024 * 1024) } }), 400, 'invalid_payload'],
      ['17 MB body', JSON.stringify({ event: 'x', properties: { blob: 'x'.repeat(17 * 1024 * 1024) } }), 413, 'payload_too_large'],
      ['deep JSON in properties', `{"event":"x","properties":{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`, 400, 'invalid_payload'],
      ['deep JSON as the body', `${'['.repeat(200_000)}${']'.repeat(200_000)}`, 400, 'invalid_payload'],
      ['deep objects in properties', `{"event":"x","properties":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`, 400, 'invalid_payload'],
      ['invalid UTF-8', Buffer.concat([Buffer.from('{"event":"'), Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80]), Buffer.from('"}')]), 202, ''],
      ['truncated JSON', '{"event":"x","properties":{"a":', 400, 'invalid_payload'],
    ];
    for (const [name, body, status, code] of cases) {
      const res = await call(server.base, 'POST', '/v1/track', { key: p.sk, body });
      expect({ name, status: res.status }).toEqual({ name, status });
      if (code) expect(res.body).toMatchObject({ error: code });
      if (res.status === 202) accepted++;
    }
    const batch = await call(server.base, 'POST', '/v1/batch', { key: p.sk, body: { events: Array.from({ length: 1001 }, () => ({ event: 'x' })) } });
    expect(batch.body).toMatchObject({ error: 'invalid_payload' });
    const nul = await call<{ event_id: string }>(server.base, 'POST', '/v1/track', { key: p.sk, body: { event: 'nul\u0000name', event_id: 'nul-\u0000-id', user_id: "u'\u0000--", properties: { '\u0000': '\u0000' } } });
    expect(nul.status).toBe(202);
    accepted++;
    expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
  });

  it('a huge header is refused by the HTTP layer (431) and the server keeps serving', async () => {
    const res = await fetch(`${server.base}/v1/track`, { method: 'POST', headers: { authorization: `Bearer ${p.sk}`, 'content-type': 'application/json', 'x-big': 'x'.repeat(64 * 1024) }, body: '{"event":"x"}' }).catch(() => null);
    if (res) expect(res.status).toBe(431);
    expect((await call(server.base, 'POST', '/v1/track', { key: p.sk, body: { event: 'after_big_header' } })).status).toBe(202);
    accepted++;
  });

  it('any Authorization and Origin header gives the right 401/403 code', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(headerValue, headerValue.map((s) => `Bearer ${s}`), fc.constantFrom(`Bearer ${p.pk}`, `Bearer ${p.sk}x`, `bearer  ${p.sk}`, `Bearer ${p.rk}`, `Basic ${p.sk}`)), headerValue, async (authorization, origin) => {
        const res = await call(server.base, 'POST', '/v1/track', { body: { event: 'auth_fuzz' }, headers: { authorization, origin } });
        note('auth', res.status);
        expectCode(res, { 202: null, 401: ['missing_bearer_token', 'malformed_api_key', 'invalid_api_key', 'key_kind_mismatch'], 403: ['origin_not_allowed', 'insufficient_scope'] });
        if (res.status === 202) accepted++;
      }),
      { numRuns: RUNS },
    );
    const good = await call(server.base, 'POST', '/v1/track', { key: p.pk, body: { event: 'pk_ok' }, headers: { origin: ORIGIN } });
    expect(good.status).toBe(202);
    accepted++;
  });

  it('any query string on the read endpoints is 200 or 400 invalid_params / invalid_group_by', async () => {
    const value = fc.oneof(str, fc.constantFrom('2026-01-01', '2026-01-01T00:00:00Z', '2027-01-01', 'count', 'uniques', 'source,medium', 'path', 'hour', 'day', 'week', 'source', '0', '1', '1000', '1001', '-1', '1.5', '1e3', 'ndjson', 'csv', 'parquet'));
    const key = fc.constantFrom('from', 'to', 'event', 'source', 'medium', 'user_id', 'limit', 'metric', 'group_by', 'interval', 'breakdown', 'format', 'from[]', 'to[a]', '__proto__', 'constructor');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/v1/query', '/v1/stats', '/v1/sources', '/v1/export'), fc.array(fc.tuple(key, value), { maxLength: 8 }), fc.boolean(), async (path, pairs, withRange) => {
        const qs = new URLSearchParams(withRange ? [['from', '2026-01-01'], ['to', '2026-03-01'], ...pairs] : pairs);
        const res = await call(server.base, 'GET', `${path}?${qs}`, { key: p.rk });
        note(path, res.status);
        expectCode(res, { 200: null, 400: ['invalid_params', 'invalid_group_by'] });
      }),
      { numRuns: RUNS * 2 },
    );
    const raw = await call(server.base, 'GET', '/v1/query?from=2026-01-01&to=2026-03-01&event=%00%FF%FE&user_id=%E0%80%80', { key: p.rk });
    expectCode(raw, { 200: null, 400: ['invalid_params'] });
  });

  it('any read body (insights, funnel, retention; libs/testing hostile shapes), over HTTP and MCP, is answered without a 5xx, an error in at most 64 KB', async () => {
    // Each read route's tool, from the capability declarations (libs/schema's routes declared with `mcp`).
    const TOOL = Object.fromEntries(MCP_CAPABILITIES.map((c) => [c.route.path, c.mcp.tool])) as Record<string, string>;
    for (const [path, arb] of Object.entries(BODY_READS) as Array<[string, fc.Arbitrary<Record<string, unknown>>]>) {
      await fuzz(arb, Math.ceil(RUNS / 3), async (body) => {
        const res = await call(server.base, 'POST', path, { key: p.rk, body });
        note(path, res.status);
        expectCode(res, { 200: null, 400: ['invalid_payload'], 413: ['payload_too_large'] });
        if (res.status !== 200) expect(Buffer.byteLength(res.text)).toBeLessThanOrEqual(MAX_ERROR_ANSWER_BYTES);
        const rpc = await call<{ result?: { isError?: boolean }; error?: unknown }>(server.base, 'POST', '/mcp', { key: m.rk, body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: TOOL[path]!, arguments: body } } });
        note(`mcp ${TOOL[path]!}`, rpc.status);
        // A result or an argument error (isError), never a JSON-RPC error (tool_failed, -32603); 413 over 16 MB.
        expect([200, 413]).toContain(rpc.status);
        if (rpc.status === 200) expect(rpc.body.error).toBeUndefined();
        if (rpc.status !== 200 || rpc.body.result?.isError) expect(Buffer.byteLength(rpc.text)).toBeLessThanOrEqual(MAX_ERROR_ANSWER_BYTES);
      });
      expect([...statuses.get(path)!]).toEqual(expect.arrayContaining([200, 400]));
    }
  });

  it('POST /mcp: any JSON-RPC message is answered without a 5xx', async () => {
    const tool = fc.constantFrom(...MCP_CAPABILITIES.map((c) => c.mcp.tool), 'nope', '');
    const message = fc.oneof(
      fc.record({ jsonrpc: fc.constant('2.0'), id: fc.oneof(fc.integer(), str, fc.constant(null)), method: fc.constant('tools/call'), params: fc.record({ name: tool, arguments: fc.oneof(eventLike, fc.dictionary(str, anyJson), anyJson) }) }),
      fc.record({ jsonrpc: fc.constant('2.0'), id: fc.integer(), method: fc.constantFrom('tools/list', 'resources/list', 'resources/read', 'initialize', 'ping', 'nope'), params: fc.option(fc.oneof(fc.record({ uri: str }), anyJson), { nil: undefined }) }),
      fc.record({ jsonrpc: fc.oneof(fc.constant('2.0'), str), id: anyJson, method: fc.oneof(str, anyJson) }, { requiredKeys: [] }),
      fc.array(fc.record({ jsonrpc: fc.constant('2.0'), id: fc.integer(), method: fc.constant('tools/list') }), { maxLength: 3 }),
      anyJson,
    );
    await fc.assert(
      fc.asyncProperty(message, fc.constantFrom(m.rk, m.sk, ak, m.pk, 'garbage'), async (body, key) => {
        const res = await call(server.base, 'POST', '/mcp', { key, body: body === undefined ? 'null' : body });
        note('mcp', res.status);
        expect([200, 202, 400, 401, 403, 406, 413]).toContain(res.status);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('/admin/*: any body, id and prefix is 2xx or 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ name: field(str), allowed_origins: field(fc.array(fc.oneof(str, fc.webUrl()), { maxLength: 4 })), retention_days: field(fc.oneof(fc.integer(), fc.double())), env: field(str) }, { requiredKeys: [] }),
        str,
        fc.record({ kind: field(fc.oneof(str, fc.constantFrom('pk', 'sk', 'rk', 'ak'))), env: field(fc.oneof(str, fc.constantFrom('live', 'test'))) }, { requiredKeys: [] }),
        async (body, id, keyBody) => {
          const created = await call<{ project?: { id: string } }>(server.base, 'POST', '/admin/projects', { key: ADMIN_TOKEN, body });
          note('admin create', created.status);
          expectCode(created, { 201: null, 400: ['invalid_payload'] });
          const target = created.body?.project?.id ?? m.id; // never p: its count is checked at the end
          const seg = encodeURIComponent(id.replace(/[\uD800-\uDFFF]/g, '\uFFFD')); // a lone surrogate cannot be a URL
          for (const [method, path, b] of [
            ['GET', `/admin/projects/${seg}`, undefined],
            ['PATCH', `/admin/projects/${seg}`, body],
            ['PATCH', `/admin/projects/${target}`, { name: body.name, allowed_origins: body.allowed_origins }],
            ['POST', `/admin/projects/${seg}/keys`, keyBody],
            ['POST', `/admin/projects/${target}/keys`, keyBody],
            ['DELETE', `/admin/keys/${seg}`, undefined],
          ] as const) {
            const res = await call(server.base, method, path, { key: ADMIN_TOKEN, body: b });
            note(`admin ${method}`, res.status);
            // An empty id leaves `/admin/projects/`, the list's path, where PATCH and DELETE are 405 with Allow. So do
            // the ids '.' and '..' (also as %2E): the client's URL parser resolves dot segments before sending, so
            // `/admin/projects/.` arrives as `/admin/projects/` and `/admin/projects/../keys` as `/admin/keys`.
            const allowed: Record<number, string[] | null> = { 200: null, 201: null, 204: null, 400: ['invalid_payload'], 404: ['not_found'] };
            if (['', '.', '..'].includes(decodeURIComponent(seg))) allowed[405] = ['method_not_allowed'];
            expectCode(res, allowed);
          }
        },
      ),
      { numRuns: RUNS },
    );
    const noToken = await call(server.base, 'GET', '/admin/projects', { key: 'wrong' });
    expect(noToken.body).toEqual({ error: 'invalid_session' });
  });

  it('/internal/retention/run: any secret but the right one is 401 unauthorized', async () => {
    await fc.assert(
      fc.asyncProperty(headerValue, async (secret) => {
        const res = await call(server.base, 'POST', '/internal/retention/run', { headers: { 'x-internal-secret': secret } });
        expectCode(res, { 401: ['unauthorized'] });
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
    expect((await call(server.base, 'POST', '/internal/retention/run', { headers: { 'x-internal-secret': INTERNAL_SECRET } })).status).toBe(200);
  });

  it('wrote exactly the acknowledged events: nothing from a rejected request', async () => {
    expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
    expect(await server.stop()).toBe(0);
    expect(server.log().split('\n').filter((l) => l.includes('request failed')).map((l) => l.slice(0, 400))).toEqual([]);
    const [row] = queryEvents<{ c: string }>(server.dataDir, `SELECT count() AS c FROM analytics.events WHERE project_id = '${p.id}'`);
    expect(Number(row!.c)).toBe(accepted);
    // Every endpoint saw both outcomes at least once (the fuzzing reached past validation).
    expect(statuses.get('track')).toEqual(new Set([202, 400]));
    expect(statuses.get('batch')).toEqual(new Set([202, 400]));
  });
});
