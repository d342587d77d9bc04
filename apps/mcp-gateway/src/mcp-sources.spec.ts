import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { IngestService } from '@analytics/ingest';
import { buildApp as buildReadApp } from '@analytics/read-api';
import { openTestStores, silentLogger } from '@analytics/testing';
import { connectAgent } from './test-support/agent';
import { buildApp } from './app';

// Issue 50, "three answers to top sources": get_stats, top_sources and query_insights each say what they count,
// whether bots are in, and which the dashboard shows; top_sources takes include_bots (default true, as
// GET /v1/sources), and with false its visitors by source are query_insights' (the dashboard's Sources list).

type Stores = Awaited<ReturnType<typeof openTestStores>>;
let stores: Stores;
let http: HttpServer;
let url: string;
let readApp: ReturnType<typeof buildReadApp>;
let keys: { pk: string; sk: string; rk: string };
const FROM = '2026-06-01T00:00:00Z';
const TO = '2026-06-03T00:00:00Z';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36';

/** track_event over plain JSON-RPC, as a client with this User-Agent (the event's device_type comes from it). */
async function track(args: Record<string, unknown>, ua: string) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${keys.sk}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'user-agent': ua },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'track_event', arguments: args } }),
  });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { result: { isError?: boolean } }).result.isError).toBeFalsy();
}

beforeAll(async () => {
  stores = await openTestStores();
  const ingest = new IngestService({ store: stores.events, limiter: stores.limiter, rateRules: { track: { ratePerS: 1e6, burst: 1e6 }, batch: { ratePerS: 1e6, burst: 1e6 } } });
  const app = buildApp({ logger: silentLogger, authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret: 's' });
  readApp = buildReadApp({ logger: silentLogger, authenticator: stores.authenticator, events: stores.events });
  keys = (await stores.keyStore.createProject({ name: 'sources' })).keys;
  http = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  // Two crawlers from a search engine, three pages each; one person from a newsletter who then reads a second page.
  for (const bot of ['b1', 'b2']) {
    for (let i = 0; i < 3; i++) await track({ event: '$pageview', anonymous_id: bot, session_id: `${bot}-s`, timestamp: `2026-06-01T0${i + 1}:00:00Z`, url: `https://a.example/p${i}`, referrer: i === 0 ? 'https://www.google.com/' : `https://a.example/p${i - 1}` }, GOOGLEBOT);
  }
  await track({ event: '$pageview', anonymous_id: 'u1', session_id: 's1', timestamp: '2026-06-01T10:00:00Z', url: 'https://a.example/?utm_source=newsletter&utm_medium=email' }, CHROME);
  await track({ event: '$pageview', anonymous_id: 'u1', session_id: 's1', timestamp: '2026-06-01T10:01:00Z', url: 'https://a.example/pricing', referrer: 'https://a.example/' }, CHROME);
});
afterAll(async () => {
  await new Promise((r) => http.close(r));
  await stores.close();
});

describe('the three answers to top sources', () => {
  it("each tool's description says what it counts, whether bots are in, and which one the dashboard shows", async () => {
    const client = await connectAgent(url, keys.rk);
    const { tools } = await client.listTools();
    await client.close();
    const tool = (name: string) => tools.find((t) => t.name === name)!;
    expect(tool('get_stats').description).toMatch(/Every stored event, bots included/);
    expect(tool('get_stats').description).toMatch(/source and channel are each event's own, not the visit's entry/);
    expect(tool('get_stats').description).toMatch(/Dashboard figures: query_insights/);
    expect(tool('top_sources').description).toMatch(/each session counts whole under its entry source\/medium/);
    expect(tool('top_sources').description).toMatch(/Bots included unless include_bots false/);
    expect(tool('top_sources').description).toMatch(/uniques by source = the dashboard's Sources list/);
    expect(tool('query_insights').description).toMatch(/Bots left out unless include_bots/);
    expect(tool('query_insights').description).toMatch(/What the dashboard shows/);
    expect(tool('top_sources').inputSchema.properties!.include_bots).toEqual({ type: 'boolean', description: 'Default true.' });
  });

  it('top_sources answers what GET /v1/sources answers, bots counted by default and left out with include_bots false', async () => {
    const client = await connectAgent(url, keys.rk);
    for (const [args, query] of [[{}, {}], [{ include_bots: true }, { include_bots: 'true' }], [{ include_bots: false }, { include_bots: 'false' }]] as const) {
      for (const breakdown of ['source_medium', 'source']) {
        const res = await request(readApp).get('/v1/sources').set('authorization', `Bearer ${keys.rk}`).query({ from: FROM, to: TO, breakdown, ...query });
        expect(res.status).toBe(200);
        const { truncated: _t, ...mcp } = (await client.callTool({ name: 'top_sources', arguments: { from: FROM, to: TO, breakdown, ...args } })).structuredContent as Record<string, unknown>;
        expect(mcp).toEqual(res.body);
      }
    }
    const bySource = async (args: object) =>
      ((await client.callTool({ name: 'top_sources', arguments: { from: FROM, to: TO, breakdown: 'source', ...args } })).structuredContent as { rows: Array<{ source: string; uniques: number }> }).rows.map((r) => [r.source, r.uniques]);
    expect(await bySource({})).toEqual([['google', 2], ['newsletter', 1]]);
    expect(await bySource({ include_bots: false })).toEqual([['newsletter', 1]]);
    // query_insights, the dashboard's Sources list (visitors by source, bots left out): the same figures.
    const insights = (await client.callTool({ name: 'query_insights', arguments: { from: FROM, to: TO, metrics: ['visitors'], dimensions: ['source'] } })).structuredContent as { rows: Array<{ source: string; visitors: number }> };
    expect(insights.rows.map((r) => [r.source, r.visitors])).toEqual(await bySource({ include_bots: false }));
    // get_stats counts each event's own source, bots included: the crawlers' later pages and the person's second page are internal.
    const stats = (await client.callTool({ name: 'get_stats', arguments: { from: FROM, to: TO, metric: 'uniques', group_by: ['source'] } })).structuredContent as { rows: Array<{ source: string; value: number }> };
    expect(Object.fromEntries(stats.rows.map((r) => [r.source, r.value]))).toEqual({ google: 2, internal: 3, newsletter: 1 });
    await client.close();
  });

  it('get_stats answers what GET /v1/stats answers for buckets read from quarter_hours (an hour, a zone, $pageview counted)', async () => {
    const client = await connectAgent(url, keys.rk);
    for (const args of [{ interval: 'hour' }, { interval: 'day', tz: 'Asia/Kolkata', metric: 'uniques' }, { interval: 'hour', event: '$pageview', tz: 'America/Los_Angeles' }]) {
      const res = await request(readApp).get('/v1/stats').set('authorization', `Bearer ${keys.rk}`).query({ from: FROM, to: TO, ...args });
      expect(res.status).toBe(200);
      const { truncated: _t, ...mcp } = (await client.callTool({ name: 'get_stats', arguments: { from: FROM, to: TO, ...args } })).structuredContent as Record<string, unknown>;
      expect({ args, mcp }).toEqual({ args, mcp: res.body });
      expect((res.body as { rows: unknown[] }).rows.length).toBeGreaterThan(0);
    }
    await client.close();
  });
});
