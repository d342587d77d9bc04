import { z } from 'zod';
import {
  ApiError,
  DETAILS_LIMITS,
  INSIGHTS_LIMITS,
  INSIGHT_METRICS,
  type ValidationDetails,
  batchInputSchema,
  detailsOf,
  funnelBodySchema,
  insightsBodySchema,
  parseOrThrow,
  retentionBodySchema,
} from './index';

// Issue 43, "Bounded shapes": what a validation failure may answer, and the maximum of every list of a read body,
// checked on the list's length before any element is parsed.

const RANGE = { from: '2026-03-01T00:00:00Z', to: '2026-03-08T00:00:00Z' };
const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
const copies = <T>(n: number, x: T): T[] => Array.from({ length: n }, () => x);

function refusal(schema: z.ZodType, input: unknown): ValidationDetails {
  try {
    parseOrThrow(schema, input);
  } catch (e) {
    return (e as ApiError).extra.details as ValidationDetails;
  }
  throw new Error('expected a refusal');
}

describe('validation details: bounded whatever was sent', () => {
  it('keeps the first 50 issues of a batch of 1000 invalid events (10,000 issues) and says the rest were cut', () => {
    const bad = { event: 1, event_id: 2, anonymous_id: 3, user_id: 4, session_id: 5, url: 6, path: 7, referrer: 8, properties: 9, timestamp: 10 };
    const d = refusal(batchInputSchema, { events: copies(1000, bad) });
    expect(d.issues).toHaveLength(DETAILS_LIMITS.issues);
    expect(d.fieldErrors.events).toHaveLength(DETAILS_LIMITS.issues);
    expect(d.issues[0]).toEqual({ path: 'events.0.event', message: expect.stringContaining('expected string') });
    expect(d.truncated).toBe(true);
    expect(bytes(d)).toBeLessThanOrEqual(DETAILS_LIMITS.bytes);
  });

  it('cuts each message and path to 300 characters and stops at 16 KB of JSON, multi-byte text included', () => {
    const d = detailsOf(copies(40, { path: ['€'.repeat(10_000), 1], message: '"€\u0000'.repeat(1_000_000) }));
    expect(bytes(d)).toBeLessThanOrEqual(DETAILS_LIMITS.bytes);
    expect(d.truncated).toBe(true);
    expect(d.issues.length).toBeGreaterThan(0);
    expect(d.issues.length).toBeLessThan(40);
    expect(d.issues[0]!.message).toHaveLength(DETAILS_LIMITS.text + 1);
    expect(d.issues[0]!.path).toHaveLength(DETAILS_LIMITS.text + 1);
  });

  it('keeps the spec\'s shape (formErrors, fieldErrors by first path segment, each issue\'s path) and no `truncated` when all fit', () => {
    const d = detailsOf([{ path: [], message: 'form' }, { path: ['a', 0, 'b'], message: 'x' }, { path: ['a'], message: 'y' }]);
    expect(d).toEqual({ formErrors: ['form'], fieldErrors: { a: ['x', 'y'] }, issues: [{ path: '', message: 'form' }, { path: 'a.0.b', message: 'x' }, { path: 'a', message: 'y' }] });
  });

  it('names a field __proto__ like any other field', () => {
    const d = detailsOf([{ path: ['__proto__'], message: 'm' }]);
    expect(Object.keys(d.fieldErrors)).toEqual(['__proto__']);
    expect(JSON.parse(JSON.stringify(d)).fieldErrors).toEqual(JSON.parse('{"__proto__":["m"]}'));
  });
});

describe('every list of a read body: a maximum checked before its elements', () => {
  it('zod refuses an over-long list before parsing any element (the leading .max() every such list relies on)', () => {
    let parsed = 0;
    const counted = z.array(z.string().refine(() => ++parsed > 0)).max(3);
    expect(counted.safeParse(copies(1_000_000, 'x')).error?.issues).toHaveLength(1);
    expect(parsed).toBe(0);
  });

  const MILLION = 1_000_000;
  const leaf = ['is', 'country', ['GB']];
  it.each<[string, z.ZodType, Record<string, unknown>]>([
    ['insights metrics', insightsBodySchema, { metrics: copies(MILLION, 'visitors') }],
    ['insights dimensions', insightsBodySchema, { dimensions: copies(MILLION, 'source') }],
    ['insights order_by', insightsBodySchema, { order_by: copies(MILLION, ['visitors', 'desc']) }],
    ['insights filters', insightsBodySchema, { filters: copies(MILLION, leaf) }],
    ['a condition', insightsBodySchema, { filters: [copies(MILLION, 'is')] }],
    ['an "or"', insightsBodySchema, { filters: [['or', copies(MILLION, leaf)]] }],
    ['a condition\'s values', insightsBodySchema, { filters: [['is', 'country', copies(MILLION, 'GB')]] }],
    ['a goal\'s filters', insightsBodySchema, { metrics: ['conversions'], goal: { event: 'signup', filters: copies(MILLION, leaf) } }],
    ['funnel steps', funnelBodySchema, { steps: copies(MILLION, { event: 'signup' }) }],
    ['a funnel step\'s filters', funnelBodySchema, { steps: [{ event: 'a' }, { event: 'b', filters: [['or', copies(MILLION, leaf)]] }] }],
    ['funnel filters', funnelBodySchema, { steps: [{ event: 'a' }, { event: 'b' }], filters: copies(MILLION, leaf) }],
    ['retention start and return filters', retentionBodySchema, { period: 'day', start: { event: 'a', filters: copies(MILLION, leaf) }, return: { event: 'b', filters: [['or', copies(MILLION, leaf)]] } }],
  ])('%s of a million entries: refused with one issue or two', (_, schema, body) => {
    const issues = schema.safeParse({ ...RANGE, ...body }).error?.issues ?? [];
    expect(issues.length).toBeGreaterThanOrEqual(1);
    expect(issues.length).toBeLessThanOrEqual(2);
  });
});

