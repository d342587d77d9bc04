import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Analytics, AnalyticsError } from './index';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: an SDK's tests run against the whole service
import { type RealService, closeServer, listen, startRealService, urlOf } from '../../../apps/standalone/src/test-service';

let service: RealService;
let keys: { pk: string; sk: string; rk: string };
let projectId: string;

beforeAll(async () => {
  service = await startRealService();
  const p = await service.stores.keyStore.createProject({ name: 'sdk-node', allowed_origins: ['https://shop.example.com'] });
  keys = p.keys;
  projectId = p.project.id;
});
afterAll(() => service.close());

const rowsOf = (where: string, params: Record<string, unknown> = {}) =>
  service.stores.events.select<Record<string, string | null>>(
    `SELECT * FROM ${service.stores.events.eventsTable} WHERE project_id = {p:UUID} AND ${where} ORDER BY timestamp, event_name`,
    { p: projectId, ...params },
  );

/** Polls until `check` passes (aggregates and forget complete "within seconds"). */
async function eventually<T>(probe: () => Promise<T>, check: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (check(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const requestsTo = (path: string) => service.requests.filter((r) => r.path.startsWith(path)).length;

async function rejection(p: Promise<unknown>): Promise<AnalyticsError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof AnalyticsError) return e;
    throw e;
  }
  throw new Error('expected the call to fail');
}

