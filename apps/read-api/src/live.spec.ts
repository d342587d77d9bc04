import type { Server } from 'node:http';
import { snapshotCapabilities } from '@analytics/event-store';
import { type EventRow, type LiveMessage, toClickHouseTime } from '@analytics/schema';
import { openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from './app';
import { LiveHub } from './live-hub';
import { listenOnLoopback } from './test-support/listen';
import { SseReader } from './test-support/sse';

// GET /v1/live over real stores: the message (its windows, bots left out, no visitor ids), the tick and the pings
// between (a 400 ms tick here: the interval is a setting of the hub), the bound per project, one read per project per
// tick, another project's key, and a revoked key ending its stream.
type Stores = Awaited<ReturnType<typeof openTestStores>>;
const TICK_MS = 400;
const MAX = 2;

let stores: Stores;
let server: Server;
let base: string;
let keys: { rk: string; sk: string };
let projectId: string;
let other: { rk: string; id: string };
let reads = 0;
const open: SseReader[] = [];

let seq = 0;
function row(project: string, at: number, fields: Partial<EventRow> = {}): EventRow {
  return {
    project_id: project, timestamp: toClickHouseTime(at), event_id: `e-${++seq}`, event_name: '$pageview', anonymous_id: 'anon-1', user_id: null, session_id: 's', source: 'direct', medium: 'direct',
    campaign: null, source_confidence: 'high', source_rule_id: 'direct', channel: 'direct', referrer: null, url: null, path: '/', country: 'DE', device_type: 'desktop', browser: 'Chrome', os: 'Linux',
    ip_hash_hex: 'ab'.repeat(16), properties: '{}', ...fields,
  };
}

const live = async (key: string) => {
  const reader = await SseReader.open(`${base}/v1/live`, key);
  open.push(reader);
  return reader;
};

beforeAll(async () => {
  stores = await openTestStores();
  const a = await stores.keyStore.createProject({ name: 'live', allowed_origins: [] });
  const b = await stores.keyStore.createProject({ name: 'other', allowed_origins: [] });
  keys = { rk: a.keys.rk, sk: a.keys.sk };
  projectId = a.project.id;
  other = { rk: b.keys.rk, id: b.project.id };
  const now = Date.now();
  await stores.events.insertRows([
    // Two visitors in the last 5 minutes (anon-1 twice), one 20 minutes ago; anon-1 came from google first, then internal.
    row(projectId, now - 60_000, { anonymous_id: 'anon-1', user_id: 'user-secret', path: '/pricing', source: 'google' }),
    row(projectId, now - 30_000, { anonymous_id: 'anon-1', user_id: 'user-secret', path: '/signup', source: 'internal' }),
    row(projectId, now - 120_000, { anonymous_id: 'anon-2', path: '/pricing', source: 'news-ycombinator-com' }),
    row(projectId, now - 20 * 60_000, { anonymous_id: 'anon-3', path: '/', source: 'direct' }),
    row(projectId, now - 10_000, { anonymous_id: 'anon-2', event_name: 'signup', path: '/signup', source: 'internal' }),
    // A bot: in no figure. An event older than 30 minutes: in none either.
    row(projectId, now - 10_000, { anonymous_id: 'bot-1', device_type: 'bot', path: '/robots', source: 'direct' }),
    row(projectId, now - 40 * 60_000, { anonymous_id: 'anon-old', path: '/old' }),
    row(other.id, now - 60_000, { anonymous_id: 'b-1', path: '/other-site', source: 'bing' }),
  ]);
  const hub = new LiveHub(
    (project) => {
      reads++;
      return snapshotCapabilities.live(stores.events, project, {});
    },
    { maxPerProject: MAX, tickMs: TICK_MS },
  );
  ({ server, base } = await listenOnLoopback(buildApp({ logger: silentLogger, authenticator: stores.authenticator, events: stores.events, liveHub: hub })));
}, 120_000);

afterEach(() => {
  for (const r of open.splice(0)) r.close();
});

afterAll(async () => {
  server?.closeAllConnections();
  server?.close();
  await stores?.close();
});

describe('GET /v1/live', () => {
  it('answers an event stream whose first message comes at once: the windows, bots left out, no visitor ids', async () => {
    const started = Date.now();
    const stream = await live(keys.rk);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.response.headers.get('x-accel-buffering')).toBe('no');
    expect(stream.response.headers.get('cache-control')).toBe('no-store');
    await stream.until(() => stream.messages().length >= 1);
    expect(Date.now() - started).toBeLessThan(TICK_MS * 5);
    const m = stream.messages<LiveMessage>()[0]!;
    expect(Object.keys(m).sort()).toEqual(['at', 'events', 'pageviews_per_minute', 'top_pages', 'top_sources', 'visitors']);
    expect(m.visitors).toBe(2);
    expect(m.pageviews_per_minute).toHaveLength(30);
    // Four $pageviews of people in the window (the signup event, the bot and the old one are not pageviews here).
    expect(m.pageviews_per_minute.reduce((a, b) => a + b, 0)).toBe(4);
    const minuteOf = (ago: number) => 29 - (Math.floor(Date.parse(m.at) / 60_000) - Math.floor((Date.parse(m.at) - ago) / 60_000));
    expect(m.pageviews_per_minute[minuteOf(20 * 60_000)]).toBeGreaterThanOrEqual(1);
    expect(m.top_pages).toEqual([
      { path: '/pricing', visitors: 2 },
      { path: '/', visitors: 1 },
      { path: '/signup', visitors: 1 },
    ]);
    // Each visitor once, under the source of their first event of the window (anon-1: google, not internal).
    expect(m.top_sources).toEqual([
      { source: 'direct', visitors: 1 },
      { source: 'google', visitors: 1 },
      { source: 'news-ycombinator-com', visitors: 1 },
    ]);
    expect(m.events.map((e) => e.event_name)).toEqual(['signup', '$pageview', '$pageview', '$pageview', '$pageview']);
    expect(m.events[0]).toEqual({ event_name: 'signup', path: '/signup', source: 'internal', country: 'DE', timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    for (const e of m.events) expect(Object.keys(e).sort()).toEqual(['country', 'event_name', 'path', 'source', 'timestamp']);
    const text = JSON.stringify(stream.items);
    for (const secret of ['anon-1', 'anon-2', 'user-secret', 'bot-1', '/robots', '/old', '/other-site']) expect(text).not.toContain(secret);
  });

  it('sends a message every tick with `: ping` comments between, and a new event shows in the next message', async () => {
    const stream = await live(keys.rk);
    await stream.until(() => stream.messages().length >= 1);
    await stores.events.insertRows([row(projectId, Date.now(), { anonymous_id: 'anon-new', path: '/just-now', source: 'duckduckgo' })]);
    await stream.until(() => stream.messages<LiveMessage>().some((m) => m.events[0]?.path === '/just-now'), TICK_MS * 10);
    const at = stream.messages<LiveMessage>().map((m) => Date.parse(m.at));
    await stream.until(() => stream.messages().length >= at.length + 2, TICK_MS * 10);
    const times = stream.messages<LiveMessage>().map((m) => Date.parse(m.at));
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    for (const gap of gaps.slice(1)) expect(gap).toBeGreaterThanOrEqual(TICK_MS * 0.5);
    // Pings go out between the messages (half a tick after each tick starts): at least one lies between two messages.
    // Not necessarily between the last two: a tick whose read took most of a tick sends its message just before the
    // next tick's, the ping of that half-tick having gone out before it (seen in CI under load).
    const kinds = stream.items.map((i) => (i.kind === 'comment' ? i.text : 'data'));
    const first = kinds.indexOf('data');
    const last = kinds.lastIndexOf('data');
    expect(kinds.slice(first + 1, last)).toContain('ping');
    const newest = stream.messages<LiveMessage>().at(-1)!;
    expect(newest.visitors).toBeGreaterThanOrEqual(3);
    expect(newest.top_pages).toContainEqual({ path: '/just-now', visitors: 1 });
  });

  it(`answers 429 rate_limited with Retry-After past ${MAX} streams of a project, and reads once per tick for all of them`, async () => {
    const [a, b] = [await live(keys.rk), await live(keys.rk)];
    await a.until(() => a.messages().length >= 1);
    await b.until(() => b.messages().length >= 1);
    const third = await fetch(`${base}/v1/live`, { headers: { authorization: `Bearer ${keys.rk}` } });
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('30');
    expect(((await third.json()) as { error: string }).error).toBe('rate_limited');
    // Another project has its own bound.
    const elsewhere = await live(other.rk);
    expect(elsewhere.response.status).toBe(200);
    // Two streams of one project: one read per tick, not one per stream.
    const [readsBefore, messagesBefore] = [reads, a.messages().length];
    await a.until(() => a.messages().length >= messagesBefore + 4, TICK_MS * 20);
    const projectReads = reads - readsBefore;
    // Over 4 ticks: the two projects' feeds read about 4 times each, never 3 streams' worth (12).
    expect(projectReads).toBeLessThanOrEqual(10);
    // A stream closed frees its place.
    a.close();
    await new Promise((r) => setTimeout(r, 200));
    const again = await live(keys.rk);
    expect(again.response.status).toBe(200);
  });

  it("another project's key sees its own project only", async () => {
    const stream = await live(other.rk);
    await stream.until(() => stream.messages().length >= 1);
    const m = stream.messages<LiveMessage>()[0]!;
    expect(m.visitors).toBe(1);
    expect(m.top_pages).toEqual([{ path: '/other-site', visitors: 1 }]);
    expect(m.top_sources).toEqual([{ source: 'bing', visitors: 1 }]);
    expect(JSON.stringify(m)).not.toContain('/pricing');
  });

  it('refuses other key kinds and a missing key before any stream', async () => {
    const sk = await fetch(`${base}/v1/live`, { headers: { authorization: `Bearer ${keys.sk}` } });
    expect(sk.status).toBe(403);
    expect(((await sk.json()) as { error: string }).error).toBe('insufficient_scope');
    const none = await fetch(`${base}/v1/live`);
    expect(none.status).toBe(401);
  });

  it('ends the stream with an error event naming the code when its key is revoked', async () => {
    const minted = (await stores.keyStore.createKey(projectId, 'rk'))!;
    const stream = await live(minted.key);
    await stream.until(() => stream.messages().length >= 1);
    const prefix = minted.prefix;
    await stores.keyStore.revokeKey(prefix);
    stores.authenticator.invalidateKey(prefix);
    await stream.until(() => stream.ended, TICK_MS * 10);
    expect(stream.items.at(-1)).toEqual({ kind: 'data', event: 'error', data: { error: 'invalid_api_key' } });
  });
});