describe('insights: metrics and order_by', () => {
  const ok = (body: object) => insightsBodySchema.safeParse({ ...RANGE, goal: { event: 'signup' }, ...body });
  const message = (body: object) => JSON.stringify(ok(body).error?.issues.map((i) => i.message));

  it('takes every metric once, and no metric twice', () => {
    expect(ok({ metrics: [...INSIGHT_METRICS] }).success).toBe(true);
    expect(message({ metrics: ['visitors', 'events', 'visitors'] })).toContain('each metric at most once: visitors named twice');
    expect(message({ metrics: copies(INSIGHTS_LIMITS.metrics + 1, 'events') })).toContain(`at most ${INSIGHTS_LIMITS.metrics} metrics`);
  });

  it('takes one order_by entry per requested metric and dimension, each named once', () => {
    expect(ok({ metrics: ['visitors', 'events'], dimensions: ['source'], order_by: [['source', 'asc'], ['events', 'desc'], ['visitors', 'asc']] }).success).toBe(true);
    expect(message({ metrics: ['visitors'], order_by: [['visitors', 'asc'], ['visitors', 'desc']] })).toContain('at most one entry per requested metric and dimension (1 here)');
    expect(message({ metrics: ['visitors', 'events'], order_by: [['visitors', 'asc'], ['visitors', 'desc']] })).toContain('order_by names each metric or dimension at most once: visitors named twice');
    expect(message({ order_by: copies(INSIGHTS_LIMITS.orderBy + 1, ['visitors', 'asc']) })).toContain('order_by: at most one entry per requested metric and dimension');
  });

  it('reads an empty order_by as the default order', () => {
    expect(insightsBodySchema.parse({ ...RANGE, order_by: [] }).order_by).toBeUndefined();
  });
});

describe('filters: conditions and value bytes', () => {
  const leaf = (values: string[] = ['GB']) => ['is', 'country', values];
  const insights = (filters: unknown[], goalFilters: unknown[] = []) => insightsBodySchema.safeParse({ ...RANGE, metrics: ['conversions'], goal: { event: 'signup', filters: goalFilters }, filters });

  it('counts the conditions inside "or"s: 32 in all are taken, 33 refused', () => {
    const ors = (n: number) => copies(n, ['or', [leaf(), leaf(), leaf()]]);
    expect(insights(ors(8)).success).toBe(true);
    expect(insights([...ors(8), leaf()]).error?.issues.map((i) => i.message)).toEqual([`at most ${INSIGHTS_LIMITS.conditions} conditions in all, counting those inside "or"s`]);
    expect(insights(copies(INSIGHTS_LIMITS.conditions, leaf())).success).toBe(true);
  });

  it('bounds the bytes of every filter value of a request together: 16 KiB taken, one byte more refused', () => {
    // 16 values of 1024 bytes are the budget; one byte more is a 17th value.
    const values = (total: number) => [...copies(16, 'x'.repeat(1024)), ...(total > 16 * 1024 ? ['x'.repeat(total - 16 * 1024)] : [])];
    const half = (total: number) => [leaf(values(total).slice(0, 8)), leaf(values(total).slice(8))];
    expect(insights(half(INSIGHTS_LIMITS.valueBytes)).success).toBe(true);
    expect(JSON.stringify(insights(half(INSIGHTS_LIMITS.valueBytes + 1)).error?.issues)).toContain(`filter values: at most ${INSIGHTS_LIMITS.valueBytes} bytes`);
    // the goal's values count with the request's
    expect(insights([leaf(values(INSIGHTS_LIMITS.valueBytes).slice(0, 8))], [leaf(values(INSIGHTS_LIMITS.valueBytes + 1).slice(8))]).success).toBe(false);
    // UTF-8 bytes, not characters
    expect(insights([leaf(copies(12, '€'.repeat(500)))]).success).toBe(false);
    const steps = (total: number) => values(total).map((v) => ({ event: 'x', filters: [leaf([v])] }));
    expect(funnelBodySchema.safeParse({ ...RANGE, steps: steps(INSIGHTS_LIMITS.valueBytes).slice(0, 10), filters: [leaf(values(INSIGHTS_LIMITS.valueBytes).slice(10))] }).success).toBe(true);
    expect(funnelBodySchema.safeParse({ ...RANGE, steps: steps(INSIGHTS_LIMITS.valueBytes + 1).slice(0, 10), filters: [leaf(values(INSIGHTS_LIMITS.valueBytes + 1).slice(10))] }).success).toBe(false);
    const goal = (v: string[]) => ({ event: 'x', filters: [leaf(v)] });
    expect(retentionBodySchema.safeParse({ ...RANGE, period: 'day', start: goal(values(INSIGHTS_LIMITS.valueBytes).slice(0, 8)), return: goal(values(INSIGHTS_LIMITS.valueBytes).slice(8)) }).success).toBe(true);
    expect(retentionBodySchema.safeParse({ ...RANGE, period: 'day', start: goal(values(INSIGHTS_LIMITS.valueBytes + 1).slice(0, 8)), return: goal(values(INSIGHTS_LIMITS.valueBytes + 1).slice(8)) }).success).toBe(false);
  });
});
