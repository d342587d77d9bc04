import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { IngestService } from '@analytics/ingest';
import { buildApp as buildReadApp } from '@analytics/read-api';
import { CHANNEL_VALUES } from '@analytics/schema';
import { openTestStores, silentLogger } from '@analytics/testing';
import { connectAgent } from './test-support/agent';
import { buildApp } from './app';

// query_insights (goals and annotations included), get_funnel, get_retention, list_properties and get_annotations: each MCP answer (structuredContent) equals the HTTP answer of POST /v1/insights
// POST /v1/funnel, POST /v1/retention and GET /v1/properties for the same arguments, over the same store.

type Stores = Awaited<ReturnType<typeof openTestStores>>;
let stores: Stores;
let http: HttpServer;
let url: string;
let readApp: ReturnType<typeof buildReadApp>;
let keys: { pk: string; sk: string; rk: string };
let projectId: string;
const FROM = '2026-06-01T00:00:00Z';
const TO = '2026-06-03T00:00:00Z';

beforeAll(async () => {
  stores = await openTestStores();
  const ingest = new IngestService({ store: stores.events, limiter: stores.limiter, rateRules: { track: { ratePerS: 1e6, burst: 1e6 }, batch: { ratePerS: 1e6, burst: 1e6 } } });
  // The saved definitions and the annotations, as the wiring passes them (KeyStore.lookup).
  const saved = stores.keyStore.lookup;
  const app = buildApp({ logger: silentLogger, authenticator: stores.authenticator, ingest, events: stores.events, saved, ipHashSecret: 's' });
  readApp = buildReadApp({ logger: silentLogger, authenticator: stores.authenticator, events: stores.events, saved });
  const created = await stores.keyStore.createProject({ name: 'agents' });
  keys = created.keys;
  projectId = created.project.id;
  http = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  const events = [
    ['u1', 's1', '2026-06-01T10:00:00Z', '$pageview', '/?utm_source=newsletter&utm_medium=email', { plan: 'pro' }],
    ['u1', 's1', '2026-06-01T10:04:00Z', 'signup', '/signup', { plan: 'pro' }],
    ['u2', 's2', '2026-06-01T11:00:00Z', '$pageview', '/pricing', { plan: 'free' }],
    ['u3', 's3', '2026-06-02T09:00:00Z', '$pageview', '/docs', {}],
    ['u3', 's3', '2026-06-02T09:30:00Z', '$pageview', '/pricing', {}],
    ['u4', 's4', '2026-05-31T09:00:00Z', '$pageview', '/', {}],
  ] as const;
  const client = await connect(keys.sk);
  for (const [anonymous_id, session_id, timestamp, event, path, properties] of events) {
    const r = await client.callTool({ name: 'track_event', arguments: { event, anonymous_id, session_id, timestamp, url: `https://a.example${path}`, properties } });
    expect(r.isError).toBeFalsy();
  }
  await client.close();
});
afterAll(async () => {
  await new Promise((r) => http.close(r));
  await stores.close();
});

const connect = (key: string): Promise<Client> => connectAgent(url, key);

