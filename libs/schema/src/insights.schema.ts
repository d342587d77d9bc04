import { z } from 'zod';
import { eventNameSchema, toWellFormed } from './ingest.schema';
import { type RangeBound, type ReadRange, clampToAcceptedRange, isoBoundParam, isoDateParam, readRangeOf } from './iso-date';
import { annotationSchema } from './annotations.schema';
import {
  COLUMN_DIMENSIONS,
  FINITE_DIMENSION_VALUES,
  INSIGHT_METRICS,
  INSIGHT_TIME_DIMENSIONS,
  type InsightColumnDimension,
  type InsightMetric,
  type InsightTimeDimension,
  dimensionsText,
  finiteValuesText,
  metricsText,
  metricsOfKind,
} from './catalog';

// POST /v1/insights and GET /v1/properties (issue 30). The meanings of every metric and dimension: docs/insights.md.

// The metrics and dimensions themselves (names, kinds, meanings, finite values) are the catalog's (catalog.ts).
/** The metrics that need a `goal`. */
export const GOAL_METRICS: readonly InsightMetric[] = metricsOfKind('goal');

/**
 * The column dimensions by kind (from the catalog): an `event` dimension is a value of each event, a `visit` dimension
 * one value per visit (its entry or exit). `prop:<key>` and `time:*` are event dimensions too.
 */
export const INSIGHT_DIMENSION_KINDS = Object.fromEntries(Object.entries(COLUMN_DIMENSIONS).map(([name, d]) => [name, d.kind])) as {
  readonly [D in InsightColumnDimension]: (typeof COLUMN_DIMENSIONS)[D]['kind'];
};
/** A dimension as the request names it: a column, `prop:<key>` or `time:<grain>`. */
export type InsightDimension = InsightColumnDimension | InsightTimeDimension | `prop:${string}`;

export const INSIGHT_FILTER_OPS = ['is', 'is_not', 'contains', 'not_contains'] as const;
export type InsightFilterOp = (typeof INSIGHT_FILTER_OPS)[number];
export type InsightCondition = { op: InsightFilterOp; dimension: Exclude<InsightDimension, InsightTimeDimension>; values: string[] } | { op: 'or'; conditions: InsightCondition[] };

const MAX_DIMENSIONS = 3;

/**
 * Every list of a read body has a maximum, checked on the list's length before any element is parsed: a list of a
 * million entries costs what one too many does. docs/insights.md and docs/conversions.md.
 */
export const INSIGHTS_LIMITS = {
  /** Metrics in a request, each at most once: at most every metric there is. */
  metrics: INSIGHT_METRICS.length,
  dimensions: MAX_DIMENSIONS,
  /** order_by entries: at most one per requested metric and dimension. */
  orderBy: INSIGHT_METRICS.length + MAX_DIMENSIONS,
  limit: { max: 10_000, default: 100 },
  /** Conditions in a filter list, counting those inside `or`s; values per condition; nesting of `or`. */
  conditions: 32,
  values: 100,
  depth: 3,
  /**
   * Bytes (UTF-8) of all filter values of a request together (its filters, its goal's, each funnel step's): each is a
   * bound parameter, and even escaped and URL-encoded (6 bytes a byte at worst) one stays under a ClickHouse server's
   * 128 KiB limit on an HTTP field (http_max_field_value_size), all of them under its 1 MiB URI limit.
   */
  valueBytes: 16 * 1024,
  propertyKey: 256,
  filterValue: 1024,
  /** Rows GET /v1/properties answers at most. */
  properties: 1000,
} as const;

const COLUMN_NAMES = Object.keys(COLUMN_DIMENSIONS) as InsightColumnDimension[];
const PROP = 'prop:';
const allowedDimensions = (withTime: boolean) => [...COLUMN_NAMES, 'prop:<key>', ...(withTime ? INSIGHT_TIME_DIMENSIONS : [])];
const oneOf = (what: string, allowed: readonly string[]) => `unknown ${what}: allowed are ${allowed.join(', ')}`;

