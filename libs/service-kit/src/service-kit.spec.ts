import { gzipSync } from 'node:zlib';
import { type Request, Router } from 'express';
import request from 'supertest';
import { ApiError, UpstreamUnavailableError } from '@analytics/schema';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { createServiceApp, logRouteAs } from './app';
import { ByteBudget } from './byte-budget';
import { MAX_BODY_BYTES, bodyShareOf, readJsonBody } from './json-body';
import { redactPath } from './redact';
import { isUnreachable, toApiError } from './errors.middleware';
import { createLogger } from './logger';
import { MemoryRateLimiter } from './rate-limiter';

describe('token bucket', () => {
  it('allows the burst, then refills at the rate, and says when to retry', () => {
    let now = 0;
    const limiter = new MemoryRateLimiter(() => now);
    const rule = { ratePerS: 5, burst: 20 };
    for (let i = 0; i < 20; i++) expect(limiter.takeSync('p:batch', rule).allowed).toBe(true);
    expect(limiter.takeSync('p:batch', rule)).toEqual({ allowed: false, retryAfterS: 1 });
    expect(limiter.takeSync('q:batch', rule).allowed).toBe(true);
    now += 400; // 2 tokens back
    expect(limiter.takeSync('p:batch', rule).allowed).toBe(true);
    expect(limiter.takeSync('p:batch', rule).allowed).toBe(true);
    expect(limiter.takeSync('p:batch', rule).allowed).toBe(false);
    now += 100_000;
    for (let i = 0; i < 20; i++) expect(limiter.takeSync('p:batch', rule).allowed).toBe(true);
    expect(limiter.takeSync('p:batch', rule).allowed).toBe(false);
  });
});

describe('errors', () => {
  it('maps unreachable stores to upstream_failed and the rest to internal_error', () => {
    const refused = Object.assign(new Error('connect'), { code: 'ECONNREFUSED' });
    expect(isUnreachable(new Error('wrapped', { cause: refused }))).toBe(true);
    expect(toApiError(refused).code).toBe('upstream_failed');
    expect(toApiError(new Error('boom')).code).toBe('internal_error');
    expect(toApiError(new ApiError('not_found')).code).toBe('not_found');
  });

  it('maps an UpstreamUnavailableError, thrown or as a cause, to 502 upstream_failed by its class, not by a code string', () => {
    expect(toApiError(new UpstreamUnavailableError('event store', new Error('socket hang up'))).code).toBe('upstream_failed');
    expect(toApiError(new Error('wrapped', { cause: new UpstreamUnavailableError('key store', undefined) })).code).toBe('upstream_failed');
    expect(toApiError(Object.assign(new Error('look-alike'), { code: 'UPSTREAM_UNREACHABLE' })).code).toBe('internal_error');
  });

  it('renders { error, ...extra } with the status, 500 without leaking the message, and Retry-After on 429', async () => {
    const router = Router();
    router.get('/v1/boom', () => {
      throw new Error('secret internals');
    });
    router.get('/v1/limited', () => {
      throw new ApiError('rate_limited', { retry_after_s: 3 });
    });
    router.post('/v1/echo', async (req, res) => {
      res.json(await readJsonBody(req, res));
    });
    const app = createServiceApp({ name: 'kit', logger: createLogger({ level: 'silent' }), routers: [router] });
    const boom = await request(app).get('/v1/boom');
    expect(boom.status).toBe(500);
    expect(boom.body).toEqual({ error: 'internal_error' });
    const limited = await request(app).get('/v1/limited');
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('3');
    expect((await request(app).get('/healthz')).body).toEqual({ ok: true, service: 'kit' });
    expect((await request(app).get('/healthz')).headers['x-service']).toBe('kit');
    expect(boom.headers['x-service']).toBe('kit');
    expect((await request(app).get('/nowhere')).headers['x-service']).toBe('kit');
    const plain = await request(app).post('/v1/echo').set('content-type', 'text/plain').send('{"a":1}');
    expect(plain.body).toEqual({ a: 1 });
    const big = await request(app).post('/v1/echo').set('content-type', 'application/json').send(`{"a":"${'x'.repeat(17 * 1024 * 1024)}"}`);
    expect(big.status).toBe(413);
    expect(big.body.error).toBe('payload_too_large');
  });
});