describe('query_insights and list_properties', () => {
  it('are listed to an rk_ key as read-only tools', async () => {
    const client = await connect(keys.rk);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['query_insights', 'list_properties']));
    for (const t of tools.filter((x) => ['query_insights', 'list_properties'].includes(x.name))) expect(t.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    await client.close();
  });

  const INSIGHTS: Array<Record<string, unknown>> = [
    {},
    { metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration', 'views_per_visit', 'events'] },
    { metrics: ['visits', 'bounce_rate'], dimensions: ['source', 'entry_path'], compare: 'previous_period' },
    { metrics: ['events'], dimensions: ['prop:plan', 'time:day'], filters: [['or', [['is', 'prop:plan', ['pro']], ['contains', 'path', ['pric']]]]], order_by: [['time:day', 'asc']] },
    { metrics: ['pageviews'], dimensions: ['exit_path'], filters: [['is_not', 'event_name', ['signup']]], limit: 1 },
    { metrics: ['visitors', 'conversions', 'conversion_rate'], dimensions: ['source'], goal: { event: 'signup' } },
    { metrics: ['conversions'], goal: { path: '/pri*', filters: [['is_not', 'prop:plan', ['pro']]] } },
    // whole days, event metrics by a day bucket and an event dimension: read from daily_rollup
    { metrics: ['visitors', 'pageviews'], dimensions: ['time:day', 'country'], filters: [['is_not', 'device_type', ['mobile']]], compare: 'previous_period' },
    // whole days, event metrics by a day bucket and a page: read from daily_dims
    { metrics: ['visitors', 'events'], dimensions: ['path', 'time:day'], compare: 'previous_period' },
    // daily_dims' rows by their bot flag (the dashboard's AI crawlers ask `is` bot; this data has no bots); a visit
    // dimension beside channel (its AI assistants)
    { metrics: ['events'], dimensions: ['browser'], filters: [['is_not', 'device_type', ['bot']]], include_bots: true },
    { metrics: ['visits', 'visitors'], dimensions: ['source'], filters: [['is_not', 'channel', ['direct']]] },
  ];
  it.each(INSIGHTS.map((a) => [JSON.stringify(a), a]))('query_insights %s answers what POST /v1/insights answers', async (_, args) => {
    const body = { from: FROM, to: TO, ...args };
    const http = await request(readApp).post('/v1/insights').set('authorization', `Bearer ${keys.rk}`).send(body);
    expect(http.status).toBe(200);
    expect(http.body.rows.length).toBeGreaterThan(0);
    const client = await connect(keys.rk);
    const result = await client.callTool({ name: 'query_insights', arguments: body });
    expect(result.structuredContent).toEqual(http.body);
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(http.body);
    await client.close();
  });

  it.each([[{}], [{ key: 'plan' }], [{ event: 'signup' }]])('list_properties %j answers what GET /v1/properties answers', async (args) => {
    const query = { from: FROM, to: TO, ...args };
    const http = await request(readApp).get('/v1/properties').set('authorization', `Bearer ${keys.rk}`).query(query);
    expect(http.status).toBe(200);
    expect(http.body.rows.length).toBeGreaterThan(0);
    const client = await connect(keys.rk);
    expect((await client.callTool({ name: 'list_properties', arguments: query })).structuredContent).toEqual(http.body);
    await client.close();
  });

  it('returns a bad argument as a tool error naming the allowed values', async () => {
    const client = await connect(keys.rk);
    const result = await client.callTool({ name: 'query_insights', arguments: { from: FROM, to: TO, metrics: ['sessions'] } });
    expect(result.isError).toBe(true);
    expect((result.content as Array<{ text: string }>)[0]!.text).toMatch(/^invalid_params: metrics\.0: unknown metric: allowed are events, pageviews, visitors/);
    await client.close();
  });

  it('lists the channel values (from the catalog) in query_insights\' input schema, and no x- keys', async () => {
    const client = await connect(keys.rk);
    const { tools } = await client.listTools();
    const schema = JSON.stringify(tools.find((t) => t.name === 'query_insights')!.inputSchema);
    for (const value of CHANNEL_VALUES) expect(schema).toContain(value);
    expect(schema).toContain('ai_assistant');
    expect(JSON.stringify(tools)).not.toMatch(/"x-/);
    await client.close();
  });

  it('refuses is/is_not with a channel that cannot exist, naming the channels: 400 invalid_payload over HTTP, a tool error over MCP', async () => {
    const body = { from: FROM, to: TO, filters: [['is', 'channel', ['AI assistants']]] };
    const http = await request(readApp).post('/v1/insights').set('authorization', `Bearer ${keys.rk}`).send(body);
    expect(http.status).toBe(400);
    expect(http.body).toMatchObject({ error: 'invalid_payload', details: { issues: [{ path: 'filters.0.2', message: expect.stringContaining(`channel is one of ${CHANNEL_VALUES.join(', ')}`) }] } });
    const client = await connect(keys.rk);
    const result = await client.callTool({ name: 'query_insights', arguments: body });
    expect(result.isError).toBe(true);
    expect((result.content as Array<{ text: string }>)[0]!.text).toContain('invalid_params: filters.0.2: channel is one of direct, internal, organic_search');
    const ok = await client.callTool({ name: 'query_insights', arguments: { ...body, filters: [['is', 'channel', ['ai_assistant']]] } });
    expect(ok.isError).toBeFalsy();
    await client.close();
  });

  it('is refused to an sk_ key', async () => {
    const client = await connect(keys.sk);
    await expect(client.callTool({ name: 'query_insights', arguments: { from: FROM, to: TO } })).rejects.toThrow(/insufficient_scope/);
    await client.close();
  });
});

describe('get_funnel and get_retention', () => {
  const CASES: Array<[string, string, Record<string, unknown>]> = [
    ['get_funnel', '/v1/funnel', { steps: [{ event: '$pageview' }, { event: 'signup' }] }],
    ['get_funnel', '/v1/funnel', { steps: [{ path: '/*' }, { event: '$pageview', path: '/pricing' }], window_s: 3600, count_by: 'session', breakdown: 'source', filters: [['is_not', 'country', ['XX']]] }],
    ['get_retention', '/v1/retention', { period: 'day', count_by: 'visitor' }],
    ['get_retention', '/v1/retention', { period: 'week', count_by: 'visitor', start: { event: '$pageview' }, return: { path: '/pricing' } }],
  ];
  it.each(CASES.map(([tool, path, args]) => [tool, JSON.stringify(args), path, args] as const))('%s %s answers what the HTTP route answers', async (tool, _, path, args) => {
    const body = { from: FROM, to: TO, ...args };
    const http = await request(readApp).post(path).set('authorization', `Bearer ${keys.rk}`).send(body);
    expect(http.status).toBe(200);
    const client = await connect(keys.rk);
    const result = await client.callTool({ name: tool, arguments: body });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(http.body);
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(http.body);
    await client.close();
  });

  it('are read-only, and answer a bad body as a tool error saying what is allowed', async () => {
    const client = await connect(keys.rk);
    const { tools } = await client.listTools();
    for (const t of tools.filter((x) => ['get_funnel', 'get_retention'].includes(x.name))) expect(t.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    const result = await client.callTool({ name: 'get_funnel', arguments: { from: FROM, to: TO, steps: [{ event: 'signup' }] } });
    expect(result.isError).toBe(true);
    expect((result.content as Array<{ text: string }>)[0]!.text).toMatch(/^invalid_params: steps: a funnel has 2 to 10 steps/);
    await client.close();
  });
});

describe('saved goals, funnels and segments through MCP', () => {
  it('list_goals, list_funnels and list_segments list the project\'s; query_insights, get_funnel and get_retention take their ids and answer as inline', async () => {
    const saved = stores.keyStore.saved;
    const goal = (await saved.create(projectId, 'goal', { name: 'Signup', definition: { event: 'signup', filters: [] } }))!;
    const funnel = (await saved.create(projectId, 'funnel', { name: 'Pricing to signup', definition: { steps: [{ event: '$pageview', filters: [] }, { event: 'signup', filters: [] }], window_s: 86400, count_by: 'visitor', filters: [] } }))!;
    const segment = (await saved.create(projectId, 'segment', { name: 'Pro', definition: { filters: [['is', 'prop:plan', ['pro']]] } }))!;
    const client = await connect(keys.rk);
    const { tools } = await client.listTools();
    for (const name of ['query_insights', 'get_funnel', 'get_retention']) expect(tools.find((t) => t.name === name)!.description).toMatch(/list_(goals|funnels|segments)/);
    const listed = async (tool: string, key: string) => ((await client.callTool({ name: tool, arguments: {} })).structuredContent as Record<string, Array<{ id: string }>>)[key]!.map((x) => x.id);
    expect(await listed('list_goals', 'goals')).toEqual([goal.id]);
    expect(await listed('list_funnels', 'funnels')).toEqual([funnel.id]);
    expect(await listed('list_segments', 'segments')).toEqual([segment.id]);
    const same = async (tool: string, path: string, byId: Record<string, unknown>, inline: Record<string, unknown>) => {
      const r = await client.callTool({ name: tool, arguments: { from: FROM, to: TO, ...byId } });
      expect(r.isError).toBeFalsy();
      const http = await request(readApp).post(path).set('authorization', `Bearer ${keys.rk}`).send({ from: FROM, to: TO, ...inline });
      expect(http.status).toBe(200);
      expect(r.structuredContent).toEqual(http.body);
      return http.body;
    };
    const insights = await same('query_insights', '/v1/insights', { metrics: ['visitors', 'conversions'], goal: { id: goal.id }, segment: segment.id }, { metrics: ['visitors', 'conversions'], goal: { event: 'signup' }, filters: [['is', 'prop:plan', ['pro']]] });
    expect(insights.rows[0].conversions).toBe(1);
    await same('get_funnel', '/v1/funnel', { id: funnel.id }, { steps: [{ event: '$pageview' }, { event: 'signup' }] });
    await same('get_retention', '/v1/retention', { period: 'day', count_by: 'visitor', start: { id: goal.id }, segment: segment.id }, { period: 'day', count_by: 'visitor', start: { event: 'signup' }, filters: [['is', 'prop:plan', ['pro']]] });
    // An id the project does not have: an argument error the model reads, naming the field.
    const bad = await client.callTool({ name: 'query_insights', arguments: { from: FROM, to: TO, segment: '00000000-0000-4000-8000-000000000000' } });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ error: 'invalid_params', details: { issues: [{ path: 'segment' }] } });
    await client.close();
  });
});

