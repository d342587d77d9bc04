import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { Express } from 'express';
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { buildFunnel, buildInsights, buildRetention, readTablesOf } from '@analytics/event-store';
import { DETAILS_LIMITS, funnelBodySchema, insightsBodySchema, retentionBodySchema } from '@analytics/schema';
import { BODY_READS, LARGEST_BODIES, MAX_ERROR_ANSWER_BYTES, MAX_EVENT_LOOP_STALL_MS, type Measured, QUERY_READS, SHAPES_FROM, WORST_BODIES, fuzz, measured, queryString } from '@analytics/testing';
import { type ReadService, openReadService, sendBatch } from './test-support/seeded-service';

// Issue 43, "Bounded shapes": every read body and query string, hostile shapes weighted in (huge lists of duplicates,
// thousands of conditions, deep nesting, long strings): never a 500, an error answer of at most 64 KB, and the event
// loop (validation runs on it) never stalled for long. The same over MCP: apps/mcp-gateway/src/mcp-shapes.spec.ts.

const RUNS = Number(process.env.SHAPES_FUZZ_RUNS ?? 30);
const CODES = ['invalid_payload', 'invalid_params', 'invalid_group_by', 'payload_too_large'];

let service: ReadService;
let app: Express;
let rk: string;
let projectId: string;

beforeAll(async () => {
  service = await openReadService();
  app = service.readApp;
  const { keys, project } = await service.stores.keyStore.createProject({ name: 'shapes', allowed_origins: [] });
  rk = keys.rk;
  projectId = project.id;
  await sendBatch(service.ingestApp, keys.sk, [
    { event: '$pageview', anonymous_id: 'a', timestamp: SHAPES_FROM, url: 'https://a.example/pricing', properties: { plan: 'pro' } },
    { event: 'signup', anonymous_id: 'a', timestamp: '2026-03-02T10:00:00Z', url: 'https://a.example/signup', user_id: 'u1' },
  ]);
}, 180_000);
afterAll(() => service?.stores.close());

/** One read with `rk`: a query string (GET) or a JSON body (POST, serialised before the clock starts). */
function send(path: string, options: { body?: unknown; query?: Record<string, string | string[]> }): Promise<Measured> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const req = () => (body === undefined ? request(app).get(`${path}?${queryString(options.query ?? {})}`) : request(app).post(path).set('content-type', 'application/json').send(body));
  return measured(() => req().set('authorization', `Bearer ${rk}`));
}

/** Statuses seen per route: the fuzzing must reach past validation too. */
const statuses = new Map<string, Set<number>>();

/** What any answer to any read must be. */
function expectBounded(what: string, a: Measured): void {
  statuses.set(what, (statuses.get(what) ?? new Set()).add(a.status));
  const seen = { what, status: a.status, error: a.json?.error, bytes: a.bytes, stallMs: Math.round(a.stallMs) };
  expect({ ...seen, ok: [200, 400, 413].includes(a.status) }).toEqual({ ...seen, ok: true });
  if (a.status >= 400) {
    expect(CODES).toContain(a.json?.error);
    expect({ ...seen, bounded: a.bytes <= MAX_ERROR_ANSWER_BYTES }).toEqual({ ...seen, bounded: true });
  }
  expect({ ...seen, quick: a.stallMs <= MAX_EVENT_LOOP_STALL_MS }).toEqual({ ...seen, quick: true });
}

describe('read shapes: the worst bodies measured in issue 43', () => {
  it.each(WORST_BODIES)('%s: a quick 400 invalid_payload whose details fit 16 KB', async (name, path, body) => {
    const a = await send(path, { body });
    expectBounded(name, a);
    expect(a.status).toBe(400);
    expect(a.json).toMatchObject({ error: 'invalid_payload', details: { fieldErrors: expect.any(Object), formErrors: expect.any(Array), issues: expect.any(Array) } });
    expect(Buffer.byteLength(JSON.stringify(a.json?.details))).toBeLessThanOrEqual(DETAILS_LIMITS.bytes);
  });
});

// A ClickHouse server's defaults (the embedded engine takes parameters in-process): max_query_size for the statement,
// http_max_field_value_size for one parameter as @clickhouse/client writes it in the URL, http_max_uri_size for them all.
const SERVER = { queryBytes: 256 * 1024, fieldBytes: 128 * 1024, uriBytes: 1024 * 1024 };
const BUILD = {
  '/v1/insights': (body: unknown) => buildInsights(readTablesOf(service.stores.events), projectId, insightsBodySchema.parse(body)),
  '/v1/funnel': (body: unknown) => buildFunnel(readTablesOf(service.stores.events), projectId, funnelBodySchema.parse(body)),
  '/v1/retention': (body: unknown) => buildRetention(readTablesOf(service.stores.events), projectId, retentionBodySchema.parse(body)),
};

/** The request URL @clickhouse/client sends a ClickHouse server for this statement (to a listener that records it). */
async function urlSent(sql: string, params: Record<string, unknown>): Promise<string> {
  let url = '';
  // Node's own limit on a request head (16 KB) is far below a ClickHouse server's: raised to see the whole URL.
  const server = createServer({ maxHeaderSize: 4 * SERVER.uriBytes }, (req, res) => {
    url = req.url ?? '';
    req.resume();
    req.on('end', () => res.writeHead(500).end('Code: 1. DB::Exception: recorded'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = createClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, log: { level: ClickHouseLogLevel.OFF } });
  await client.query({ query: sql, query_params: params, format: 'JSONEachRow' }).catch(() => undefined);
  await client.close();
  await new Promise((r) => server.close(r));
  return url;
}

describe('read shapes: the largest bodies accepted', () => {
  it.each(LARGEST_BODIES)('%s: answered 200 by the engine, the event loop turning', async (name, path, body) => {
    const a = await send(path, { body });
    expectBounded(name, a);
    expect({ name, status: a.status }).toEqual({ name, status: 200 });
  });

  it.each(LARGEST_BODIES)('%s: its statement and parameters fit a ClickHouse server\'s default limits (no 500 in server mode either)', async (_name, path, body) => {
    const { sql, params } = BUILD[path](body);
    expect(Buffer.byteLength(sql)).toBeLessThan(SERVER.queryBytes);
    const url = await urlSent(sql, params);
    const fields = url.slice(url.indexOf('?') + 1).split('&');
    expect(fields.filter((f) => f.startsWith('param_')).length).toBe(Object.keys(params).length);
    expect(Math.max(...fields.map((f) => f.length))).toBeLessThan(SERVER.fieldBytes);
    expect(url.length).toBeLessThan(SERVER.uriBytes);
  });
});

describe('read shapes: any body or query string (fast-check)', () => {
  it.each(Object.entries(BODY_READS))('POST %s: 200 or a bounded 4xx, never a 500, never a long stall', async (path, arb) => {
    await fuzz(arb, RUNS, async (body) => expectBounded(path, await send(path, { body })));
    // The fuzzing reached the engine too, not only the validation.
    expect([...statuses.get(path)!]).toEqual(expect.arrayContaining([200, 400]));
  });

  it.each(Object.entries(QUERY_READS))('GET %s: 200 or a bounded 400, never a 500, never a long stall', async (path, arb) => {
    await fuzz(arb, RUNS, async (query) => expectBounded(path, await send(path, { query })));
    // The fuzzing reached the engine too, not only the validation.
    expect([...statuses.get(path)!]).toEqual(expect.arrayContaining([200, 400]));
  });
});
