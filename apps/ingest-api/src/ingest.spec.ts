import request from 'supertest';
import type { Express } from 'express';
import { IngestService } from '@analytics/ingest';
import { MemoryRateLimiter } from '@analytics/service-kit';
import { openTestStores, silentLogger, type ContractCheck, answerOf, contractChecked } from '@analytics/testing';
import { routes } from '@analytics/schema';
import { buildApp } from './app';

type Stores = Awaited<ReturnType<typeof openTestStores>>;
const ORIGIN = 'https://shop.example.com';
const UA_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const CALLER_IP = '81.2.69.160'; // a GB address in geoip-lite's data

let stores: Stores;
let app: Express;
let contract: ContractCheck;
let keys: { pk: string; sk: string; rk: string };
let projectId: string;
let other: { pk: string; sk: string; rk: string };
let otherId: string;

beforeAll(async () => {
  stores = await openTestStores();
  const ingest = new IngestService({ store: stores.events, limiter: stores.limiter, rateRules: { track: { ratePerS: 1000, burst: 1000 }, batch: { ratePerS: 5, burst: 3 } } });
  contract = contractChecked(buildApp({ logger: silentLogger, trustProxy: ['loopback'], authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: 'test-secret' }));
  app = contract.app;
  const p = await stores.keyStore.createProject({ name: 'shop', allowed_origins: [ORIGIN] });
  keys = p.keys;
  projectId = p.project.id;
  const o = await stores.keyStore.createProject({ name: 'other', allowed_origins: [ORIGIN] });
  other = o.keys;
  otherId = o.project.id;
});
afterAll(() => stores.close());

const rowsOf = (where: string, params: Record<string, unknown> = {}) =>
  stores.events.select<Record<string, string | null>>(`SELECT *, hex(ip_hash) AS ip_hash_hex FROM ${stores.events.eventsTable} WHERE ${where} ORDER BY timestamp`, params);
const countOf = async (where: string, params: Record<string, unknown> = {}) =>
  Number((await stores.events.select<{ c: string }>(`SELECT count() AS c FROM ${stores.events.eventsTable} WHERE ${where}`, params))[0]!.c);

const track = (body: unknown, key = keys.sk, headers: Record<string, string> = {}) =>
  request(app).post('/v1/track').set('authorization', `Bearer ${key}`).set(headers).send(body as object);