describe('bodies, methods and probes', () => {
  const router = Router();
  let parsed = 0;
  // Stands in for a credential check: only `Bearer ok` gets to read the body.
  router.post('/v1/echo', (req, _res, next) => next(req.get('authorization') === 'Bearer ok' ? undefined : new ApiError('missing_bearer_token')), async (req, res) => {
    const body = await readJsonBody(req, res);
    parsed++;
    res.json(body);
  });
  router.get('/v1/read', (_req, res) => {
    res.json({ ok: true });
  });
  const app = createServiceApp({ name: 'kit', logger: createLogger({ level: 'silent' }), routers: [router] });
  const echo = () => request(app).post('/v1/echo').set('authorization', 'Bearer ok');

  it('answers a refused request before its body is read: a 17 MB malformed body gets the 401, not 413 or 400', async () => {
    const res = await request(app).post('/v1/echo').set('content-type', 'application/json').send(`{"a":"${'x'.repeat(17 * 1024 * 1024)}`);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('missing_bearer_token');
    expect(parsed).toBe(0);
  });

  it('says how to send the body when Content-Type is missing or not JSON, and when there is no body', async () => {
    const untyped = await echo().set('content-type', '').send(Buffer.from('{"event":"x"}'));
    expect(untyped.status).toBe(400);
    expect(untyped.body.error).toBe('invalid_payload');
    expect(untyped.body.details.formErrors[0]).toMatch(/Content-Type: application\/json.*got no Content-Type/);
    const form = await echo().type('form').send('event=x');
    expect(form.body.details.formErrors[0]).toContain('got Content-Type: application/x-www-form-urlencoded');
    const empty = await echo();
    expect(empty.status).toBe(400);
    expect(empty.body.details.formErrors[0]).toContain('no body');
  });

  it('answers an unknown Content-Encoding with 415 unsupported_encoding', async () => {
    const unknown = await echo().set('content-type', 'application/json').set('content-encoding', 'snappy').send('{"a":1}');
    expect(unknown.status).toBe(415);
    expect(unknown.body).toMatchObject({ error: 'unsupported_encoding', details: { formErrors: [expect.stringContaining('gzip')] } });
  });

  it('answers a known path called with another method with 405 method_not_allowed and Allow', async () => {
    const wrong = await request(app).get('/v1/echo');
    expect(wrong.status).toBe(405);
    expect(wrong.headers['allow']).toBe('POST');
    expect(wrong.body).toEqual({ error: 'method_not_allowed', allowed: ['POST'] });
    const del = await request(app).delete('/v1/read');
    expect(del.status).toBe(405);
    expect(del.headers['allow']).toBe('GET, HEAD');
    expect((await request(app).get('/v1/nowhere')).status).toBe(404);
  });

  it('keeps /healthz store-free and answers /readyz 200 only when every store answers in time', async () => {
    const make = (ready: Record<string, () => Promise<unknown>>) =>
      createServiceApp({ name: 'kit', logger: createLogger({ level: 'silent' }), routers: [], ready, readyTimeoutMs: 200 });
    const up = await request(make({ event_store: async () => 1, key_store: async () => 1 })).get('/readyz');
    expect(up.status).toBe(200);
    expect(up.body).toEqual({ ok: true, service: 'kit', checks: { event_store: 'ok', key_store: 'ok' } });
    const down = make({ event_store: async () => 1, key_store: () => Promise.reject(new Error('ECONNREFUSED')) });
    const refused = await request(down).get('/readyz');
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ error: 'not_ready', checks: { event_store: 'ok', key_store: 'failed' } });
    expect((await request(down).get('/healthz')).status).toBe(200);
    const silent = await request(make({ event_store: () => new Promise(() => undefined) })).get('/readyz');
    expect(silent.status).toBe(503);
    expect(silent.body.checks).toEqual({ event_store: 'timeout' });
  });
});