describe('Analytics against the real service', () => {
  const hourAgo = () => new Date(Date.now() - 3_600_000);
  const inAnHour = () => new Date(Date.now() + 3_600_000);

  it('track: one request, 202 { ok, event_id }, the row is stored with the client event_id and the classified source', async () => {
    const client = new Analytics({ endpoint: `${service.endpoint}/`, key: keys.sk });
    const before = requestsTo('/v1/track');
    const res = await client.track({
      event: 'signup',
      anonymous_id: 'node-anon-1',
      url: 'https://shop.example.com/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=spring',
      timestamp: new Date('2026-03-01T10:00:00.123Z'),
      properties: { plan: 'pro' },
    });
    expect(res).toEqual({ ok: true, event_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(requestsTo('/v1/track') - before).toBe(1);
    const [row] = await rowsOf('event_id = {id:String}', { id: res.event_id });
    expect(row).toMatchObject({
      event_name: 'signup',
      anonymous_id: 'node-anon-1',
      timestamp: '2026-03-01 10:00:00.123',
      source: 'newsletter',
      medium: 'email',
      campaign: 'spring',
      path: '/pricing',
      properties: '{"plan":"pro"}',
    });
  });

  it('track keeps a caller event_id; batch sends every event in one request', async () => {
    const client = new Analytics({ endpoint: service.endpoint, key: keys.sk });
    expect(await client.track({ event: 'kept_id', event_id: 'evt-node-1', user_id: 'u-node' })).toEqual({ ok: true, event_id: 'evt-node-1' });
    const before = requestsTo('/v1/batch');
    const res = await client.batch([
      { event: 'b1', anonymous_id: 'node-anon-2', url: 'https://shop.example.com/?gclid=abc' },
      { event: 'b2', anonymous_id: 'node-anon-2', user_id: null },
    ]);
    expect(res).toEqual({ ok: true, count: 2 });
    expect(requestsTo('/v1/batch') - before).toBe(1);
    const rows = await rowsOf("anonymous_id = 'node-anon-2'");
    expect(rows.map((r) => [r.event_name, r.medium])).toEqual([
      ['b1', 'paid'],
      ['b2', 'direct'],
    ]);
    expect(rows.every((r) => /^[0-9a-f-]{36}$/.test(r.event_id!))).toBe(true);
  });

  it('identify stores a $identify event with the traits; forget queues the deletion of the user', async () => {
    const client = new Analytics({ endpoint: service.endpoint, key: keys.sk });
    expect(await client.identify({ anonymous_id: 'node-anon-3', user_id: 'u-forget', traits: { plan: 'team' } })).toEqual({ ok: true });
    await client.track({ event: 'after_identify', anonymous_id: 'node-anon-3', user_id: 'u-forget' });
    const rows = await rowsOf("user_id = 'u-forget'");
    expect(rows.map((r) => [r.event_name, r.anonymous_id, r.properties])).toEqual([
      ['$identify', 'node-anon-3', '{"plan":"team"}'],
      ['after_identify', 'node-anon-3', '{}'],
    ]);
    expect(await client.forget('u-forget')).toEqual({ ok: true, queued: true });
    const left = await eventually(() => rowsOf("user_id = 'u-forget'"), (r) => r.length === 0);
    expect(left).toEqual([]);
  });

  it('query, stats and sources read back with an rk_ key', async () => {
    const writer = new Analytics({ endpoint: service.endpoint, key: keys.sk });
    await writer.batch([
      { event: 'read_probe', anonymous_id: 'node-read-1', url: 'https://shop.example.com/a?utm_source=partner&utm_medium=affiliate' },
      { event: 'read_probe', anonymous_id: 'node-read-2', url: 'https://shop.example.com/b?utm_source=partner&utm_medium=affiliate' },
    ]);
    const reader = new Analytics({ endpoint: service.endpoint, key: keys.rk });
    const query = await reader.query({ from: hourAgo(), to: inAnHour(), event: 'read_probe', limit: 10 });
    expect(query.rows).toHaveLength(2);
    expect(query.rows[0]).toMatchObject({ event_name: 'read_probe', source: 'partner', medium: 'affiliate' });
    expect(JSON.parse(query.rows[0]!.properties)).toEqual({});

    const stats = await eventually(
      () => reader.stats({ from: hourAgo(), to: inAnHour(), event: 'read_probe', group_by: ['source', 'medium'] }),
      (s) => s.rows.length > 0,
    );
    expect(stats.metric).toBe('count');
    expect(stats.rows).toEqual([expect.objectContaining({ source: 'partner', medium: 'affiliate', value: 2 })]);
    const source: string | null = stats.rows[0]!.source; // typed from group_by
    expect(source).toBe('partner');

    const sources = await eventually(
      () => reader.sources({ from: hourAgo().toISOString(), to: inAnHour().toISOString(), breakdown: 'source_medium' }),
      (s) => s.rows.some((r) => r.source === 'partner'),
    );
    expect(sources.breakdown).toBe('source_medium');
    expect(sources.rows.find((r) => r.source === 'partner')).toMatchObject({ medium: 'affiliate', paid_share: 0 });
  });

  it('insights and properties read back with an rk_ key, typed by the metrics and dimensions asked for', async () => {
    const { sk, rk } = (await service.stores.keyStore.createProject({ name: 'sdk-node-insights' })).keys;
    const start = Date.now() - 30 * 60_000; // one clock reading: the steps are exactly whole minutes apart
    const at = (min: number) => new Date(start + min * 60_000);
    await new Analytics({ endpoint: service.endpoint, key: sk }).batch([
      { event: '$pageview', anonymous_id: 'i-1', session_id: 'i-1-s', timestamp: at(0), url: 'https://shop.example.com/pricing', properties: { plan: 'pro' } },
      { event: 'signup', anonymous_id: 'i-1', session_id: 'i-1-s', timestamp: at(2), url: 'https://shop.example.com/signup', properties: { plan: 'pro' } },
      { event: '$pageview', anonymous_id: 'i-2', session_id: 'i-2-s', timestamp: at(1), url: 'https://shop.example.com/', properties: { plan: 'free' } },
    ]);
    const reader = new Analytics({ endpoint: service.endpoint, key: rk });
    const totals = await reader.insights({ from: hourAgo(), to: inAnHour(), metrics: ['visits', 'bounce_rate', 'visit_duration'] });
    expect(totals.rows).toEqual([{ visits: 2, bounce_rate: 0.5, visit_duration: 60 }]);
    const byPlan = await reader.insights({
      from: hourAgo(),
      to: inAnHour(),
      metrics: ['events', 'visitors'],
      dimensions: ['prop:plan'],
      filters: [['or', [['is', 'event_name', ['signup']], ['contains', 'path', ['/']]]]],
      order_by: [['prop:plan', 'asc']],
      compare: 'previous_period',
    });
    expect(byPlan.rows).toEqual([
      { 'prop:plan': 'free', events: 1, visitors: 1, comparison: { events: 0, visitors: 0 } },
      { 'prop:plan': 'pro', events: 2, visitors: 1, comparison: { events: 0, visitors: 0 } },
    ]);
    const plan: string | null = byPlan.rows[0]!['prop:plan']; // typed from dimensions
    const events: number = byPlan.rows[0]!.events; // typed from metrics
    expect([plan, events]).toEqual(['free', 1]);
    expect(await reader.properties({ from: hourAgo(), to: inAnHour() })).toEqual({ rows: [{ key: 'plan', events: 3 }] });
    expect(await reader.properties({ from: hourAgo(), to: inAnHour(), key: 'plan', event: '$pageview' })).toEqual({ rows: [{ value: 'free', events: 1 }, { value: 'pro', events: 1 }] });
    const bad = await rejection(reader.insights({ from: hourAgo(), to: inAnHour(), dimensions: ['source', 'medium', 'country', 'os'] }));
    expect(bad).toMatchObject({ code: 'invalid_payload', status: 400 });
    expect(JSON.stringify(bad.details)).toContain('at most 3 dimensions');
  });

  it('funnel, retention and goal conversions read back with an rk_ key; a one-step funnel is a 400 with its details', async () => {
    const { sk, rk } = (await service.stores.keyStore.createProject({ name: 'sdk-node-conversions' })).keys;
    const start = Date.now() - 30 * 60_000; // one clock reading: the steps are exactly whole minutes apart
    const at = (min: number) => new Date(start + min * 60_000);
    await new Analytics({ endpoint: service.endpoint, key: sk }).batch([
      { event: '$pageview', anonymous_id: 'c-1', user_id: 'U-1', timestamp: at(0), url: 'https://shop.example.com/pricing' },
      { event: 'signup', anonymous_id: 'c-1', user_id: 'U-1', timestamp: at(2), url: 'https://shop.example.com/signup' },
      { event: '$pageview', anonymous_id: 'c-2', timestamp: at(1), url: 'https://shop.example.com/' },
    ]);
    const reader = new Analytics({ endpoint: service.endpoint, key: rk });
    const funnel = await reader.funnel({ from: hourAgo(), to: inAnHour(), steps: [{ event: '$pageview' }, { event: 'signup' }], breakdown: 'path' });
    expect(funnel.steps).toEqual([
      { index: 1, count: 2, conversion_rate: 1, drop_off: 0, median_time_to_convert_s: null },
      { index: 2, count: 1, conversion_rate: 0.5, drop_off: 1, median_time_to_convert_s: 120 },
    ]);
    expect(funnel.breakdown?.map((b) => [b.value, b.steps.map((x) => x.count)])).toEqual([['/', [1, 0]], ['/pricing', [1, 1]]]);
    const to = inAnHour();
    const signup = at(2);
    const nextMonth = Date.UTC(signup.getUTCFullYear(), signup.getUTCMonth() + 1, 1);
    const retention = await reader.retention({ from: hourAgo(), to, period: 'month', count_by: 'user', start: { event: 'signup' } });
    // one cohort: U-1's signup month (c-2 has no user_id); a second period only when `to` is past the month's end
    expect(retention.cohorts).toEqual([{ cohort: `${signup.toISOString().slice(0, 7)}-01`, size: 1, returned: nextMonth < to.getTime() ? [1, 0] : [1] }]);
    const goals = await reader.insights({ from: hourAgo(), to: inAnHour(), metrics: ['visitors', 'conversions', 'conversion_rate'], goal: { path: '/sign*' } });
    expect(goals.rows).toEqual([{ visitors: 2, conversions: 1, conversion_rate: 0.5 }]);
    const bad = await rejection(reader.funnel({ from: hourAgo(), to: inAnHour(), steps: [{ event: 'signup' }] }));
    expect(bad).toMatchObject({ code: 'invalid_payload', status: 400 });
    expect(JSON.stringify(bad.details)).toContain('a funnel has 2 to 10 steps');
  });

  it('goals, funnels and segments list the saved ones; insights, funnel and retention take their ids', async () => {
    const created = await service.stores.keyStore.createProject({ name: 'sdk-node-saved' });
    const { sk, rk } = created.keys;
    const start = Date.now() - 30 * 60_000;
    const at = (min: number) => new Date(start + min * 60_000);
    await new Analytics({ endpoint: service.endpoint, key: sk }).batch([
      { event: '$pageview', anonymous_id: 's-1', user_id: 'U-1', timestamp: at(0), url: 'https://shop.example.com/pricing', properties: { plan: 'pro' } },
      { event: 'signup', anonymous_id: 's-1', user_id: 'U-1', timestamp: at(2), url: 'https://shop.example.com/signup', properties: { plan: 'pro' } },
      { event: '$pageview', anonymous_id: 's-2', timestamp: at(1), url: 'https://shop.example.com/', properties: { plan: 'free' } },
    ]);
    const saved = service.stores.keyStore.saved;
    const goal = (await saved.create(created.project.id, 'goal', { name: 'Signup', definition: { event: 'signup', filters: [] } }))!;
    const funnel = (await saved.create(created.project.id, 'funnel', { name: 'Signup funnel', definition: { steps: [{ event: '$pageview', filters: [] }, { event: 'signup', filters: [] }], window_s: 86400, count_by: 'visitor', filters: [] } }))!;
    const segment = (await saved.create(created.project.id, 'segment', { name: 'Pro', definition: { filters: [['is', 'prop:plan', ['pro']]] } }))!;
    const reader = new Analytics({ endpoint: service.endpoint, key: rk });
    expect((await reader.goals()).goals).toEqual([expect.objectContaining({ id: goal.id, name: 'Signup', event: 'signup', filters: [] })]);
    expect((await reader.funnels()).funnels.map((f) => [f.id, f.steps.length, f.window_s])).toEqual([[funnel.id, 2, 86400]]);
    expect((await reader.segments()).segments.map((x) => [x.id, x.filters])).toEqual([[segment.id, [['is', 'prop:plan', ['pro']]]]]);
    const range = { from: hourAgo(), to: inAnHour() };
    expect((await reader.insights({ ...range, metrics: ['visitors', 'conversions'], goal: { id: goal.id } })).rows).toEqual([{ visitors: 2, conversions: 1 }]);
    expect((await reader.insights({ ...range, metrics: ['visitors'], segment: segment.id })).rows).toEqual([{ visitors: 1 }]);
    expect((await reader.funnel({ ...range, id: funnel.id })).steps.map((x) => x.count)).toEqual([2, 1]);
    expect((await reader.funnel({ ...range, id: funnel.id, segment: segment.id })).steps.map((x) => x.count)).toEqual([1, 1]);
    expect((await reader.retention({ ...range, period: 'day', count_by: 'user', start: { id: goal.id } })).cohorts.map((c) => c.size)).toEqual([1]);
    const unknown = await rejection(reader.insights({ ...range, segment: '00000000-0000-4000-8000-000000000000' }));
    expect(unknown).toMatchObject({ code: 'invalid_payload', status: 400 });
  });

  it('annotate (sk_) adds a deploy marker, annotations (rk_) lists the range oldest first, insights with a time dimension carries them; deleteAnnotation removes it', async () => {
    const created = await service.stores.keyStore.createProject({ name: 'sdk-node-annotations' });
    const writer = new Analytics({ endpoint: service.endpoint, key: created.keys.sk });
    const reader = new Analytics({ endpoint: service.endpoint, key: created.keys.rk });
    const deploy = await writer.annotate({ at: new Date(Date.now() - 10 * 60_000), text: 'Deployed v2.4.0', kind: 'deploy' });
    expect(deploy.annotation).toMatchObject({ text: 'Deployed v2.4.0', kind: 'deploy', created_by: `key:${created.keys.sk.split('_')[2]}` });
    const note = await writer.annotate({ text: 'Now' });
    expect(note.annotation.kind).toBe('note');
    expect(Math.abs(Date.parse(note.annotation.at) - Date.now())).toBeLessThan(60_000);
    const listed = await reader.annotations({ from: hourAgo(), to: inAnHour() });
    expect(listed.annotations.map((a) => [a.text, a.kind])).toEqual([['Deployed v2.4.0', 'deploy'], ['Now', 'note']]);
    const series = await reader.insights({ from: hourAgo(), to: inAnHour(), metrics: ['pageviews'], dimensions: ['time:hour'] });
    expect(series.annotations?.map((a) => a.id)).toEqual(listed.annotations.map((a) => a.id));
    const bad = await rejection(writer.annotate({ text: '' }));
    expect(bad).toMatchObject({ code: 'invalid_payload', status: 400 });
    expect(await rejection(reader.annotate({ text: 'x' }))).toMatchObject({ code: 'insufficient_scope', status: 403 });
    await writer.deleteAnnotation(deploy.annotation.id);
    expect(await rejection(writer.deleteAnnotation(deploy.annotation.id))).toMatchObject({ code: 'not_found', status: 404 });
    expect((await reader.annotations({ from: hourAgo(), to: inAnHour() })).annotations.map((a) => a.text)).toEqual(['Now']);
  });

  it('4xx answers are not retried and surface the spec error code, status and details', async () => {
    const client = new Analytics({ endpoint: service.endpoint, key: keys.sk });
    const before = requestsTo('/v1/track');
    const invalid = await rejection(client.track({ event: 'x', properties: { blob: 'x'.repeat(9000) } }));
    expect(invalid).toMatchObject({ name: 'AnalyticsError', code: 'invalid_payload', status: 400 });
    expect((invalid.details as { fieldErrors: Record<string, unknown> }).fieldErrors.properties).toBeDefined();
    expect(requestsTo('/v1/track') - before).toBe(1);

    const wrongKey = await rejection(new Analytics({ endpoint: service.endpoint, key: `${keys.sk.slice(0, -4)}zzzz` }).track({ event: 'x' }));
    expect(wrongKey).toMatchObject({ code: 'invalid_api_key', status: 401 });
    expect(await rejection(new Analytics({ endpoint: service.endpoint, key: keys.rk }).track({ event: 'x' }))).toMatchObject({ code: 'insufficient_scope', status: 403 });
    expect(await rejection(new Analytics({ endpoint: service.endpoint, key: keys.pk }).forget('u-1'))).toMatchObject({ code: 'forget_requires_secret_key', status: 403 });
    expect(await rejection(client.query({ from: hourAgo(), to: inAnHour() }))).toMatchObject({ code: 'insufficient_scope', status: 403 });
    expect(await rejection(new Analytics({ endpoint: service.endpoint, key: keys.rk }).query({ from: 'yesterday', to: inAnHour() }))).toMatchObject({
      code: 'invalid_params',
      status: 400,
    });
    expect(requestsTo('/v1/track') - before).toBe(3); // one attempt each: invalid payload, wrong key, rk_ key
  });

  it('a real 429 from the batch bucket is surfaced with retry_after_s and never retried', async () => {
    const p = await service.stores.keyStore.createProject({ name: 'sdk-node-429', allowed_origins: [] });
    const client = new Analytics({ endpoint: service.endpoint, key: p.keys.sk });
    const before = requestsTo('/v1/batch');
    // The batch bucket holds 20 (refill 5/s): 30 calls at once exhaust it.
    const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => client.batch([{ event: 'burst', anonymous_id: `burst-${i}` }])));
    const limited = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as AnalyticsError);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]).toMatchObject({ code: 'rate_limited', status: 429, retryAfterS: expect.any(Number) });
    expect(requestsTo('/v1/batch') - before).toBe(30);
  });
});

