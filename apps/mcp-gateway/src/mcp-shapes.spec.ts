import type { Express } from 'express';
import request from 'supertest';
import fc from 'fast-check';
import { IngestService } from '@analytics/ingest';
import { DETAILS_LIMITS, MCP_CAPABILITIES } from '@analytics/schema';
import {
  BODY_READS,
  LARGEST_BODIES,
  MAX_ERROR_ANSWER_BYTES,
  MAX_EVENT_LOOP_STALL_MS,
  type Measured,
  QUERY_READS,
  SHAPES_FROM,
  WORST_BODIES,
  fuzz,
  measured,
  openTestStores,
  silentLogger,
} from '@analytics/testing';
import { buildApp } from './app';

// Issue 43, "Bounded shapes", over MCP: every read tool given the read bodies and query strings of
// apps/read-api/src/shapes.spec.ts as arguments (hostile shapes weighted in), and hostile JSON-RPC envelopes: never an
// internal error, an error answer of at most 64 KB, and the event loop never stalled for long.

const RUNS = Number(process.env.SHAPES_FUZZ_RUNS ?? 30);

type Stores = Awaited<ReturnType<typeof openTestStores>>;
let stores: Stores;
let app: Express;
let rk: string;

beforeAll(async () => {
  stores = await openTestStores();
  const ingest = new IngestService({ store: stores.events, limiter: stores.limiter, rateRules: { track: { ratePerS: 1e6, burst: 1e6 }, batch: { ratePerS: 1e6, burst: 1e6 } } });
  app = buildApp({ logger: silentLogger, authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: 's' });
  const { keys } = await stores.keyStore.createProject({ name: 'shapes' });
  rk = keys.rk;
  // the one write, sent once (not through `measured`, which may send a request twice)
  const track = await rpc(keys.sk, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'track_event', arguments: { event: 'signup', anonymous_id: 'a', timestamp: SHAPES_FROM, url: 'https://a.example/pricing', properties: { plan: 'pro' } } } }));
  expect(track.body).toMatchObject({ result: { structuredContent: { ok: true } } });
}, 180_000);
afterAll(() => stores.close());

/** One JSON-RPC body POSTed to /mcp with `key`. */
const rpc = (key: string, body: string) => request(app).post('/mcp').set('authorization', `Bearer ${key}`).set('accept', 'application/json, text/event-stream').set('content-type', 'application/json').send(body);
/** POSTs one JSON-RPC message (serialised before the clock starts) to /mcp, measured. */
function post(key: string, message: unknown): Promise<Measured> {
  const body = JSON.stringify(message);
  return measured(() => rpc(key, body));
}
const call = (key: string, params: { name: unknown; arguments?: unknown }) => post(key, { jsonrpc: '2.0', id: 1, method: 'tools/call', params });

type Rpc = { result?: { isError?: boolean; structuredContent?: { error?: string; details?: Record<string, unknown> } }; error?: { code: number; message: string; data?: { error?: string } } };
const outcomes = new Map<string, Set<string>>();

/** What any answer to any tool call must be: a result, or an argument error (bounded), never an internal error. */
function expectBounded(tool: string, a: Measured): void {
  const rpc = a.json as Rpc | undefined;
  const outcome = rpc?.error ? `error ${rpc.error.message}` : rpc?.result?.isError ? `isError ${rpc.result.structuredContent?.error}` : a.status === 200 ? 'result' : `status ${a.status}`;
  outcomes.set(tool, (outcomes.get(tool) ?? new Set()).add(outcome));
  const seen = { tool, status: a.status, outcome, bytes: a.bytes, stallMs: Math.round(a.stallMs) };
  // Past 16 MiB the body is refused by its Content-Length: 413, in the JSON-RPC envelope /mcp answers body errors in
  // (invalid_request, data.error payload_too_large), read whole now that a refused body's rest is read away.
  const tooLarge = a.status === 413 && (outcome === 'status 413' || (rpc?.error?.message === 'invalid_request' && rpc.error.data?.error === 'payload_too_large'));
  expect({ ...seen, ok: tooLarge || ['result', 'isError invalid_params', 'isError invalid_group_by'].includes(outcome) }).toEqual({ ...seen, ok: true });
  if (outcome !== 'result') expect({ ...seen, bounded: a.bytes <= MAX_ERROR_ANSWER_BYTES }).toEqual({ ...seen, bounded: true });
  expect({ ...seen, quick: a.stallMs <= MAX_EVENT_LOOP_STALL_MS }).toEqual({ ...seen, quick: true });
}