describe('POST /v1/track', () => {
  it('answers 202 { ok, event_id } and has written the enriched row by then', async () => {
    const res = await track(
      { event: 'signup', anonymous_id: 'anon-1', url: 'https://shop.example.com/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=spring', properties: { plan: 'pro' }, source: 'forged', ip_hash: 'forged' },
      keys.pk,
      { origin: ORIGIN, 'user-agent': UA_IPHONE, 'x-forwarded-for': CALLER_IP },
    );
    expect(res.status).toBe(202);
    // The forged server-computed fields are ignored (the spec), and the answer says so (issue 50, docs/api/errors.md).
    expect(res.body).toEqual({ ok: true, event_id: expect.any(String), warnings: ['field source is computed by the server; ignored', 'field ip_hash is computed by the server; ignored'] });
    const [row] = await rowsOf('event_id = {id:String}', { id: res.body.event_id });
    expect(row).toMatchObject({
      project_id: projectId,
      event_name: 'signup',
      anonymous_id: 'anon-1',
      user_id: null,
      source: 'newsletter',
      medium: 'email',
      campaign: 'spring',
      source_confidence: 'high',
      source_rule_id: 'utm_source',
      channel: 'email',
      country: 'GB',
      device_type: 'mobile',
      browser: 'Mobile Safari',
      os: 'iOS',
      path: '/pricing',
      properties: '{"plan":"pro"}',
    });
    expect(row!.session_id).toMatch(/^anon-1-\d+$/);
    expect(row!.ip_hash_hex).toMatch(/^[0-9A-F]{32}$/);
    expect(JSON.stringify(row)).not.toContain(CALLER_IP);
  });

  it('stores the channel beside the spec\'s source and medium: an AI assistant referral keeps rule 13\'s slug', async () => {
    const cases = [
      { referrer: 'https://chatgpt.com/', url: 'https://shop.example.com/', channel: 'ai_assistant', medium: 'referral' },
      { url: 'https://shop.example.com/?utm_source=perplexity.ai', channel: 'ai_assistant', medium: 'referral' },
      { url: 'https://shop.example.com/?utm_source=google&utm_medium=cpc', channel: 'paid_search', medium: 'paid' },
      { referrer: 'https://www.bing.com/', url: 'https://shop.example.com/', channel: 'organic_search', medium: 'organic' },
    ];
    for (const { channel, medium, ...input } of cases) {
      const res = await track({ event: 'channel_probe', anonymous_id: 'anon-ch', ...input });
      const [row] = await rowsOf('event_id = {id:String}', { id: res.body.event_id });
      expect({ input, channel: row!.channel, medium: row!.medium }).toEqual({ input, channel, medium });
    }
  });

  it('fills defaults: event_id, timestamp at arrival, anonymous_id when neither id is sent, session bucket', async () => {
    const before = Date.now();
    const res = await track({ event: 'defaults_probe' });
    expect(res.status).toBe(202);
    const [row] = await rowsOf('event_id = {id:String}', { id: res.body.event_id });
    expect(row!.anonymous_id).toMatch(/^[0-9a-f-]{36}$/);
    const ts = Date.parse(`${row!.timestamp!.replace(' ', 'T')}Z`);
    expect(ts).toBeGreaterThanOrEqual(before - 5);
    expect(ts).toBeLessThanOrEqual(Date.now() + 5);
    expect(row!.session_id).toBe(`${row!.anonymous_id}-${Math.floor(ts / 1_800_000)}`);
    expect(row!.source_rule_id).toBe('direct');
  });

  it('keeps a client event_id, timestamp, session_id and user_id; same event_id twice gives two rows', async () => {
    const body = { event: 'dup', event_id: 'evt-dup-1', timestamp: '2026-03-01T10:00:00Z', user_id: 'user-9', session_id: 'sess-1' };
    expect((await track(body)).status).toBe(202);
    expect((await track(body)).status).toBe(202);
    const rows = await rowsOf('event_id = {id:String}', { id: 'evt-dup-1' });
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ timestamp: '2026-03-01 10:00:00.000', user_id: 'user-9', session_id: 'sess-1', anonymous_id: '' });
  });

  it('gives the same ip_hash to the same IP on the same day and a different one to another IP', async () => {
    const a = await track({ event: 'ip1' }, keys.sk, { 'x-forwarded-for': '203.0.113.7' });
    const b = await track({ event: 'ip2' }, keys.sk, { 'x-forwarded-for': '203.0.113.7' });
    const c = await track({ event: 'ip3' }, keys.sk, { 'x-forwarded-for': '203.0.113.8' });
    const hashes = await Promise.all([a, b, c].map(async (r) => (await rowsOf('event_id = {id:String}', { id: r.body.event_id }))[0]!.ip_hash_hex));
    expect(hashes[0]).toBe(hashes[1]);
    expect(hashes[0]).not.toBe(hashes[2]);
  });

  it.each([
    ['event missing', {}],
    ['properties over 8 KB', { event: 'x', properties: { blob: 'x'.repeat(9000) } }],
    ['malformed url', { event: 'x', url: 'nope' }],
    ['over-long event name', { event: 'e'.repeat(129) }],
    ['wrong type', { event: 'x', anonymous_id: 12 }],
  ])('rejects %s with 400 invalid_payload and details, writing nothing', async (_name, body) => {
    const before = await countOf('project_id = {p:UUID}', { p: projectId });
    const res = await track(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_payload');
    expect(res.body.details.fieldErrors).toBeDefined();
    expect(await countOf('project_id = {p:UUID}', { p: projectId })).toBe(before);
  });

  it('stores a lone surrogate escape as U+FFFD instead of failing the INSERT it shares with other requests', async () => {
    const lone = request(app).post('/v1/batch').set('authorization', `Bearer ${keys.sk}`).set('content-type', 'application/json')
      .send('{"events":[{"event":"lone\\ud800","event_id":"lone-1","user_id":"\\udc00"}]}');
    const [res, other] = await Promise.all([lone, track({ event: 'same_group', event_id: 'lone-2' })]);
    expect([res.status, other.status]).toEqual([202, 202]);
    const [row] = await rowsOf('event_id = {id:String}', { id: 'lone-1' });
    expect(row).toMatchObject({ event_name: 'lone\uFFFD', user_id: '\uFFFD' });
  });

  it('rejects malformed JSON with 400 invalid_payload', async () => {
    const res = await request(app).post('/v1/track').set('authorization', `Bearer ${keys.sk}`).set('content-type', 'application/json').send('{"event":');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_payload');
  });
});