/** Whether `name` is a dimension; `filterable`: time dimensions are not. */
export function isInsightDimension(name: string, filterable = false): name is InsightDimension {
  if (name.startsWith(PROP)) return name.length > PROP.length && name.length <= PROP.length + INSIGHTS_LIMITS.propertyKey;
  return (COLUMN_NAMES as string[]).includes(name) || (!filterable && (INSIGHT_TIME_DIMENSIONS as readonly string[]).includes(name));
}

/** The kind of a dimension: `visit` for the entry/exit ones, `event` for every other (prop and time included). */
export function dimensionKind(d: InsightDimension): 'event' | 'visit' {
  return (INSIGHT_DIMENSION_KINDS as Record<string, 'event' | 'visit'>)[d] ?? 'event';
}

const dimensionSchema = z
  .string()
  .refine((d) => isInsightDimension(d), { error: oneOf('dimension', allowedDimensions(true)) })
  .transform((d) => d as InsightDimension);

export type FilterIssue = { path: Array<string | number>; message: string };

const CONDITION_SHAPE = 'a condition is [op, dimension, [values...]] or ["or", [conditions...]]';
const TOO_MANY_CONDITIONS = `at most ${INSIGHTS_LIMITS.conditions} conditions in all, counting those inside "or"s`;

/**
 * Checks one filter condition (`[op, dimension, [values]]` or `["or", [conditions]]`); returns it typed or null. An
 * `or`'s list is counted against `count` (the conditions left) before any of it is looked at.
 */
function parseCondition(raw: unknown, path: Array<string | number>, depth: number, issues: FilterIssue[], count: { left: number }): InsightCondition | null {
  const ops = [...INSIGHT_FILTER_OPS, 'or'];
  if (!Array.isArray(raw) || raw.length === 0 || typeof raw[0] !== 'string') {
    issues.push({ path, message: CONDITION_SHAPE });
    return null;
  }
  const op = raw[0];
  if (op === 'or') {
    if (raw.length !== 2 || !Array.isArray(raw[1]) || raw[1].length === 0) {
      issues.push({ path, message: '"or" takes one non-empty array of conditions: ["or", [condition, ...]]' });
      return null;
    }
    if (depth >= INSIGHTS_LIMITS.depth) {
      issues.push({ path, message: `"or" may be nested at most ${INSIGHTS_LIMITS.depth} deep` });
      return null;
    }
    const list = raw[1] as unknown[];
    count.left -= list.length;
    if (count.left < 0) {
      issues.push({ path: [...path, 1], message: TOO_MANY_CONDITIONS });
      return null;
    }
    const inner = list.map((c, i) => parseCondition(c, [...path, 1, i], depth + 1, issues, count));
    return inner.every((c) => c !== null) ? { op: 'or', conditions: inner as InsightCondition[] } : null;
  }
  if (!(INSIGHT_FILTER_OPS as readonly string[]).includes(op)) {
    issues.push({ path: [...path, 0], message: oneOf('operator', ops) });
    return null;
  }
  if (raw.length !== 3) {
    issues.push({ path, message: `a condition is [op, dimension, [values...]]: ${JSON.stringify(op.slice(0, 40))} takes a dimension and an array of values` });
    return null;
  }
  const [, dimension, values] = raw as [string, unknown, unknown];
  let ok = true;
  if (typeof dimension !== 'string' || !isInsightDimension(dimension, true)) {
    issues.push({ path: [...path, 1], message: oneOf('filter dimension', allowedDimensions(false)) });
    ok = false;
  }
  // The length first: a list of a million values is refused without looking at them.
  if (!Array.isArray(values) || values.length === 0 || values.length > INSIGHTS_LIMITS.values || !values.every((v) => typeof v === 'string' && v.length <= INSIGHTS_LIMITS.filterValue)) {
    issues.push({ path: [...path, 2], message: `values: an array of 1 to ${INSIGHTS_LIMITS.values} strings of at most ${INSIGHTS_LIMITS.filterValue} characters` });
    ok = false;
  }
  // `is`/`is_not` with a value a finite dimension cannot hold (channel "AI assistants") would silently match nothing
  // (or everything): refused, naming the values there are.
  const finite = ok && (op === 'is' || op === 'is_not') ? FINITE_DIMENSION_VALUES[dimension as InsightColumnDimension] : undefined;
  const impossible = finite ? (values as string[]).find((v) => !finite.includes(v)) : undefined;
  if (finite && impossible !== undefined) {
    issues.push({ path: [...path, 2], message: `${dimension as string} is one of ${finite.join(', ')}: ${JSON.stringify(impossible.slice(0, 40))} is none of them (values are case-sensitive)` });
    ok = false;
  }
  return ok ? { op: op as InsightFilterOp, dimension: dimension as Exclude<InsightDimension, InsightTimeDimension>, values: (values as string[]).map(toWellFormed) } : null;
}