// Each read route's tool, from the capability declarations (libs/schema's routes declared with `mcp`).
const toolsOf = (reads: object) => Object.fromEntries(MCP_CAPABILITIES.filter((c) => c.route.path in reads).map((c) => [c.route.path, c.mcp.tool])) as Record<string, string>;
const TOOL_OF = toolsOf(BODY_READS);
const QUERY_TOOL_OF = toolsOf(QUERY_READS);

describe('MCP shapes: the worst and the largest arguments', () => {
  it.each(WORST_BODIES)('%s: an isError invalid_params result whose details fit 16 KB', async (name, path, body) => {
    const a = await call(rk, { name: TOOL_OF[path]!, arguments: body });
    expectBounded(name, a);
    const result = (a.json as Rpc).result!;
    expect(result.structuredContent).toMatchObject({ error: 'invalid_params', details: { fieldErrors: expect.any(Object), issues: expect.any(Array) } });
    expect(Buffer.byteLength(JSON.stringify(result.structuredContent!.details))).toBeLessThanOrEqual(DETAILS_LIMITS.bytes);
  });

  it.each(LARGEST_BODIES)('%s: answered', async (name, path, body) => {
    const a = await call(rk, { name: TOOL_OF[path]!, arguments: body });
    expectBounded(name, a);
    expect({ name, isError: (a.json as Rpc).result?.isError }).toEqual({ name, isError: undefined });
  });

  it('get_stats: group_by as a list of a million columns is one issue', async () => {
    const a = await call(rk, { name: 'get_stats', arguments: { from: SHAPES_FROM, to: '2026-03-08T00:00:00Z', group_by: Array.from({ length: 1_000_000 }, () => 'source') } });
    expectBounded('get_stats', a);
    expect((a.json as Rpc).result?.structuredContent?.details?.issues).toEqual([{ path: 'group_by', message: 'group_by: at most 9 columns' }]);
  });
});

describe('MCP shapes: hostile envelopes', () => {
  const long = 'x'.repeat(1_000_000);
  it.each<[string, string, unknown]>([
    ['a tool named with a megabyte', 'unknown_tool', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: long, arguments: {} } }],
    ['a method named with a megabyte', 'method_not_found', { jsonrpc: '2.0', id: 1, method: long }],
    ['a resource URI of a megabyte', 'unknown_resource', { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: long } }],
    ['an id of a megabyte', 'invalid_request', { jsonrpc: '2.0', id: long, method: 'tools/list' }],
    ['params of the wrong shape, by the hundred thousand', 'invalid_params', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 1, arguments: Array.from({ length: 100_000 }, () => 1) } }],
  ])('%s: a small %s answer', async (_, code, message) => {
    const a = await post(rk, message);
    expect((a.json as Rpc).error?.message).toBe(code);
    expect(a.bytes).toBeLessThanOrEqual(4 * 1024);
    expect(a.stallMs).toBeLessThanOrEqual(MAX_EVENT_LOOP_STALL_MS);
  });
});

describe('MCP shapes: any arguments to every read tool (fast-check)', () => {
  it.each(Object.entries(TOOL_OF))('%s through %s: a result or a bounded argument error, never an internal error', async (path, tool) => {
    await fuzz(BODY_READS[path as keyof typeof BODY_READS], RUNS, async (args) => expectBounded(tool, await call(rk, { name: tool, arguments: args })));
    // The fuzzing reached the engine too, not only the validation.
    expect([...outcomes.get(tool)!]).toEqual(expect.arrayContaining(['result', 'isError invalid_params']));
  });

  it.each(Object.entries(QUERY_TOOL_OF))('%s through %s: a result or a bounded argument error, never an internal error', async (path, tool) => {
    // An agent sends any JSON: the query strings' values (arrays where one is due now and then), limit as a number too.
    const args = fc.tuple(QUERY_READS[path as keyof typeof QUERY_READS] as fc.Arbitrary<Record<string, string | string[]>>, fc.boolean()).map(([q, asNumbers]) => (asNumbers && q.limit !== undefined ? { ...q, limit: Number(q.limit) } : q));
    await fuzz(args, RUNS, async (a) => expectBounded(tool, await call(rk, { name: tool, arguments: a })));
    expect([...outcomes.get(tool)!]).toEqual(expect.arrayContaining(['result', 'isError invalid_params']));
  });
});