describe('authentication', () => {
  const swapKind = (key: string, kind: string) => `${kind}${key.slice(2)}`;
  it.each([
    ['no Authorization header', undefined, 401, 'missing_bearer_token'],
    ['a non-bearer scheme', 'Basic abc', 401, 'missing_bearer_token'],
    ['a malformed key', 'Bearer not-a-key', 401, 'malformed_api_key'],
    ['an unknown key', 'Bearer sk_live_AAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB', 401, 'invalid_api_key'],
  ])('answers %s (%s) with %i %s', async (_n, header, status, code) => {
    const req = request(app).post('/v1/track');
    if (header) req.set('authorization', header);
    const res = await req.send({ event: 'x' });
    expect(res.status).toBe(status);
    expect(res.body.error).toBe(code);
  });

  it('rejects a wrong secret with invalid_api_key', async () => {
    const res = await track({ event: 'x' }, keys.sk.slice(0, -4) + 'ZZZZ');
    expect(res.body.error).toBe('invalid_api_key');
  });

  it('answers key_kind_mismatch when an sk key is presented as pk', async () => {
    const res = await track({ event: 'x' }, swapKind(keys.sk, 'pk'), { origin: ORIGIN });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('key_kind_mismatch');
  });

  it('rejects rk keys on writing endpoints with insufficient_scope', async () => {
    const res = await track({ event: 'x' }, keys.rk);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('insufficient_scope');
  });

  it('checks the Origin of pk keys against allowed_origins', async () => {
    expect((await track({ event: 'x' }, keys.pk)).body.error).toBe('origin_not_allowed');
    expect((await track({ event: 'x' }, keys.pk, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await track({ event: 'x' }, keys.pk, { origin: ORIGIN })).status).toBe(202);
  });

  it('stops accepting a revoked key once its cache entry is dropped', async () => {
    const minted = await stores.keyStore.createKey(projectId, 'sk');
    expect((await track({ event: 'x' }, minted!.key)).status).toBe(202);
    await stores.keyStore.revokeKey(minted!.prefix);
    stores.authenticator.invalidateKey(minted!.prefix);
    expect((await track({ event: 'x' }, minted!.key)).body.error).toBe('invalid_api_key');
  });
});

describe('POST /v1/batch', () => {
  const batch = (events: unknown[], key = keys.sk) => request(app).post('/v1/batch').set('authorization', `Bearer ${key}`).send({ events });

  it('writes every event and answers 202 { ok, count }', async () => {
    const events = Array.from({ length: 1000 }, (_, i) => ({ event: 'bulk', anonymous_id: `b-${i}`, properties: { i } }));
    const res = await batch(events);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ ok: true, count: 1000 });
    expect(await countOf("project_id = {p:UUID} AND event_name = 'bulk'", { p: projectId })).toBe(1000);
  });

  it.each([
    ['an empty batch', []],
    ['1001 events', Array.from({ length: 1001 }, () => ({ event: 'over' }))],
    ['one bad element', [{ event: 'half_ok' }, { event: '' }]],
  ])('rejects %s with 400 invalid_payload and writes nothing', async (_n, events) => {
    const before = await countOf('project_id = {p:UUID}', { p: projectId });
    const res = await batch(events);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_payload');
    expect(await countOf('project_id = {p:UUID}', { p: projectId })).toBe(before);
  });

  it('answers a batch of 1000 invalid events with its first 50 issues, 16 KB of details at most, saying the rest were cut', async () => {
    const bad = { event: 'x'.repeat(200), event_id: 1, anonymous_id: 2, user_id: 3, session_id: 4, url: 'nope', path: 5, referrer: 6, properties: 7, timestamp: 'soon' };
    const res = await batch(Array.from({ length: 1000 }, () => bad));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_payload', details: { truncated: true, fieldErrors: { events: expect.any(Array) } } });
    expect(res.body.details.issues).toHaveLength(50);
    expect(Buffer.byteLength(JSON.stringify(res.body.details))).toBeLessThanOrEqual(16 * 1024);
  });

  it('rate limits per project with 429, Retry-After and retry_after_s; other projects keep their own bucket', async () => {
    // The buckets' clock stands still here: on a slow machine each batch took long enough to refill the bucket it used.
    const ingest = new IngestService({ store: stores.events, limiter: new MemoryRateLimiter(() => 0), rateRules: { track: { ratePerS: 1000, burst: 1000 }, batch: { ratePerS: 5, burst: 3 } } });
    const frozen = contractChecked(buildApp({ logger: silentLogger, trustProxy: ['loopback'], authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: 'test-secret' }));
    const frozenBatch = (events: unknown[], key = keys.sk) => request(frozen.app).post('/v1/batch').set('authorization', `Bearer ${key}`).send({ events });
    let limited: request.Response | undefined;
    for (let i = 0; i < 10 && !limited; i++) {
      const r = await frozenBatch([{ event: 'rl' }]);
      if (r.status === 429) limited = r;
    }
    expect(limited).toBeDefined();
    expect(limited!.body).toEqual({ error: 'rate_limited', retry_after_s: expect.any(Number) });
    expect(Number(limited!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await frozenBatch([{ event: 'rl' }], other.sk)).status).toBe(202);
    expect(frozen.violations).toEqual([]);
  });
});