const FILTERS_TEXT =
  'Conditions that must all hold. A condition is [op, dimension, [values...]] with op one of is, is_not, contains, not_contains (values: strings; ' +
  `contains is case-sensitive), or ["or", [condition, ...]]. Any dimension but time:* may be filtered. At most ${INSIGHTS_LIMITS.conditions} conditions ` +
  `in all (counting those inside "or"s, nested at most ${INSIGHTS_LIMITS.depth} deep), ${INSIGHTS_LIMITS.values} values each; ` +
  `${INSIGHTS_LIMITS.valueBytes / 1024} KiB of values in all, every filter list of the request together. ` +
  `is and is_not take only the values a finite dimension holds (${finiteValuesText()}).`;

/** A filter list as sent: at most INSIGHTS_LIMITS.conditions conditions of at most 3 entries, both counted before any is parsed. */
export const filterListSchema = (text: string) =>
  z
    .array(z.array(z.unknown(), { error: CONDITION_SHAPE }).max(3, { error: CONDITION_SHAPE }), { error: 'filters: an array of conditions' })
    .max(INSIGHTS_LIMITS.conditions, { error: TOO_MANY_CONDITIONS })
    .default([])
    // The finite dimensions' values, machine-readable beside the text (OpenAPI; the MCP tools put them in the text).
    .meta({ description: text, 'x-dimension-values': FINITE_DIMENSION_VALUES });

/** Checks a list of filter conditions (at most INSIGHTS_LIMITS.conditions in all); returns them typed, or null with `issues` filled. */
export function parseFilters(raw: unknown[][], path: Array<string | number>, issues: FilterIssue[]): InsightCondition[] | null {
  const count = { left: INSIGHTS_LIMITS.conditions - raw.length };
  if (count.left < 0) {
    issues.push({ path, message: TOO_MANY_CONDITIONS });
    return null;
  }
  const before = issues.length;
  const out = raw.map((c, i) => parseCondition(c, [...path, i], 0, issues, count));
  return issues.length === before ? (out as InsightCondition[]) : null;
}

/** The UTF-8 bytes of every value of these conditions (`or`s included): what INSIGHTS_LIMITS.valueBytes bounds per request. */
export function filterValueBytes(conditions: readonly InsightCondition[]): number {
  return conditions.reduce((n, c) => n + (c.op === 'or' ? filterValueBytes(c.conditions) : c.values.reduce((m, v) => m + Buffer.byteLength(v, 'utf8'), 0)), 0);
}

/**
 * The issue of a request whose filter values (all its lists together) are over INSIGHTS_LIMITS.valueBytes; none when
 * within. A goal whose filters failed reaches its body's refinement unparsed (its issues already reported): not counted.
 */
export function valueBytesIssues(lists: ReadonlyArray<readonly InsightCondition[] | null | undefined>): FilterIssue[] {
  const parsed = lists.filter((l): l is readonly InsightCondition[] => Array.isArray(l) && l.every((c) => !Array.isArray(c)));
  const bytes = parsed.reduce((n, l) => n + filterValueBytes(l), 0);
  return bytes > INSIGHTS_LIMITS.valueBytes ? [{ path: [], message: `filter values: at most ${INSIGHTS_LIMITS.valueBytes} bytes (UTF-8) in all, every filter list of the request together (got ${bytes})` }] : [];
}

/** A goal (issue 31): what an event must be to count, as a checked request gives it. */
export interface Goal {
  event?: string;
  /** An exact path, or a prefix when `prefix`. */
  path?: string;
  prefix: boolean;
  filters: InsightCondition[];
}

