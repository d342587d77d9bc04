import fc from 'fast-check';
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import type { Test } from 'supertest';
import {
  DAY_MS,
  FUNNEL_LIMITS,
  GOAL_PATH_MAX,
  INSIGHTS_LIMITS,
  INSIGHT_DIMENSION_KINDS,
  INSIGHT_FILTER_OPS,
  INSIGHT_METRICS,
  INSIGHT_TIME_DIMENSIONS,
  LIMITS,
  RETENTION_MAX_PERIODS,
  STATS_GROUP_BY,
} from '@analytics/schema';

// Read bodies and query strings in every shape a caller can send, hostile ones weighted in: huge lists of duplicates,
// thousands of conditions, deep `or` nesting, long strings, unknown keys by the thousand. The read-api and MCP specs
// (and the reliability suite) send them and assert what no input may break: no 500, a bounded error answer, and an
// event loop that keeps turning.

/** The largest error answer any request may get: validation details are capped at 16 KB, this bounds the rest too. */
export const MAX_ERROR_ANSWER_BYTES = 64 * 1024;

/**
 * The longest the event loop may stall while one request is served in-process: generous for a loaded CI machine, and
 * still far below the seconds an unbounded shape cost (500 duplicate metrics stalled it 6.8 s, 1.8 MB of filters 4.3 s).
 */
export const MAX_EVENT_LOOP_STALL_MS = 1_500;

export const SHAPES_FROM = '2026-03-01T00:00:00Z';
export const SHAPES_TO = '2026-03-08T00:00:00Z';

const METRICS: readonly string[] = INSIGHT_METRICS;
const DIMENSIONS = [...Object.keys(INSIGHT_DIMENSION_KINDS), 'prop:plan', ...INSIGHT_TIME_DIMENSIONS];
const OPS: readonly string[] = INSIGHT_FILTER_OPS;
const LONG = ['x'.repeat(1025), 'x'.repeat(70_000), `prop:${'k'.repeat(300)}`, `prop:${'k'.repeat(100_000)}`];
const ODD = ['', ' ', '\u0000', '\uD800', '😀'.repeat(40), "'; DROP TABLE events; --", '{p:UUID}', '__proto__', 'constructor', 'toString', 'or', 'asc', '*', '/*'];

/** A short string a caller might put anywhere: a meaningful name, or junk. */
const short = (names: readonly string[]) => fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...names) }, { weight: 2, arbitrary: fc.constantFrom(...ODD) }, fc.string({ maxLength: 12 }));
/** The same, or now and then a long string. */
const word = (names: readonly string[]) => fc.oneof({ weight: 8, arbitrary: short(names) }, fc.constantFrom(...LONG));

/** Any JSON value of few bytes, for fields given the wrong type. */
const junk = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string({ maxLength: 8 }), fc.constant({}), fc.constant([]), fc.constant([[]]));

/** n copies of one value (of few bytes: the copies are the size): duplicates by the hundred or the ten thousand. */
const copies = <T>(arb: fc.Arbitrary<T>, sizes: readonly number[]) => fc.tuple(arb, fc.constantFrom(...sizes)).map(([x, n]) => Array.from({ length: n }, () => x));

/** A list as a caller sends it: a few entries (usually), a huge list of copies of a small one, or not a list. */
const list = <T>(arb: fc.Arbitrary<T>, small: fc.Arbitrary<T>, sizes: readonly number[]) =>
  fc.oneof({ weight: 5, arbitrary: fc.array(arb, { maxLength: 4 }) }, { weight: 2, arbitrary: copies(small, sizes) }, { weight: 1, arbitrary: junk });

/** `["or", ["or", [... condition ...]]]`, `depth` deep. */
export function nestedOr(depth: number, leaf: unknown = ['is', 'country', ['GB']]): unknown {
  let c = leaf;
  for (let i = 0; i < depth; i++) c = ['or', [c]];
  return c;
}