/** A tiny HTTP server answering from a script; records when each request arrived. */
async function scriptedServer(answer: (n: number, req: IncomingMessage, res: ServerResponse) => void) {
  const arrivals: number[] = [];
  const server = await listen((req, res) => {
    arrivals.push(performance.now());
    req.resume();
    req.on('end', () => answer(arrivals.length, req, res));
  });
  return { server, arrivals, endpoint: urlOf(server) };
}
const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

describe('retries', () => {
  const servers: Server[] = [];
  afterAll(() => Promise.all(servers.map(closeServer)));
  const scripted = async (answer: Parameters<typeof scriptedServer>[0]) => {
    const s = await scriptedServer(answer);
    servers.push(s.server);
    return s;
  };

  it('retries a 500 after 100 ms and returns the 202 that follows', async () => {
    const s = await scripted((n, _req, res) => (n === 1 ? json(res, 500, { error: 'internal_error' }) : json(res, 202, { ok: true, event_id: 'e-1' })));
    const res = await new Analytics({ endpoint: s.endpoint, key: 'sk_live_abc_def' }).track({ event: 'retry_me', event_id: 'e-1' });
    expect(res).toEqual({ ok: true, event_id: 'e-1' });
    expect(s.arrivals).toHaveLength(2);
    expect(gaps(s.arrivals)[0]).toBeGreaterThanOrEqual(95);
    expect(gaps(s.arrivals)[0]).toBeLessThan(1100); // loose: the machine may be busy
  });

  it('gives up after 5 attempts spaced 100, 200, 400, 800 ms and surfaces the last 5xx code', async () => {
    const s = await scripted((_n, _req, res) => json(res, 502, { error: 'upstream_failed' }));
    const err = await rejection(new Analytics({ endpoint: s.endpoint, key: 'sk_live_abc_def' }).batch([{ event: 'x' }]));
    expect(err).toMatchObject({ code: 'upstream_failed', status: 502 });
    expect(s.arrivals).toHaveLength(5);
    gaps(s.arrivals).forEach((gap, i) => {
      const wait = [100, 200, 400, 800][i]!;
      expect(gap).toBeGreaterThanOrEqual(wait - 5);
      expect(gap).toBeLessThan(wait + 1000); // loose: the machine may be busy
    });
  });

  it('never retries a 429 and surfaces rate_limited with retryAfterS', async () => {
    const s = await scripted((_n, _req, res) => json(res, 429, { error: 'rate_limited', retry_after_s: 7 }, { 'retry-after': '7' }));
    const err = await rejection(new Analytics({ endpoint: s.endpoint, key: 'sk_live_abc_def' }).track({ event: 'x' }));
    expect(err).toMatchObject({ code: 'rate_limited', status: 429, retryAfterS: 7, body: { error: 'rate_limited', retry_after_s: 7 } });
    expect(s.arrivals).toHaveLength(1);
  });

  it('takes Retry-After from the header when the body lacks retry_after_s; a non-JSON error is unexpected_response', async () => {
    const s = await scripted((n, _req, res) => (n === 1 ? res.writeHead(429, { 'retry-after': '3' }).end('slow down') : res.writeHead(500).end('<html>oops</html>')));
    const client = new Analytics({ endpoint: s.endpoint, key: 'sk_live_abc_def', retryDelaysMs: [] });
    expect(await rejection(client.track({ event: 'x' }))).toMatchObject({ code: 'unexpected_response', status: 429, retryAfterS: 3 });
    expect(await rejection(client.track({ event: 'x' }))).toMatchObject({ code: 'unexpected_response', status: 500 });
    expect(s.arrivals).toHaveLength(2);
  });

  it('retries a refused connection 4 times with the waits, then fails with network_error', async () => {
    const closed = await listen(() => {});
    const endpoint = urlOf(closed);
    await closeServer(closed); // nothing listens on that port now: connection refused
    const attempts: number[] = [];
    const client = new Analytics({
      endpoint,
      key: 'sk_live_abc_def',
      fetch: (input, init) => {
        attempts.push(performance.now());
        return fetch(input, init);
      },
    });
    const err = await rejection(client.track({ event: 'x' }));
    expect(err).toMatchObject({ code: 'network_error', status: 0 });
    expect(err.cause).toBeInstanceOf(Error);
    expect(attempts).toHaveLength(5);
    expect(attempts.at(-1)! - attempts[0]!).toBeGreaterThanOrEqual(1495);
    gaps(attempts).forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual([100, 200, 400, 800][i]! - 5));
  });

  it('a timed-out attempt counts as a network error and is retried', async () => {
    const s = await scripted((n, _req, res) => (n === 1 ? undefined : json(res, 202, { ok: true, event_id: 'late' })));
    const res = await new Analytics({ endpoint: s.endpoint, key: 'sk_live_abc_def', timeoutMs: 150 }).track({ event: 'x' });
    expect(res).toEqual({ ok: true, event_id: 'late' });
    expect(s.arrivals).toHaveLength(2);
  });
});