export const GOAL_PATH_MAX = 1024;
/**
 * `{ event?, path?, filters? }`, at least one of event and path: an event completes the goal when it has that name,
 * that path (exactly, or starting with what precedes a final `*`) and every filter holds for it.
 */
export const goalSchema = z
  .object({
    event: eventNameSchema.optional().describe('The event name (e.g. "signup", "$pageview").'),
    path: z.string().min(1).max(GOAL_PATH_MAX).transform(toWellFormed).optional().describe('The path, exactly; ending in `*`: any path starting with what precedes it (e.g. "/blog/*").'),
    filters: filterListSchema('Conditions the event must also meet, as the request\'s `filters`.'),
  })
  .strict()
  .superRefine((g, ctx) => {
    if (g.event === undefined && g.path === undefined) ctx.addIssue({ code: 'custom', message: 'a goal names an event, a path, or both', path: [] });
    if (g.path === '*') ctx.addIssue({ code: 'custom', message: 'path "*" matches every path: give a prefix before the `*`, or leave path out', path: ['path'] });
    const issues: FilterIssue[] = [];
    parseFilters(g.filters, ['filters'], issues);
    for (const issue of issues) ctx.addIssue({ code: 'custom', ...issue });
  })
  .transform((g): Goal => {
    const prefix = g.path?.endsWith('*') ?? false;
    return {
      ...(g.event !== undefined ? { event: g.event } : {}),
      ...(g.path !== undefined ? { path: prefix ? g.path.slice(0, -1) : g.path } : {}),
      prefix,
      filters: parseFilters(g.filters, ['filters'], [])!,
    };
  });
export type GoalInput = z.input<typeof goalSchema>;

/** A saved goal named by its id (docs/saved-and-shared.md): resolved to its definition before the read runs. */
export interface GoalRef {
  id: string;
}
/** Ids of saved definitions are UUIDs; anything up to this length is looked up (and not found), anything longer refused. */
export const SAVED_ID_MAX = 64;
const savedIdSchema = (what: string) => z.string().min(1).max(SAVED_ID_MAX).describe(what);
export const goalRefSchema = z.object({ id: savedIdSchema('The id of a goal saved for the project (GET /v1/goals).') }).strict();

const jsonOf = (schema: z.ZodType): Record<string, unknown> => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};
const isRef = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.hasOwn(v, 'id');

/**
 * A goal inline (`{ event?, path?, filters? }`) or a saved one by id (`{ id }`): an object with `id` is checked as a
 * reference (nothing else beside it), any other as a goal, so each answers its own issues (not a union's "Invalid input").
 */
export const goalOrRefSchema = z
  .unknown()
  .transform((v, ctx): Goal | GoalRef => {
    const r = isRef(v) ? goalRefSchema.safeParse(v) : goalSchema.safeParse(v);
    if (r.success) return r.data;
    for (const issue of r.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path as Array<string | number> });
    return z.NEVER;
  })
  .meta({ anyOf: [jsonOf(goalRefSchema), jsonOf(goalSchema)] });

/** Whether a goal is a reference to a saved one. */
export const isGoalRef = (g: Goal | GoalRef): g is GoalRef => 'id' in g;

/** `segment`: a saved segment's id; its filters hold beside the request's own (all must). */
export const segmentRefSchema = savedIdSchema('The id of a segment saved for the project (GET /v1/segments): its filters must hold too, beside `filters`.');

const orderEntry = z.tuple([z.string(), z.enum(['asc', 'desc'], { error: 'direction: allowed are asc, desc' })]);
/** Names that occur more than once in `names`, each once. */
const repeated = (names: readonly string[]) => [...new Set(names.filter((n, i) => names.indexOf(n) !== i))];