describe('annotations through MCP (issue 48)', () => {
  it('get_annotations answers what GET /v1/annotations answers; query_insights with a time dimension carries them beside its rows, as POST /v1/insights', async () => {
    await stores.keyStore.annotations.create(projectId, { at: Date.parse('2026-06-02T08:00:00Z'), text: 'Deployed v2', kind: 'deploy', created_by: null });
    await stores.keyStore.annotations.create(projectId, { at: Date.parse('2026-06-01T00:00:00Z'), text: 'Newsletter sent', kind: 'campaign', created_by: null });
    await stores.keyStore.annotations.create(projectId, { at: Date.parse('2026-06-03T00:00:00Z'), text: 'after the range', kind: 'note', created_by: null });
    const client = await connect(keys.rk);
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'get_annotations')!;
    expect(tool.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    expect(tool.description).toContain('explain spikes or dips before speculating');
    expect(tools.find((t) => t.name === 'query_insights')!.description).toContain('explain spikes or dips before speculating');
    const http = await request(readApp).get('/v1/annotations').set('authorization', `Bearer ${keys.rk}`).query({ from: FROM, to: TO });
    expect(http.body.annotations.map((a: { text: string }) => a.text)).toEqual(['Newsletter sent', 'Deployed v2']);
    expect((await client.callTool({ name: 'get_annotations', arguments: { from: FROM, to: TO } })).structuredContent).toEqual(http.body);
    const body = { from: FROM, to: TO, metrics: ['pageviews'], dimensions: ['time:day'] };
    const insights = await request(readApp).post('/v1/insights').set('authorization', `Bearer ${keys.rk}`).send(body);
    expect(insights.body.annotations).toEqual(http.body.annotations);
    expect((await client.callTool({ name: 'query_insights', arguments: body })).structuredContent).toEqual(insights.body);
    const flat = (await client.callTool({ name: 'query_insights', arguments: { ...body, dimensions: ['path'] } })).structuredContent;
    expect(flat).not.toHaveProperty('annotations');
    await client.close();
  });
});