describe('redactPath', () => {
  it.each([
    ['/admin/keys/sk_live_AbC123_SeCrEt0123456789', '/admin/keys/sk_live_AbC123_[redacted]'],
    ['/admin/keys/sk%5Flive%5FAbC123%5FSeCrEt0123456789', '/admin/keys/sk_live_AbC123_[redacted]'],
    ['/v1/query?key=rk_test_P1_S2', '/v1/query'],
    ['/admin/keys/AbC123', '/admin/keys/AbC123'],
    ['/mcp_at_AbC123dEf456/x', '/mcp_at_[redacted]/x'],
    ['/x/mcp%5Frt%5FAbC123dEf456', '/x/mcp_rt_[redacted]'],
    ['/share/shr_AbC123dEf456_SeCrEt0123456789', '/share/shr_AbC123dEf456_[redacted]'],
    ['/admin/projects/0b6f8f9e-1c1e-4f0a-9d6a-3a4f5e6d7c8b', '/admin/projects/0b6f8f9e-1c1e-4f0a-9d6a-3a4f5e6d7c8b'],
  ])('logs %s as %s', (path, logged) => expect(redactPath(path)).toBe(logged));
});

describe('request log', () => {
  const collected = () => {
    const lines: Array<Record<string, unknown>> = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    return { lines, logger: createLogger({ level: 'debug', format: 'json', destination }) };
  };

  it('logs the path a request arrived with, even when a router mounted at it answered, and a route pattern when one was set', async () => {
    const { lines, logger } = collected();
    const mounted = Router();
    mounted.use('/mounted', Router().get('/', (_req, res) => void res.json({ ok: true })));
    const patterned = Router().get('/items/:id', (_req, res) => {
      logRouteAs(res, '/items/:id');
      res.json({ ok: true });
    });
    const app = createServiceApp({ name: 't', logger, routers: [mounted, patterned] });
    await request(app).get('/mounted?code=secret-code');
    await request(app).get('/items/secret-id?x=1');
    await new Promise((r) => setImmediate(r));
    expect(lines.filter((l) => l['msg'] === 'request').map((l) => l['path'])).toEqual(['/mounted', '/items/:id']);
    expect(JSON.stringify(lines)).not.toMatch(/secret/);
  });
});