const insightsFields = {
  from: isoBoundParam().describe('Start of the range, ISO 8601, inclusive.'),
  to: isoBoundParam().describe('End of the range, ISO 8601, exclusive.'),
  metrics: z
    .array(z.enum(INSIGHT_METRICS, { error: oneOf('metric', INSIGHT_METRICS) }))
    .min(1)
    .max(INSIGHTS_LIMITS.metrics, { error: `at most ${INSIGHTS_LIMITS.metrics} metrics, each named once` })
    .default(['visitors'])
    .describe(`1 or more, each at most once (default ["visitors"]): ${metricsText()}.`),
  dimensions: z
    .array(dimensionSchema)
    .max(INSIGHTS_LIMITS.dimensions, { error: `at most ${INSIGHTS_LIMITS.dimensions} dimensions` })
    .default([])
    .describe(`0 to 3 of: ${dimensionsText(true)}. Finite values: ${finiteValuesText()}.`),
  filters: filterListSchema(FILTERS_TEXT),
  compare: z
    .enum(['previous_period'], { error: 'compare: allowed is previous_period' })
    .optional()
    .describe('previous_period: each row gains `comparison`, the same metrics over the range of the same length just before `from` (when `to` is after now: as long as `from` to now), and the answer `compare_range`, the range compared.'),
  order_by: z
    .array(orderEntry)
    .max(INSIGHTS_LIMITS.orderBy, { error: 'order_by: at most one entry per requested metric and dimension' })
    .optional()
    .describe('[[metric or dimension, "asc" | "desc"], ...], each requested metric or dimension at most once; default: the first metric descending. Ties: dimensions ascending.'),
  limit: z.number().int().min(1).max(INSIGHTS_LIMITS.limit.max).default(INSIGHTS_LIMITS.limit.default).describe('Maximum rows, 1 to 10000 (default 100).'),
  include_bots: z.boolean().default(false).describe('Count events of device_type bot too (left out by default).'),
};

/** The parsed fields every insights body's checks read (the goal inline, or a reference: its filters are then the saved goal's). */
interface InsightsChecked {
  from: RangeBound;
  to: RangeBound;
  metrics: InsightMetric[];
  dimensions: InsightDimension[];
  filters: unknown[][];
  order_by?: Array<[string, 'asc' | 'desc']>;
  goal?: object;
}
const goalFiltersOf = (goal: object | undefined) => (goal && 'filters' in goal ? (goal.filters as InsightCondition[]) : undefined);

function checkInsights(v: InsightsChecked, ctx: z.RefinementCtx): void {
  if (v.goal === undefined && v.metrics.some((m) => GOAL_METRICS.includes(m))) ctx.addIssue({ code: 'custom', message: 'conversions and conversion_rate need a `goal`: { event?, path?, filters? } or { id } of a saved goal', path: ['goal'] });
  if (v.to.ms <= v.from.ms) ctx.addIssue({ code: 'custom', message: '`to` must be after `from`', path: ['to'] });
  const issues: FilterIssue[] = [];
  issues.push(...valueBytesIssues([parseFilters(v.filters, ['filters'], issues), goalFiltersOf(v.goal)]));
  const twice = repeated(v.metrics);
  if (twice.length > 0) issues.push({ path: ['metrics'], message: `each metric at most once: ${twice.join(', ')} named twice` });
  if (repeated(v.dimensions).length > 0) issues.push({ path: ['dimensions'], message: 'a dimension is named twice' });
  const orderable: string[] = [...v.metrics, ...v.dimensions];
  const ordered = (v.order_by ?? []).map(([name]) => name);
  if (ordered.length > orderable.length) issues.push({ path: ['order_by'], message: `order_by: at most one entry per requested metric and dimension (${orderable.length} here)` });
  else if (repeated(ordered).length > 0) issues.push({ path: ['order_by'], message: `order_by names each metric or dimension at most once: ${repeated(ordered).join(', ')} named twice` });
  ordered.forEach((name, i) => {
    if (!orderable.includes(name)) issues.push({ path: ['order_by', i, 0], message: `order_by names a requested metric or dimension: allowed are ${orderable.join(', ')}` });
  });
  for (const issue of issues) ctx.addIssue({ code: 'custom', ...issue });
}