const values = fc.oneof({ weight: 4, arbitrary: fc.array(word(['GB', 'FR', '/pricing', 'pro']), { maxLength: 3 }) }, copies(fc.constant('v'), [101, 10_000]), junk);
const leaf = fc.tuple(word(OPS), word(DIMENSIONS), values);
const condition: fc.Arbitrary<unknown> = fc.letrec<{ c: unknown }>((tie) => ({
  c: fc.oneof({ depthSize: 'small', withCrossShrink: true }, { weight: 5, arbitrary: leaf }, fc.tuple(fc.constant('or'), fc.array(tie('c'), { maxLength: 3 })), junk),
})).c;
/** Conditions of a few bytes each, valid or not, to copy by the thousand. */
const smallCondition = fc.constantFrom<unknown>(['is', 'country', ['GB']], ['equals', 'country', ['GB']], ['is', 'nope', []], ['or', [['is', 'path', ['/']]]], [1], 'x', []);

/** Filters: a few conditions, thousands of them (valid or not), nested `or`s 4 to 1,000 deep. */
export const filtersArb = fc.oneof(
  { weight: 5, arbitrary: fc.array(condition, { maxLength: 4 }) },
  { weight: 1, arbitrary: copies(smallCondition, [33, 5_000, 60_000]) },
  { weight: 1, arbitrary: fc.constantFrom(4, 50, 1_000).map((d) => [nestedOr(d)]) },
  { weight: 1, arbitrary: junk },
);
const smallFilters = fc.oneof(fc.array(smallCondition, { maxLength: 3 }), copies(smallCondition, [33, 100]));