describe('body byte budget', () => {
  it('grants in arrival order, makes later requests wait for released bytes, and gives up after the wait', async () => {
    const budget = new ByteBudget(100);
    const a = await budget.acquire(60, 50);
    expect(budget.inUse).toBe(60);
    const b = budget.acquire(60, 1_000);
    const small = budget.acquire(10, 1_000); // fits: served at once, b's wait holds back no one
    const late = await budget.acquire(90, 20);
    expect(late).toBeNull();
    a!();
    a!(); // releasing twice frees once
    const [gotB, gotSmall] = await Promise.all([b, small]);
    expect(budget.inUse).toBe(70);
    gotB!();
    gotSmall!();
    expect(budget.inUse).toBe(0);
    expect(await budget.acquire(500, 10)).not.toBeNull(); // larger than the whole budget: clamped, still served
  });

  /** A server whose /v1/slow holds its body until `hold()`, and /v1/fast answers its body at once, under `budget`. */
  /** Until `budget` holds `bytes` (a body's bytes count as they arrive: no fixed sleep is long enough on a loaded machine). */
  async function holding(budget: ByteBudget, bytes: number) {
    for (const started = Date.now(); budget.inUse !== bytes && Date.now() - started < 10_000; ) await new Promise((r) => setTimeout(r, 10));
    expect(budget.inUse).toBe(bytes);
  }

  async function budgetServer(budget: ByteBudget, times = { waitMs: 100, readTimeoutMs: 10_000 }) {
    const router = Router();
    let hold: () => void = () => undefined;
    router.post('/v1/slow', async (req, res) => {
      const body = await readJsonBody(req, res);
      await new Promise<void>((r) => (hold = r));
      res.json(body);
    });
    router.post('/v1/fast', async (req, res) => {
      res.json(await readJsonBody(req, res));
    });
    const app = createServiceApp({ name: 'kit', logger: createLogger({ level: 'silent' }), routers: [router], limits: { body: { budget, ...times } } });
    const http = app.listen(0, '127.0.0.1');
    await new Promise((r) => http.once('listening', r));
    const base = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
    // A ReadableStream body goes out chunked (no Content-Length), which fetch sends only with duplex: 'half'.
    const post = (path: string, body: string | Buffer | ReadableStream, headers: Record<string, string> = {}) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, ...(body instanceof ReadableStream ? { duplex: 'half' } : {}) } as RequestInit);
    const port = (http.address() as { port: number }).port;
    return { post, port, hold: () => hold(), close: () => http.close() };
  }

  it('answers 503 server_busy with Retry-After when a body cannot get its share in time, and serves it once bytes are free', async () => {
    const budget = new ByteBudget(1_000_000);
    const { post, hold, close } = await budgetServer(budget);
    const big = `{"a":"${'x'.repeat(700_000)}"}`;
    try {
      const first = post('/v1/slow', big);
      await holding(budget, big.length);
      const busy = await post('/v1/fast', big);
      expect(busy.status).toBe(503);
      expect(busy.headers.get('retry-after')).toBe('1');
      expect(await busy.json()).toEqual({ error: 'server_busy', retry_after_s: 1 });
      expect((await post('/v1/fast', '{"small":true}')).status).toBe(200); // small bodies still fit beside it
      hold();
      expect((await first).status).toBe(200);
      expect((await post('/v1/fast', big)).status).toBe(200);
    } finally {
      close();
    }
  });

  it('does not count the time a body waited for room against its client: past BODY_READ_TIMEOUT_MS of waiting, it is still read and served', async () => {
    const budget = new ByteBudget(1_000_000);
    const { post, hold, close } = await budgetServer(budget, { waitMs: 5_000, readTimeoutMs: 300 });
    const big = `{"a":"${'x'.repeat(700_000)}"}`;
    try {
      const first = post('/v1/slow', big);
      await holding(budget, big.length);
      const second = post('/v1/fast', big); // no room: its socket is paused while the first holds the budget
      await new Promise((r) => setTimeout(r, 900)); // three read deadlines, all of it waiting on us
      hold();
      expect((await first).status).toBe(200);
      const served = await second;
      expect(served.status).toBe(200);
      expect(((await served.json()) as { a: string }).a).toHaveLength(700_000);
    } finally {
      close();
    }
  });

  it('gives a body still arriving 1 s more per MiB received (up to 3x BODY_READ_TIMEOUT_MS): a steady 4 MiB/s body outlives the bare deadline, a trickle does not', async () => {
    const budget = new ByteBudget(MAX_BODY_BYTES * 2);
    const { post, close } = await budgetServer(budget, { waitMs: 100, readTimeoutMs: 400 });
    /** A chunked JSON body: `chunks` pieces of `bytes` each, one every `everyMs`. */
    const streamed = (chunks: number, bytes: number, everyMs: number) => {
      let sent = 0;
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (sent === 0) controller.enqueue(new TextEncoder().encode('{"a":"'));
          if (sent === chunks) {
            controller.enqueue(new TextEncoder().encode('"}'));
            return controller.close();
          }
          await new Promise((r) => setTimeout(r, everyMs));
          controller.enqueue(new Uint8Array(bytes).fill(120));
          sent++;
        },
      });
    };
    try {
      // 12 x 256 KiB at one every 60 ms: ~0.8 s in all, twice the bare 400 ms, at ~4 MiB/s (allowance 400 + 3,000 ms capped at 1,200).
      const steady = await post('/v1/fast', streamed(12, 256 * 1024, 60));
      expect(steady.status).toBe(200);
      expect(((await steady.json()) as { a: string }).a).toHaveLength(12 * 256 * 1024);
      // 10 bytes every 100 ms never earns a millisecond: cut at ~400 ms.
      const started = performance.now();
      const trickle = await post('/v1/fast', streamed(100, 10, 100));
      expect(trickle.status).toBe(408);
      expect(performance.now() - started).toBeLessThan(1_500);
      expect(budget.inUse).toBe(0);
    } finally {
      close();
    }
  });

  it('reads away the rest of a refused body, so a client that sends all before it reads gets the 413 and not a reset (lingering close)', async () => {
    const budget = new ByteBudget(MAX_BODY_BYTES * 2);
    const { port, close } = await budgetServer(budget);
    const over = Buffer.alloc(MAX_BODY_BYTES + 1024 * 1024, 'x'); // refused by its Content-Length, before any byte is read
    /** A keep-alive client (as fetch, curl and browsers are) that writes its whole request, then reads: what it got, and whether its writes failed. */
    const sendAllThenRead = () =>
      new Promise<{ answer: string; writeError?: string }>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        let answer = '';
        let writeError: string | undefined;
        socket.on('data', (d) => (answer += d.toString('latin1')));
        socket.on('error', (e: NodeJS.ErrnoException) => (writeError = e.code));
        socket.on('close', () => resolve({ answer, writeError }));
        socket.write(`POST /v1/fast HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${over.length}\r\n\r\n`);
        socket.end(over);
      });
    try {
      for (let i = 0; i < 3; i++) {
        const { answer, writeError } = await sendAllThenRead();
        expect({ writeError, status: answer.slice(0, 12) }).toEqual({ writeError: undefined, status: 'HTTP/1.1 413' });
        expect(answer).toContain('{"error":"payload_too_large"}');
      }
      expect(budget.inUse).toBe(0);
    } finally {
      close();
    }
  });

  it('reads a chunked body (no Content-Length) sent as text/plain, as sendBeacon sends, and releases its bytes', async () => {
    const budget = new ByteBudget(1_000_000);
    const { post, close } = await budgetServer(budget);
    try {
      const parts = ['{"chunked":', 'true}'];
      const stream = new ReadableStream({ pull: (c) => (parts.length ? c.enqueue(new TextEncoder().encode(parts.shift())) : c.close()) });
      const chunked = await post('/v1/fast', stream, { 'content-type': 'text/plain' });
      expect(chunked.status).toBe(200);
      expect(await chunked.json()).toEqual({ chunked: true });
      expect(budget.inUse).toBe(0);
    } finally {
      close();
    }
  });

  it('counts a compressed body on the wire and as it inflates, and refuses one inflating past the largest body with 413', async () => {
    const budget = new ByteBudget(MAX_BODY_BYTES + 4 * 1024 * 1024);
    const { post, hold, close } = await budgetServer(budget);
    const gz = gzipSync('{"a":1}');
    const gzip = { 'content-encoding': 'gzip' };
    try {
      const first = post('/v1/slow', gz, gzip);
      await holding(budget, gz.length + '{"a":1}'.length); // its bytes off the wire and what they inflated to
      expect((await post('/v1/fast', gz, gzip)).status).toBe(200);
      const bomb = gzipSync(Buffer.alloc(MAX_BODY_BYTES + 1, ' ')); // 16 KB on the wire
      const refused = await post('/v1/fast', bomb, gzip);
      expect(refused.status).toBe(413);
      expect(await refused.json()).toEqual({ error: 'payload_too_large' });
      hold();
      expect(await (await first).json()).toEqual({ a: 1 });
      await new Promise((r) => setTimeout(r, 50));
      expect(budget.inUse).toBe(0);
    } finally {
      close();
    }
  });

  it("shares: no holder (a project, an address) holds more than its share, and one over it never holds back another's take", async () => {
    const budget = new ByteBudget(100, 40);
    const a = await budget.acquire(30, 0, ['project:A', 'address:1']);
    expect(a).not.toBeNull();
    const moreOfA = budget.acquire(20, 1_000, ['project:A', 'address:2']); // A would hold 50 > 40: waits
    expect(await budget.acquire(20, 0, ['project:B', 'address:1'])).toBeNull(); // address 1 would hold 50
    const b = await budget.acquire(20, 0, ['project:B', 'address:2']); // served at once beside A's waiter
    expect(b).not.toBeNull();
    expect([budget.inUse, budget.heldBy('project:A'), budget.heldBy('project:B'), budget.heldBy('address:2')]).toEqual([50, 30, 20, 20]);
    a!();
    const gotA = await moreOfA;
    expect(gotA).not.toBeNull();
    expect([budget.heldBy('project:A'), budget.heldBy('address:1'), budget.heldBy('address:2')]).toEqual([20, 0, 40]);
    gotA!();
    b!();
    expect(budget.inUse).toBe(0);
    expect(budget.heldBy('address:2')).toBe(0);
    expect(await budget.acquire(500, 10, ['project:A'])).not.toBeNull(); // larger than the share: clamped, still served alone
    expect(budget.heldBy('project:A')).toBe(40);
  });

  it('the share of a body budget: a quarter, never under the largest body, never over the whole', () => {
    expect(bodyShareOf(32 * 1024 * 1024)).toBe(MAX_BODY_BYTES);
    expect(bodyShareOf(256 * 1024 * 1024)).toBe(64 * 1024 * 1024);
    expect(bodyShareOf(4 * 1024 * 1024)).toBe(4 * 1024 * 1024);
  });
});