describe('POST /v1/batch spread over month partitions', () => {
  // A bucket of its own on a frozen clock: burst 5, no refill during the test.
  const spreadApp = () => {
    const ingest = new IngestService({ store: stores.events, limiter: new MemoryRateLimiter(() => 0), rateRules: { track: { ratePerS: 1, burst: 1 }, batch: { ratePerS: 0.001, burst: 5 } } });
    return buildApp({ logger: silentLogger, authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: 'test-secret' });
  };
  const months = (n: number, year = 2004) => Array.from({ length: n }, (_, i) => ({ event: 'old', timestamp: new Date(Date.UTC(year, i, 10)).toISOString() }));

  it('counts each month outside the live ones as a batch of its own against the bucket, at most its burst', async () => {
    const spread = spreadApp();
    const send = (events: unknown[]) => request(spread).post('/v1/batch').set('authorization', `Bearer ${keys.sk}`).send({ events });
    expect((await send([{ event: 'now' }, { event: 'now' }])).status).toBe(202); // live: 1 token, 4 left
    expect((await send(months(3))).status).toBe(202); // 3 old months: 3 tokens, 1 left
    const refused = await send(months(2));
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('rate_limited');
    expect((await send(months(1))).status).toBe(202); // one old month costs what a live batch costs
  });

  // 250 months: past ClickHouse's default of 100 partitions per INSERT, which the writer lifts (each month is a part).
  it('admits a batch spread over 250 months once the bucket is full (it costs the burst), and stores it whole', async () => {
    const before = await countOf("project_id = {p:UUID} AND event_name = 'spread'", { p: otherId });
    const events = Array.from({ length: 250 }, (_, i) => ({ event: 'spread', timestamp: new Date(Date.UTC(2000, i, 15)).toISOString() }));
    const send = () => request(spreadApp()).post('/v1/batch').set('authorization', `Bearer ${other.sk}`).send({ events });
    expect((await send()).status).toBe(202);
    expect(await countOf("project_id = {p:UUID} AND event_name = 'spread'", { p: otherId })).toBe(before + 250);
  });
});