function finishInsights<T extends InsightsChecked>(v: T): Omit<T, 'filters' | 'order_by' | 'from' | 'to'> & ReadRange & { filters: InsightCondition[]; order_by?: Array<[InsightMetric | InsightDimension, 'asc' | 'desc']> } {
  const filters = parseFilters(v.filters, ['filters'], [])!;
  // An empty order_by asks for no order: the default's (it was an ORDER BY of nothing, a 500).
  const order_by = v.order_by?.length ? (v.order_by as Array<[InsightMetric | InsightDimension, 'asc' | 'desc']>) : undefined;
  return { ...v, ...readRangeOf(v.from, v.to), filters, order_by };
}

/** An insights read with every definition inline: what queryInsights runs. */
export const insightsBodySchema = z
  .object({
    ...insightsFields,
    goal: goalSchema.optional().describe('What completes a conversion, for the metrics conversions and conversion_rate: { event?, path?, filters? }.'),
  })
  .strict()
  .superRefine(checkInsights)
  .transform(finishInsights);

/**
 * POST /v1/insights as sent: the goal may be a saved one's `{ id }`, and `segment` a saved segment's id (both resolved
 * in the capability layer, libs/event-store capabilities.ts, into an insightsBodySchema read).
 */
export const insightsRequestSchema = z
  .object({
    ...insightsFields,
    goal: goalOrRefSchema.optional().describe('What completes a conversion, for the metrics conversions and conversion_rate: { event?, path?, filters? }, or { id } of a saved goal.'),
    segment: segmentRefSchema.optional(),
  })
  .strict()
  .superRefine(checkInsights)
  .transform(finishInsights);
export type InsightsRequest = z.output<typeof insightsRequestSchema>;

export type InsightsBody = z.input<typeof insightsBodySchema>;
export type InsightsQuery = z.output<typeof insightsBodySchema>;

const cell = z.union([z.string(), z.number(), z.null()]);
export const insightsRowSchema = z
  .record(z.string(), z.union([cell, z.record(z.string(), z.number())]))
  .describe('One row: each requested dimension by name (string, or null where the value is absent), each requested metric by name (number), and with compare `comparison`: { <metric>: number }.');
export const compareRangeSchema = z.object({ from: z.string(), to: z.string() }).describe('With compare: the previous range compared, ISO 8601 [from, to).');
export const insightsResponseSchema = z
  .object({
    rows: z.array(insightsRowSchema),
    compare_range: compareRangeSchema.optional(),
    annotations: z
      .array(annotationSchema)
      .optional()
      .describe('With a time:* dimension: the project\'s annotations in the range, oldest first (what may explain a spike or a dip); absent otherwise.'),
  })
  .describe('Metrics by dimensions; one row of totals without dimensions.');

export const propertiesParamsSchema = z
  .object({
    from: isoDateParam().describe('Start of the range, ISO 8601, inclusive.'),
    to: isoDateParam().describe('End of the range, ISO 8601, exclusive.'),
    event: eventNameSchema.optional().describe('Only events of this name.'),
    key: z.string().min(1).max(INSIGHTS_LIMITS.propertyKey).transform(toWellFormed).optional().describe('A property key: answers its values instead of the keys.'),
  })
  .refine((v) => v.to > v.from, { message: '`to` must be after `from`', path: ['to'] })
  .transform((v) => ({ ...v, from: clampToAcceptedRange(v.from), to: clampToAcceptedRange(v.to) }));
export type PropertiesParams = z.output<typeof propertiesParamsSchema>;

export const propertiesResponseSchema = z
  .object({
    rows: z.array(
      z.object({
        key: z.string().optional().describe('A top-level key of `properties` (without `key`).'),
        value: z.string().optional().describe('A value of the key, as a string (with `key`).'),
        events: z.number().int().describe('Events in the range that have it.'),
      }),
    ),
  })
  .describe(`Property keys most used first, or with \`key\` its values; at most ${INSIGHTS_LIMITS.properties} rows.`);
export type PropertiesResponse = z.output<typeof propertiesResponseSchema>;
export type InsightsRow = Record<string, string | number | null | Record<string, number>>;
export type InsightsResponse = { rows: InsightsRow[]; compare_range?: { from: string; to: string }; annotations?: z.output<typeof annotationSchema>[] };