describe('failed authentications per client IP, and per existing key prefix', () => {
  const LIMITS = { perIp: { ratePerS: 1, burst: 3 }, perKey: { ratePerS: 1, burst: 2 }, immediateRefusals: { ratePerS: 1, burst: 2 }, maxHeld: 100 };
  // Keys `<prefix>:<secret>`; the prefixes k1 and k2 exist (what the authenticator's known set answers in the apps).
  const SECRETS: Record<string, string> = { k1: 'right', k2: 'right' };
  const budgetKeyOf = (req: Request) => {
    const prefix = /^Bearer (\w+):/.exec(req.get('authorization') ?? '')?.[1];
    return prefix !== undefined && prefix in SECRETS ? prefix : undefined;
  };
  const build = (clock: () => number, limits = LIMITS) => {
    let handled = 0;
    const router = Router();
    router.get('/v1/thing', (req, res, next) => {
      handled++;
      const [prefix, secret] = (req.get('authorization') ?? '').replace(/^Bearer /, '').split(':');
      if (req.get('authorization') === 'Bearer ok' || (prefix !== undefined && Object.hasOwn(SECRETS, prefix) && SECRETS[prefix] === secret)) return res.json({ ok: true });
      res.set('WWW-Authenticate', 'Bearer error="invalid_token"');
      next(new ApiError('invalid_api_key'));
    });
    const app = createServiceApp({ name: 'kit', logger: createLogger({ level: 'silent' }), trustProxy: ['loopback'], budgetKeyOf, routers: [router], limits: { failedAuth: limits }, clock });
    const get = (ip: string, key: string) => request(app).get('/v1/thing').set('x-forwarded-for', ip).set('authorization', `Bearer ${key}`);
    return { app, get, handled: () => handled };
  };

  it('answers an IP over its budget 429 rate_limited with Retry-After before the route runs; other IPs are unaffected', async () => {
    let now = 1_000_000;
    const { get, handled } = build(() => now);
    for (let i = 0; i < 3; i++) expect((await get('198.51.100.7', 'wrong')).status).toBe(401);
    const before = handled();
    const over = await get('198.51.100.7', 'ok');
    expect(over.status).toBe(429);
    expect(over.headers['retry-after']).toBe('1');
    expect(over.body).toEqual({ error: 'rate_limited', retry_after_s: 1 });
    expect(handled()).toBe(before);
    expect((await get('203.0.113.9', 'ok')).status).toBe(200);
    now += 1_000;
    expect((await get('198.51.100.7', 'ok')).status).toBe(200);
  });

  it('never budgets a loopback peer (this machine, or a proxy not declared in TRUST_PROXY: every client behind it)', async () => {
    const { get } = build(() => 1_000_000);
    for (let i = 0; i < 10; i++) expect((await get('127.0.0.1', 'wrong')).status).toBe(401);
    expect((await get('127.0.0.1', 'ok')).status).toBe(200);
  });

  it("holds the 429s of an IP that keeps sending without waiting for their Retry-After, after the first few", async () => {
    const { app } = build(Date.now);
    const http = app.listen(0, '127.0.0.1');
    await new Promise((r) => http.once('listening', r));
    const url = `http://127.0.0.1:${(http.address() as { port: number }).port}/v1/thing`;
    const get = (key: string) => fetch(url, { headers: { 'x-forwarded-for': '198.51.100.8', authorization: `Bearer ${key}` } }).then(async (r) => (await r.arrayBuffer(), r.status));
    try {
      for (let i = 0; i < 3; i++) await get('wrong');
      let t = Date.now();
      expect(await get('wrong')).toBe(429);
      expect(Date.now() - t).toBeLessThan(900); // not held: the held ones below take ~1 s
      t = Date.now();
      const flood = await Promise.all(Array.from({ length: 6 }, () => get('wrong').then((s) => [s, Date.now() - t] as const)));
      expect(flood.every(([s]) => s === 429)).toBe(true);
      expect(flood.filter(([, ms]) => ms >= 900).length).toBeGreaterThanOrEqual(4); // past the 2 immediate ones: held ~1 s
    } finally {
      http.close();
    }
  });

  it("charges wrong secrets of an existing prefix to the prefix, from any IP: past its budget they are 429 while the right secret passes and the IPs' budgets are untouched", async () => {
    let now = 1_000_000;
    const { get, handled } = build(() => now);
    expect((await get('198.51.100.1', 'k1:wrong')).status).toBe(401);
    expect((await get('198.51.100.2', 'k1:wrong')).status).toBe(401);
    const over = await get('198.51.100.3', 'k1:wrong');
    expect([over.status, over.body, over.headers['retry-after'], over.headers['www-authenticate']]).toEqual([429, { error: 'rate_limited', retry_after_s: 1 }, '1', undefined]);
    const before = handled();
    expect((await get('198.51.100.3', 'k1:right')).status).toBe(200); // its secret was checked: a key's users are not locked out
    expect(handled()).toBe(before + 1);
    expect((await get('198.51.100.1', 'k2:wrong')).status).toBe(401); // another prefix has its own budget
    // None of those failures was the IPs': each still has its 3 failures of unknown keys before its 429.
    for (let i = 0; i < 3; i++) expect((await get('198.51.100.1', 'wrong')).status).toBe(401);
    expect((await get('198.51.100.1', 'wrong')).status).toBe(429);
    now += 1_000;
    expect((await get('198.51.100.4', 'k1:wrong')).status).toBe(401); // the prefix's budget refills
  });

  it('refuses an IP over its budget (failures of unknown keys) before the route, except a request presenting an existing prefix: the right secret passes, a wrong one is 429', async () => {
    const { get, handled } = build(() => 1_000_000);
    for (let i = 0; i < 3; i++) expect((await get('203.0.113.50', `unknown${i}:secret`)).status).toBe(401);
    const before = handled();
    expect((await get('203.0.113.50', 'ok')).status).toBe(429); // not a key of an existing prefix: refused unseen
    expect((await get('203.0.113.50', 'nope:secret')).status).toBe(429);
    expect(handled()).toBe(before);
    expect((await get('203.0.113.50', 'k1:right')).status).toBe(200); // the colleague behind the same NAT
    const wrong = await get('203.0.113.50', 'k2:wrong');
    expect([wrong.status, wrong.body.error]).toEqual([429, 'rate_limited']);
    // That failure was charged to k2, not to the IP: k2 has one failure left from elsewhere.
    expect((await get('192.0.2.9', 'k2:wrong')).status).toBe(401);
    expect((await get('192.0.2.9', 'k2:wrong')).status).toBe(429);
  });

  it('budgets an existing prefix from a loopback peer too (its right secret always passes, so no one behind a proxy is locked out)', async () => {
    const { get } = build(() => 1_000_000);
    expect((await get('127.0.0.1', 'k1:wrong')).status).toBe(401);
    expect((await get('127.0.0.1', 'k1:wrong')).status).toBe(401);
    expect((await get('127.0.0.1', 'k1:wrong')).status).toBe(429);
    expect((await get('127.0.0.1', 'k1:right')).status).toBe(200);
  });

  it('failed-auth limits given to the app factory keep the budgetKeyOf the app was built with', async () => {
    const { get } = build(() => 1_000_000, { ...LIMITS, perKey: { ratePerS: 1, burst: 1 } });
    expect((await get('198.51.100.20', 'k1:wrong')).status).toBe(401);
    expect((await get('198.51.100.21', 'k1:wrong')).status).toBe(429);
    expect((await get('198.51.100.21', 'wrong')).status).toBe(401); // its IP's budget was not charged
  });
});