describe('POST /v1/identify', () => {
  it('stores a $identify event with traits as properties and leaves earlier events alone', async () => {
    await track({ event: 'before_login', anonymous_id: 'anon-id-1' });
    const res = await request(app).post('/v1/identify').set('authorization', `Bearer ${keys.sk}`).send({ anonymous_id: 'anon-id-1', user_id: 'u-1', traits: { plan: 'team' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    const rows = await rowsOf("anonymous_id = 'anon-id-1'");
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => [r.event_name, r.user_id])).toEqual(expect.arrayContaining([['before_login', null], ['$identify', 'u-1']]));
    expect(rows.find((r) => r.event_name === '$identify')!.properties).toBe('{"plan":"team"}');
  });

  it('requires anonymous_id and user_id', async () => {
    const res = await request(app).post('/v1/identify').set('authorization', `Bearer ${keys.sk}`).send({ user_id: 'u' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_payload');
  });
});

describe('POST /v1/forget', () => {
  const forget = (key: string, body: unknown) => request(app).post('/v1/forget').set('authorization', `Bearer ${key}`).set('origin', ORIGIN).send(body as object);

  it('refuses pk keys with forget_requires_secret_key and rk keys with insufficient_scope', async () => {
    expect((await forget(keys.pk, { user_id: 'u' })).body.error).toBe('forget_requires_secret_key');
    expect((await forget(keys.rk, { user_id: 'u' })).body.error).toBe('insufficient_scope');
    expect((await forget(keys.sk, { user_id: '' })).body.error).toBe('invalid_payload');
  });

  it('queues deletion of the user in this project only; anonymous events stay', async () => {
    await track({ event: 'anon_before', anonymous_id: 'fa-1' });
    await track({ event: 'mine', anonymous_id: 'fa-1', user_id: 'forget-me' });
    await track({ event: 'theirs', user_id: 'forget-me' }, other.sk);
    const res = await forget(keys.sk, { user_id: 'forget-me' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ ok: true, queued: true });
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && (await countOf("project_id = {p:UUID} AND user_id = 'forget-me'", { p: projectId })) > 0) {
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(await countOf("project_id = {p:UUID} AND user_id = 'forget-me'", { p: projectId })).toBe(0);
    expect(await countOf("project_id = {p:UUID} AND user_id = 'forget-me'", { p: otherId })).toBe(1);
    expect(await countOf("project_id = {p:UUID} AND anonymous_id = 'fa-1'", { p: projectId })).toBe(1);
  });
});

describe('service kit behaviour', () => {
  it('answers unknown routes with 404 not_found, sets no cookies, and answers CORS preflight', async () => {
    const res = await request(app).get('/v1/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found' });
    const pre = await request(app).options('/v1/track').set('origin', ORIGIN).set('access-control-request-method', 'POST').set('access-control-request-headers', 'authorization,content-type');
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBeDefined();
    const ok = await track({ event: 'x' });
    expect(ok.headers['set-cookie']).toBeUndefined();
  });
});

describe('the contract (libs/schema API_ROUTES)', () => {
  it("parses every answer of this suite with its route's response schema, with only the error codes the route declares", () => {
    expect(contract.violations).toEqual([]);
    expect([...contract.checked.keys()]).toEqual(expect.arrayContaining([answerOf(routes.track, 202), answerOf(routes.batch, 202), answerOf(routes.identify, 200), answerOf(routes.forget, 202), answerOf(routes.track, 400), answerOf(routes.track, 401), answerOf(routes.forget, 403)]));
  });
});
