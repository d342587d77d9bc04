import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IngestService } from '@analytics/ingest';
import { snapshotCapabilities } from '@analytics/event-store';
import type { LiveMessage } from '@analytics/schema';
import { openTestStores, silentLogger } from '@analytics/testing';
import { connectAgent } from './test-support/agent';
import { buildApp } from './app';

// get_live: one message of GET /v1/live (the same function its ticks run), for the key's project only, without
// visitor ids; only read keys list and call it.

type Stores = Awaited<ReturnType<typeof openTestStores>>;
let stores: Stores;
let http: HttpServer;
let url: string;
let keys: { sk: string; rk: string };
let projectId: string;
let otherRk: string;
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36';

beforeAll(async () => {
  stores = await openTestStores();
  const ingest = new IngestService({ store: stores.events, limiter: stores.limiter, rateRules: { track: { ratePerS: 1e6, burst: 1e6 }, batch: { ratePerS: 1e6, burst: 1e6 } } });
  const app = buildApp({ logger: silentLogger, authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: 's' });
  const p = await stores.keyStore.createProject({ name: 'live-agents' });
  keys = p.keys;
  projectId = p.project.id;
  otherRk = (await stores.keyStore.createProject({ name: 'other' })).keys.rk;
  http = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  const now = Date.now();
  for (const [anonymous_id, path, ago] of [['visitor-a', '/pricing', 60_000], ['visitor-b', '/pricing', 30_000], ['visitor-a', '/docs', 10_000]] as const) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.sk}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'user-agent': CHROME },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'track_event', arguments: { event: '$pageview', anonymous_id, user_id: 'user-secret', url: `https://shop.example.com${path}`, timestamp: new Date(now - ago).toISOString() } } }),
    });
    expect(res.status).toBe(200);
  }
});

afterAll(async () => {
  await new Promise((r) => http.close(r));
  await stores.close();
});

describe('get_live', () => {
  it("answers one live message of the key's project: the stream's function, no visitor ids", async () => {
    const client = await connectAgent(url, keys.rk);
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'get_live')).toMatchObject({ title: 'Live view', annotations: { readOnlyHint: true } });
    const result = await client.callTool({ name: 'get_live', arguments: {} });
    expect(result.isError).toBeFalsy();
    const m = result.structuredContent as LiveMessage;
    expect(m.visitors).toBe(2);
    expect(m.pageviews_per_minute).toHaveLength(30);
    expect(m.pageviews_per_minute.reduce((a, b) => a + b, 0)).toBe(3);
    expect(m.top_pages).toEqual([
      { path: '/pricing', visitors: 2 },
      { path: '/docs', visitors: 1 },
    ]);
    expect(m.events.map((e) => e.path)).toEqual(['/docs', '/pricing', '/pricing']);
    for (const secret of ['visitor-a', 'visitor-b', 'user-secret']) expect(JSON.stringify(result)).not.toContain(secret);
    // The function GET /v1/live runs each tick: the same figures.
    const { at: _at, ...direct } = await snapshotCapabilities.live(stores.events, projectId, {});
    const { at: _at2, ...viaMcp } = m;
    expect(viaMcp).toEqual(direct);
  });

  it("shows another project's key its own project, and is not an ingest key's tool", async () => {
    const other = await connectAgent(url, otherRk);
    const m = (await other.callTool({ name: 'get_live', arguments: {} })).structuredContent as LiveMessage;
    expect(m).toMatchObject({ visitors: 0, top_pages: [], top_sources: [], events: [] });
    const ingestClient = await connectAgent(url, keys.sk);
    expect((await ingestClient.listTools()).tools.map((t) => t.name)).not.toContain('get_live');
  });
});