// Compile-time checks (run by the typecheck target, never called): the types come from libs/schema and stay precise.
export function typeChecks(a: Analytics): void {
  // @ts-expect-error anonymous_id is a string
  void a.track({ event: 'x', anonymous_id: 12 });
  // @ts-expect-error event is required
  void a.track({ anonymous_id: 'a' });
  // @ts-expect-error user_id is required
  void a.identify({ anonymous_id: 'a' });
  // @ts-expect-error metric is count | uniques
  void a.stats({ from: 'x', to: 'y', metric: 'sum' });
  // @ts-expect-error group_by columns are the allowed ones
  void a.stats({ from: 'x', to: 'y', group_by: ['ip_hash'] });
  // @ts-expect-error breakdown is source_medium | source
  void a.sources({ from: 'x', to: 'y', breakdown: 'medium' });
  // @ts-expect-error limit is a number
  void a.query({ from: 'x', to: 'y', limit: '10' });
  // @ts-expect-error metrics are the allowed ones
  void a.insights({ from: 'x', to: 'y', metrics: ['sessions'] });
  // @ts-expect-error an unknown filter operator
  void a.insights({ from: 'x', to: 'y', filters: [['equals', 'country', ['GB']]] });
  // @ts-expect-error time dimensions cannot be filtered
  void a.insights({ from: 'x', to: 'y', filters: [['is', 'time:day', ['x']]] });
  void a.insights({ from: 'x', to: 'y', dimensions: ['prop:plan', 'time:week'], filters: [['or', [['is', 'prop:plan', ['pro']], ['is_not', 'source', ['google']]]]] });
  void a.properties({ from: new Date(), to: new Date(), key: 'plan' });
  // Saved definitions: a goal by id, a saved funnel by id (its steps come with it), a segment id.
  void a.insights({ from: 'x', to: 'y', metrics: ['conversions'], goal: { id: 'g' }, segment: 's' });
  void a.funnel({ from: 'x', to: 'y', id: 'f', breakdown: 'country', segment: 's' });
  void a.funnel({ from: 'x', to: 'y', steps: [{ id: 'g' }, { event: 'signup' }] });
  void a.retention({ from: 'x', to: 'y', period: 'week', start: { id: 'g' }, return: { event: 'x' } });
  // @ts-expect-error a saved funnel brings its steps
  void a.funnel({ from: 'x', to: 'y', id: 'f', steps: [{ event: 'a' }, { event: 'b' }] });
  // @ts-expect-error a funnel takes steps or an id
  void a.funnel({ from: 'x', to: 'y' });
  // @ts-expect-error a segment is an id (a string)
  void a.insights({ from: 'x', to: 'y', segment: 3 });
  void a.goals().then((r) => r.goals.map((g) => [g.id, g.name, g.event, g.filters]));
  void a.funnels().then((r) => r.funnels.map((f) => [f.id, f.steps, f.window_s]));
  void a.segments().then((r) => r.segments.map((x) => [x.id, x.filters]));
  void a.annotate({ text: 'Deployed', kind: 'deploy', at: new Date() });
  void a.annotations({ from: new Date(), to: 'y' }).then((r) => r.annotations.map((x) => [x.id, x.at, x.text, x.kind, x.created_by]));
  // @ts-expect-error kind is note, deploy, campaign or incident
  void a.annotate({ text: 'x', kind: 'release' });
  // @ts-expect-error text is required
  void a.annotate({ kind: 'note' });
  void a.track({ event: 'ok', event_id: null, timestamp: new Date(), properties: { a: 1 } });
  // Misspelt fields are compile errors (the server answers them with `warnings` and ignores them).
  // @ts-expect-error userId is user_id
  void a.track({ event: 'x', userId: 'u-1' });
  // @ts-expect-error props is properties
  void a.track({ event: 'x', props: { plan: 'pro' } });
  // @ts-expect-error anonymousId is anonymous_id
  void a.batch([{ event: 'x', anonymousId: 'a-1' }]);
  // @ts-expect-error groupby is group_by
  void a.stats({ from: 'x', to: 'y', groupby: 'source' });
  // @ts-expect-error userId is user_id
  void a.identify({ anonymous_id: 'a', user_id: 'u', userId: 'u' });
}
