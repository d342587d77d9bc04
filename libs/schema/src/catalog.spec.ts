import { CHANNEL_VALUES, COLUMN_DIMENSIONS, DEVICE_TYPE_VALUES, FINITE_DIMENSION_VALUES, INSIGHT_METRICS, METRIC_CATALOG } from './catalog';
import { funnelBodySchema, retentionBodySchema } from './conversions.schema';
import { INSIGHT_DIMENSION_KINDS, insightsBodySchema } from './insights.schema';
import { openApiDocument } from './openapi';
import { routes } from './api-routes';

const RANGE = { from: '2026-03-02T00:00:00Z', to: '2026-03-09T00:00:00Z' };
const issuesOf = (r: { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } }) => (r.success ? [] : r.error!.issues.map((i) => ({ path: i.path.join('.'), message: i.message })));

describe('the catalog', () => {
  it('describes every metric and dimension, and gives the finite ones their values', () => {
    for (const m of INSIGHT_METRICS) expect(METRIC_CATALOG[m].description.length).toBeGreaterThan(0);
    expect(INSIGHT_DIMENSION_KINDS).toEqual(Object.fromEntries(Object.entries(COLUMN_DIMENSIONS).map(([n, d]) => [n, d.kind])));
    expect(FINITE_DIMENSION_VALUES).toEqual({ channel: CHANNEL_VALUES, device_type: DEVICE_TYPE_VALUES });
  });
});

describe('is / is_not on a finite dimension', () => {
  it('refuses a value the dimension cannot hold, naming the values it can (insights, goals, funnels, retention)', () => {
    const channels = CHANNEL_VALUES.join(', ');
    const bodies: Array<[string, () => { success: boolean }, string]> = [
      ['insights filter', () => insightsBodySchema.safeParse({ ...RANGE, filters: [['is', 'channel', ['AI assistants']]] }), 'filters.0.2'],
      ['nested or', () => insightsBodySchema.safeParse({ ...RANGE, filters: [['or', [['is_not', 'channel', ['direct', 'Direct']]]]] }), 'filters.0.1.0.2'],
      ['goal filter', () => insightsBodySchema.safeParse({ ...RANGE, metrics: ['conversions'], goal: { event: 'signup', filters: [['is', 'channel', ['AI assistants']]] } }), 'goal.filters.0.2'],
      ['funnel filter', () => funnelBodySchema.safeParse({ ...RANGE, steps: [{ event: 'a' }, { event: 'b' }], filters: [['is', 'channel', ['AI assistants']]] }), 'filters.0.2'],
      ['retention filter', () => retentionBodySchema.safeParse({ ...RANGE, period: 'day', filters: [['is', 'channel', ['AI assistants']]] }), 'filters.0.2'],
    ];
    for (const [what, parse, path] of bodies) {
      const issues = issuesOf(parse() as never);
      expect({ what, issues }).toEqual({ what, issues: [{ path, message: expect.stringContaining(`channel is one of ${channels}:`) }] });
    }
    expect(issuesOf(insightsBodySchema.safeParse({ ...RANGE, filters: [['is', 'device_type', ['phone']]] }) as never)).toEqual([
      { path: 'filters.0.2', message: 'device_type is one of desktop, mobile, tablet, bot, other: "phone" is none of them (values are case-sensitive)' },
    ]);
  });

  it('takes every value the dimension holds, and contains / not_contains with any text', () => {
    expect(insightsBodySchema.safeParse({ ...RANGE, filters: [['is', 'channel', [...CHANNEL_VALUES]], ['is_not', 'device_type', [...DEVICE_TYPE_VALUES]]] }).success).toBe(true);
    expect(insightsBodySchema.safeParse({ ...RANGE, filters: [['contains', 'channel', ['AI']], ['not_contains', 'device_type', ['pho']]] }).success).toBe(true);
    expect(insightsBodySchema.safeParse({ ...RANGE, filters: [['is', 'source', ['AI assistants']]] }).success).toBe(true);
  });
});

describe('the OpenAPI document', () => {
  const doc = openApiDocument('all') as { components: { schemas: Record<string, { enum?: string[] }> }; paths: Record<string, Record<string, unknown>> };

  it('lists the catalog as enums: metrics, dimensions, and the channel and device_type values', () => {
    expect(doc.components.schemas.InsightMetric!.enum).toEqual([...INSIGHT_METRICS]);
    expect(doc.components.schemas.Channel!.enum).toEqual([...CHANNEL_VALUES]);
    expect(doc.components.schemas.Channel!.enum).toContain('ai_assistant');
    expect(doc.components.schemas.DeviceType!.enum).toEqual([...DEVICE_TYPE_VALUES]);
  });

  it('gives the insights, funnel and retention filters the channel values (text and x-dimension-values)', () => {
    for (const route of [routes.insights, routes.funnel, routes.retention]) {
      const body = (doc.paths[route.path]![route.method] as { requestBody: { content: { 'application/json': { schema: { properties: { filters: Record<string, unknown> } } } } } }).requestBody.content['application/json'].schema;
      expect(body.properties.filters['x-dimension-values']).toEqual({ channel: CHANNEL_VALUES, device_type: DEVICE_TYPE_VALUES });
    }
    const insights = JSON.stringify((doc.paths[routes.insights.path]![routes.insights.method] as Record<string, unknown>).requestBody);
    for (const value of CHANNEL_VALUES) expect(insights).toContain(value);
  });
});
