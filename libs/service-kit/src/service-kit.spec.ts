import { Router } from 'express';
import request from 'supertest';
import { z } from 'zod';
import { ApiError } from '@analytics/schema';
import { createServiceApp } from './app';
import { ConfigError, envInt, loadConfig, parseTrustProxy } from './config';
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

describe('config', () => {
  it('reports every problem at once', () => {
    const schema = z.object({ A: envInt(1, 1, 10), B: z.string() });
    expect(() => loadConfig(schema, { A: '99' })).toThrow(ConfigError);
    try {
      loadConfig(schema, { A: '99' });
    } catch (e) {
      expect((e as ConfigError).problems).toHaveLength(2);
    }
    expect(loadConfig(schema, { A: '', B: 'x' })).toEqual({ A: 1, B: 'x' });
  });
  it.each([
    [undefined, false],
    ['false', false],
    ['true', true],
    ['2', 2],
    ['loopback', ['loopback']],
    ['loopback, 10.0.0.0/8', ['loopback', '10.0.0.0/8']],
  ])('parses TRUST_PROXY=%j', (v, out) => expect(parseTrustProxy(v)).toEqual(out));
});

describe('errors', () => {
  it('maps unreachable stores to upstream_failed and the rest to internal_error', () => {
    const refused = Object.assign(new Error('connect'), { code: 'ECONNREFUSED' });
    expect(isUnreachable(new Error('wrapped', { cause: refused }))).toBe(true);
    expect(toApiError(refused).code).toBe('upstream_failed');
    expect(toApiError(new Error('boom')).code).toBe('internal_error');
    expect(toApiError(new ApiError('not_found')).code).toBe('not_found');
  });

  it('renders { error, ...extra } with the status, 500 without leaking the message, and Retry-After on 429', async () => {
    const router = Router();
    router.get('/v1/boom', () => {
      throw new Error('secret internals');
    });
    router.get('/v1/limited', () => {
      throw new ApiError('rate_limited', { retry_after_s: 3 });
    });
    router.post('/v1/echo', (req, res) => {
      res.json(req.body);
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