const iso = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(SHAPES_FROM, '2026-03-02', '2026-01-05T00:00:00Z') }, fc.constantFrom('', 'x'.repeat(100_000), '2026-02-30', '9999-12-31'), junk);
const isoTo = fc.oneof({ weight: 8, arbitrary: fc.constant(SHAPES_TO) }, iso);
/** A field that is usually left out, else usually of its type. */
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(fc.oneof({ weight: 6, arbitrary: arb }, junk), { nil: undefined, freq: 2 });
/** Keys no schema knows, by the thousand, with the known ones. */
const unknownKeys = fc.option(fc.constantFrom(3, 20_000).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}${'x'.repeat(20)}`, i]))), { nil: {}, freq: 6 });
/** Every key of `fields` optional; undefined ones left out (as JSON leaves them out). */
const body = <T extends Record<string, fc.Arbitrary<unknown>>>(fields: T) =>
  fc.tuple(fc.record(fields, { requiredKeys: [] }), unknownKeys).map(([known, extra]) => ({ ...extra, ...Object.fromEntries(Object.entries(known).filter(([, v]) => v !== undefined)) }));

const goalOf = (filters: fc.Arbitrary<unknown>, w: typeof word) => fc.record({ event: maybe(w(['signup', '$pageview'])), path: maybe(w(['/pricing', '/blog/*'])), filters: maybe(filters) }, { requiredKeys: [] });
const goal = goalOf(filtersArb, word);
// Copied by the ten thousand: short strings only (30,000 copies of a 100 KB path are 3 GB, more than JSON.stringify
// can write, and no caller gets that past the 1 MB body limit anyway).
const smallGoal = goalOf(smallFilters, short);
const metrics = list(word(METRICS), short(METRICS), [10, 500, 8_000, 20_000]);
const dimensions = list(word(DIMENSIONS), short(DIMENSIONS), [4, 500, 20_000]);
const orderEntry = (w: typeof short) => fc.tuple(w([...METRICS, ...DIMENSIONS]), w(['asc', 'desc']));
const orderBy = list(orderEntry(word), orderEntry(short), [13, 500, 20_000]);

// Bodies the schema accepts, of every size it accepts: the fuzzing reaches the engine too.
const FILTERABLE = DIMENSIONS.filter((d) => !d.startsWith('time:'));
const validLeaf = fc.tuple(fc.constantFrom(...OPS), fc.constantFrom(...FILTERABLE), fc.uniqueArray(fc.constantFrom('GB', 'FR', '/pricing', 'pro', 'direct', '$pageview'), { minLength: 1, maxLength: 3 }));
const validCondition = fc.oneof({ weight: 3, arbitrary: validLeaf }, fc.tuple(fc.constant('or'), fc.array(validLeaf, { minLength: 1, maxLength: 3 })));
const validFilters = fc.array(validCondition, { maxLength: 3 });
const validGoal = fc.record({ event: fc.constantFrom('signup', '$pageview'), path: fc.constantFrom('/pricing', '/blog/*'), filters: validFilters }, { requiredKeys: ['event'] });
const range = { from: fc.constant(SHAPES_FROM), to: fc.constant(SHAPES_TO) };
const boolean = fc.boolean();

const validInsights = fc
  .record({
    ...range, metrics: fc.uniqueArray(fc.constantFrom(...METRICS), { minLength: 1, maxLength: METRICS.length }), dimensions: fc.uniqueArray(fc.constantFrom(...DIMENSIONS), { maxLength: 3 }),
    filters: validFilters, compare: fc.constant('previous_period'), limit: fc.integer({ min: 1, max: 10_000 }), include_bots: boolean, goal: validGoal,
  }, { requiredKeys: ['from', 'to', 'goal'] })
  .chain((b) =>
    fc.shuffledSubarray([...(b.metrics ?? ['visitors']), ...(b.dimensions ?? [])]).chain((names) => fc.tuple(...names.map((n) => fc.tuple(fc.constant(n), fc.constantFrom('asc', 'desc'))))).map((order_by) => ({ ...b, order_by })),
  );
const validFunnel = fc.record({
  ...range, steps: fc.array(validGoal, { minLength: 2, maxLength: 10 }), window_s: fc.integer({ min: 1, max: 2_592_000 }), count_by: fc.constantFrom('visitor', 'user', 'session'),
  breakdown: fc.constantFrom(...FILTERABLE), filters: validFilters, include_bots: boolean,
}, { requiredKeys: ['from', 'to', 'steps'] });
const validRetention = fc.record({
  ...range, period: fc.constantFrom('day', 'week', 'month'), count_by: fc.constantFrom('user', 'visitor'), start: validGoal, return: validGoal, filters: validFilters, include_bots: boolean,
}, { requiredKeys: ['from', 'to', 'period'] });

/** A valid body with one field replaced by a hostile value (the field's own, or any): one fault at a time. */
const oneFault = (valid: fc.Arbitrary<Record<string, unknown>>, hostile: Record<string, fc.Arbitrary<unknown>>) =>
  fc.tuple(valid, fc.constantFrom(...Object.keys(hostile)).chain((k) => fc.tuple(fc.constant(k), hostile[k]!))).map(([b, [k, v]]) => ({ ...b, [k]: v }));
/** Bodies of a read: valid ones, valid ones with one hostile field, and anything (every field hostile or junk). */
const bodiesOf = (valid: fc.Arbitrary<Record<string, unknown>>, hostile: Record<string, fc.Arbitrary<unknown>>) =>
  fc.oneof({ weight: 2, arbitrary: valid }, { weight: 2, arbitrary: oneFault(valid, hostile) }, { weight: 1, arbitrary: body(Object.fromEntries(Object.entries(hostile).map(([k, a]) => [k, maybe(a)]))) });

/** POST /v1/insights bodies. */
export const insightsBodyArb = bodiesOf(validInsights, {
  from: iso, to: isoTo, metrics, dimensions, filters: filtersArb, order_by: orderBy, compare: word(['previous_period']), limit: fc.integer({ min: -1, max: 20_000 }), include_bots: junk, goal,
});

/** POST /v1/funnel bodies. */
export const funnelBodyArb = bodiesOf(validFunnel, {
  from: iso, to: isoTo, steps: list(goal, smallGoal, [11, 1_000, 30_000]), window_s: fc.integer({ min: -1, max: 3_000_000 }), count_by: word(['visitor', 'user', 'session']),
  breakdown: word(DIMENSIONS), filters: filtersArb, include_bots: junk,
});

/** POST /v1/retention bodies. */
export const retentionBodyArb = bodiesOf(validRetention, {
  from: iso, to: isoTo, period: word(['day', 'week', 'month']), count_by: word(['user', 'visitor']), start: goal, return: goal, filters: filtersArb, include_bots: junk,
});

// Query strings: Node refuses request heads over 16 KB (431, before any app code), so a query string stays under 12 KB.
const QUERY_MAX_CHARS = 12_000;
const param = fc.oneof({ weight: 6, arbitrary: fc.constantFrom('GB', 'pro', 'signup', 'source,medium', 'source,source,source', 'path', 'day', 'csv', 'source', '10', '1001', '-1') }, fc.constantFrom(...ODD), fc.string({ maxLength: 12 }));
/** A query string's values: one per key (now and then a long one), or a key repeated (express makes it an array). */
const paramValue = fc.oneof({ weight: 6, arbitrary: param }, fc.constantFrom('x'.repeat(1_500), 'nope,'.repeat(250)), fc.array(param, { minLength: 2, maxLength: 40 }));
/** A query object as URLSearchParams writes it (repeated keys for arrays). */
export const queryString = (query: Record<string, string | string[]>): string =>
  new URLSearchParams(Object.entries(query).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x): [string, string] => [k, x]))).toString();
/** A read's query strings: valid values (`valid`), one hostile value among them, or hostile values throughout. */
const query = (valid: Record<string, fc.Arbitrary<string>>) => {
  const keys = [...Object.keys(valid), 'unknown'];
  const good = fc.record({ ...range, ...valid }, { requiredKeys: ['from', 'to'] }) as fc.Arbitrary<Record<string, string | string[]>>;
  const faulty = fc.tuple(good, fc.constantFrom(...keys, 'from', 'to'), paramValue).map(([q, k, v]) => ({ ...q, [k]: v }));
  const any = fc.tuple(fc.record(Object.fromEntries(keys.map((k) => [k, paramValue])), { requiredKeys: [] }), fc.boolean()).map(([q, withRange]) => ({ ...(withRange ? { from: SHAPES_FROM, to: SHAPES_TO } : {}), ...q }));
  return fc.oneof({ weight: 2, arbitrary: good }, { weight: 2, arbitrary: faulty }, { weight: 1, arbitrary: any }).filter((q) => queryString(q).length <= QUERY_MAX_CHARS);
};
const limit = (max: number) => fc.integer({ min: 1, max }).map(String);
const maybeText = fc.constantFrom('signup', '$pageview', 'google', 'direct', 'paid', 'u1');

/** The query-string reads, each with the parameters it knows (and `unknown`). */
export const QUERY_READS = {
  '/v1/query': query({ event: maybeText, source: maybeText, medium: maybeText, user_id: maybeText, limit: limit(1000) }),
  '/v1/stats': query({ metric: fc.constantFrom('count', 'uniques'), event: maybeText, group_by: fc.uniqueArray(fc.constantFrom(...STATS_GROUP_BY), { maxLength: 3 }).map((g) => g.join(',')), interval: fc.constantFrom('hour', 'day', 'week'), limit: limit(1000) }),
  '/v1/sources': query({ breakdown: fc.constantFrom('source_medium', 'source'), limit: limit(200) }),
  '/v1/properties': query({ event: maybeText, key: fc.constantFrom('plan', 'n', 'missing') }),
  '/v1/export': query({ event: maybeText, source: maybeText, medium: maybeText, user_id: maybeText, format: fc.constantFrom('ndjson', 'csv', 'parquet') }),
} as const;

/** The body reads. */
export const BODY_READS = { '/v1/insights': insightsBodyArb, '/v1/funnel': funnelBodyArb, '/v1/retention': retentionBodyArb } as const;

/** The worst bodies the issue measured, by name: each must be a quick 400 with a bounded answer. */
export const WORST_BODIES: ReadonlyArray<[string, '/v1/insights' | '/v1/funnel' | '/v1/retention', Record<string, unknown>]> = [
  ['500 copies of "visitors"', '/v1/insights', { from: SHAPES_FROM, to: SHAPES_TO, metrics: Array.from({ length: 500 }, () => 'visitors') }],
  ['8,000 copies of "visitors"', '/v1/insights', { from: SHAPES_FROM, to: SHAPES_TO, metrics: Array.from({ length: 8_000 }, () => 'visitors') }],
  ['order_by naming one metric 5,000 times', '/v1/insights', { from: SHAPES_FROM, to: SHAPES_TO, metrics: ['visitors'], order_by: Array.from({ length: 5_000 }, () => ['visitors', 'desc']) }],
  ['1.8 MB of invalid filters', '/v1/insights', { from: SHAPES_FROM, to: SHAPES_TO, filters: Array.from({ length: 60_000 }, () => ['equals', 'country', ['GB']]) }],
  ['an "or" of 60,000 conditions', '/v1/insights', { from: SHAPES_FROM, to: SHAPES_TO, filters: [['or', Array.from({ length: 60_000 }, () => ['is', 'nope', []])]] }],
  ['"or" nested 1,000 deep', '/v1/insights', { from: SHAPES_FROM, to: SHAPES_TO, filters: [nestedOr(1_000)] }],
  ['30,000 funnel steps with invalid filters', '/v1/funnel', { from: SHAPES_FROM, to: SHAPES_TO, steps: Array.from({ length: 30_000 }, () => ({ event: 'x', filters: [['equals', 'x', []]] })) }],
  ['10 funnel steps of 5,000 invalid filters each', '/v1/funnel', { from: SHAPES_FROM, to: SHAPES_TO, steps: Array.from({ length: 10 }, () => ({ event: 'x', filters: Array.from({ length: 5_000 }, () => ['equals', 'x', []]) })) }],
  ['retention goals with 60,000 invalid filters', '/v1/retention', { from: SHAPES_FROM, to: SHAPES_TO, period: 'day', start: { event: 'x', filters: Array.from({ length: 60_000 }, () => [1]) }, return: { filters: Array.from({ length: 60_000 }, () => [2]) } }],
];

// The largest bodies the schemas accept: every list at its maximum, every string at its longest, the filter values at
// their byte budget, made of the characters that grow most once escaped and URL-encoded (a backslash: 6 bytes).
const WORST_CHAR = '\\';
const NESTED_CONDITIONS = INSIGHTS_LIMITS.depth + 1;
/** The `or`s of 3 conditions besides one chain nested as deep as allowed: INSIGHTS_LIMITS.conditions in all. */
const FLAT_ORS = Math.floor((INSIGHTS_LIMITS.conditions - NESTED_CONDITIONS) / 4);
const LEAVES = 1 + FLAT_ORS * 3;

/** A filter list of INSIGHTS_LIMITS.conditions conditions (`or`s nested as deep as allowed) whose values hold about `bytes` bytes. */
export function fullFilters(bytes: number, dimension = 'path'): unknown[] {
  const perLeaf = Math.max(1, Math.floor(bytes / LEAVES));
  const count = Math.min(INSIGHTS_LIMITS.values, perLeaf);
  const leaf = (op: string) => [op, dimension, Array.from({ length: count }, () => WORST_CHAR.repeat(Math.min(INSIGHTS_LIMITS.filterValue, Math.floor(perLeaf / count))))];
  const op = (i: number) => OPS[i % OPS.length]!;
  return [nestedOr(INSIGHTS_LIMITS.depth, leaf('contains')), ...Array.from({ length: FLAT_ORS }, (_, i) => ['or', [leaf(op(i)), leaf(op(i + 1)), leaf(op(i + 2))]])];
}

const longest = (n: number) => WORST_CHAR.repeat(n);
const fullGoal = (bytes: number) => ({ event: longest(LIMITS.eventName), path: `${longest(GOAL_PATH_MAX - 1)}*`, filters: fullFilters(bytes, 'prop:plan') });
const longProp = `prop:${longest(INSIGHTS_LIMITS.propertyKey)}`;
const budget = INSIGHTS_LIMITS.valueBytes;
const fullDimensions = [longProp, 'entry_path', 'time:hour'];

/** Bodies at every maximum the schemas accept: each must be answered (200), never a 500 from the engine. */
export const LARGEST_BODIES: ReadonlyArray<[string, '/v1/insights' | '/v1/funnel' | '/v1/retention', Record<string, unknown>]> = [
  ['insights: every metric, dimension, order and condition', '/v1/insights', {
    from: SHAPES_FROM, to: SHAPES_TO, metrics: [...INSIGHT_METRICS], dimensions: fullDimensions, order_by: [...INSIGHT_METRICS, ...fullDimensions].map((n) => [n, 'asc']),
    filters: fullFilters(budget / 2), goal: fullGoal(budget / 2), compare: 'previous_period', limit: INSIGHTS_LIMITS.limit.max, include_bots: true,
  }],
  ['insights: every value byte in one condition', '/v1/insights', {
    from: SHAPES_FROM, to: SHAPES_TO, metrics: ['visitors', 'visits'], filters: [['is', 'exit_path', Array.from({ length: INSIGHTS_LIMITS.values }, () => longest(Math.floor(budget / INSIGHTS_LIMITS.values)))]],
  }],
  ['funnel: every step, condition and value', '/v1/funnel', {
    from: SHAPES_FROM, to: SHAPES_TO, steps: Array.from({ length: FUNNEL_LIMITS.steps.max }, () => fullGoal(budget / (FUNNEL_LIMITS.steps.max + 1))),
    filters: fullFilters(budget / (FUNNEL_LIMITS.steps.max + 1), 'source'), window_s: FUNNEL_LIMITS.window_s.max, count_by: 'session', breakdown: longProp, include_bots: true,
  }],
  ['retention: every period, condition and value', '/v1/retention', {
    from: SHAPES_FROM, to: new Date(Date.parse(SHAPES_FROM) + (RETENTION_MAX_PERIODS - 1) * DAY_MS).toISOString(), period: 'day', count_by: 'visitor',
    start: fullGoal(budget / 3), return: fullGoal(budget / 3), filters: fullFilters(budget / 3, 'exit_path'), include_bots: true,
  }],
];

/** A value's shape in a line: long strings and lists cut, with their sizes (a failing case of several MB, readable). */
export function shapeOf(value: unknown): string {
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return v.length > 40 ? `${v.slice(0, 20)}…(${v.length} chars)` : v;
    if (typeof v !== 'object' || v === null) return v;
    if (depth > 6) return Array.isArray(v) ? `[…(depth > 6)]` : '{…}';
    if (Array.isArray(v)) return v.length > 4 ? [...v.slice(0, 2).map((x) => walk(x, depth + 1)), `…(${v.length} items)`] : v.map((x) => walk(x, depth + 1));
    const entries = Object.entries(v);
    return Object.fromEntries([...entries.slice(0, 12).map(([k, x]) => [k.length > 40 ? `${k.slice(0, 20)}…` : k, walk(x, depth + 1)]), ...(entries.length > 12 ? [['…', `${entries.length} keys`]] : [])]);
  };
  return JSON.stringify(walk(value, 0));
}

/** An answer as the shape specs judge it: its status, its size on the wire, its JSON, and the longest event-loop stall while it was served. */
export interface Measured {
  status: number;
  bytes: number;
  json: Record<string, unknown> | undefined;
  stallMs: number;
}

/** Sends a supertest request (its body serialised beforehand) and measures the event loop's longest stall while it is served. */
async function measuredOnce(req: Test): Promise<Measured> {
  const h: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  // The histogram records a delay from its timer's second tick on: a stall before the first tick would go unseen (a
  // request served within 10 ms of enable() measured ~10 ms however long it held the loop; hostile-shapes.spec.ts).
  await new Promise((r) => setTimeout(r, 25));
  const res = await req.buffer(true).parse((r, done) => {
    const chunks: Buffer[] = [];
    r.on('data', (c: Buffer) => chunks.push(c));
    r.on('end', () => done(null, Buffer.concat(chunks)));
  });
  // A timer turn after the answer: a stall the answer came out of is recorded before it is read.
  await new Promise((r) => setTimeout(r, 15));
  h.disable();
  const raw = res.body as Buffer;
  const json = /^application\/json/.test(String(res.headers['content-type'])) ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : undefined;
  return { status: res.status, bytes: raw.length, json, stallMs: h.max / 1e6 };
}

/**
 * Sends the request `send` makes and measures it (measuredOnce). A stall past MAX_EVENT_LOOP_STALL_MS is measured once
 * more on the same request, and the shorter stall is the answer's: a shape that stalls the event loop does so every
 * time it is served, while the specs' loaded CI machine (three jest runs on two cores) can hold a process off the CPU
 * for a moment once. Only the read specs send their requests through this (a repeated read changes nothing).
 */
export async function measured(send: () => Test): Promise<Measured> {
  const first = await measuredOnce(send());
  if (first.stallMs <= MAX_EVENT_LOOP_STALL_MS) return first;
  const again = await measuredOnce(send());
  return { ...again, stallMs: Math.min(first.stallMs, again.stallMs) };
}

/** Checks `check` on `runs` generated inputs; a failure names the input by its shape (not its megabytes), unshrunk. */
export async function fuzz<T>(arb: fc.Arbitrary<T>, runs: number, check: (input: T) => Promise<void>): Promise<void> {
  const out = await fc.check(fc.asyncProperty(arb, check), { numRuns: runs, endOnFailure: true });
  if (out.failed) throw new Error(`after ${out.numRuns} runs (seed ${out.seed}), for ${shapeOf(out.counterexample?.[0])}:\n${(out.errorInstance as Error | undefined)?.message}`);
}
