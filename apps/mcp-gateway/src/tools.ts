import { z } from 'zod';
import { CLASSIFIER_RULES } from '@analytics/classifier';
import type { Access } from '@analytics/auth';
import { CHART_TOOL_META, CHART_URI, MCP_APP_MIME } from './chart-view';
import {
  CALLER_DATA_NOTE,
  INSIGHT_FILTER_OPS,
  STATS_GROUP_BY,
  eventInputSchema,
  funnelBodySchema,
  funnelResponseSchema,
  insightsBodySchema,
  insightsResponseSchema,
  propertiesParamsSchema,
  propertiesResponseSchema,
  queryParamsSchema,
  queryResponseSchema,
  queryRowSchema,
  retentionBodySchema,
  retentionResponseSchema,
  sourcesParamsSchema,
  sourcesResponseSchema,
  sourcesRowSchema,
  statsParamsSchema,
  statsResponseSchema,
  statsRowSchema,
  dimensionsText,
  finiteValuesText,
  metricsOfKind,
  trackResponseSchema,
} from '@analytics/schema';

/** The JSON Schema of a tool's arguments: libs/schema's request schema with its `.describe()` texts, and MCP-only overrides. */
function inputSchemaOf(schema: z.ZodTypeAny, overrides: Record<string, Record<string, unknown>> = {}) {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, Record<string, unknown>>; $schema?: string };
  delete json.$schema;
  for (const [name, prop] of Object.entries(json.properties ?? {})) Object.assign(prop, overrides[name] ?? {});
  return portable(json, saysSomething) as { type: 'object'; properties?: Record<string, object>; required?: string[] };
}

/** get_stats takes group_by as an array too (its length counted before any entry is looked at). */
export const getStatsArgsSchema = z.preprocess((v, ctx) => {
  if (v && typeof v === 'object' && Array.isArray((v as { group_by?: unknown }).group_by)) {
    const g = (v as { group_by: unknown[] }).group_by;
    if (g.length > STATS_GROUP_BY.length) {
      ctx.addIssue({ code: 'custom', message: `group_by: at most ${STATS_GROUP_BY.length} columns`, path: ['group_by'] });
      return z.NEVER;
    }
    return { ...v, group_by: g.every((x) => typeof x === 'string') ? g.join(',') : g };
  }
  return v;
}, statsParamsSchema);

/** An argument error returned as a tool result (`isError: true`), so the model reads which field to fix. */
const toolErrorSchema = z.object({ error: z.enum(['invalid_params', 'invalid_group_by']), details: z.looseObject({}) });
export type ToolError = z.infer<typeof toolErrorSchema>;

// A result cut to the response-size cap says so; rows are open to new columns, as the API adds them within /v1.
const truncated = z.boolean().optional();

type Schema = Record<string, unknown>;
const SAFE_BOUNDS = new Set([Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]);
const isEmpty = (v: unknown) => typeof v === 'object' && v !== null && Object.keys(v).length === 0;

/**
 * Keys that constrain nothing: zod's bounds of every integer, `{}` ("any value", which clients that want one `type` per
 * node reject), an empty `properties`, and `propertyNames: { type: "string" }` (every JSON key is a string).
 */
const saysSomething = (k: string, v: unknown) =>
  !k.startsWith('x-') &&
  !(((k === 'minimum' || k === 'maximum') && SAFE_BOUNDS.has(v as number)) || ((k === 'additionalProperties' || k === 'properties') && isEmpty(v)) || (k === 'propertyNames' && JSON.stringify(v) === '{"type":"string"}'));

/**
 * A JSON Schema with only the keys `keep` accepts, walked through its subschemas only (a field named `description`
 * survives), and `type: [T, "null"]` (zod's nullable) written `anyOf: [{ type: T }, { type: "null" }]`: clients that
 * read one `type` per node (Gemini-style function declarations) reject the array form.
 */
function portable(schema: Schema, keep: (k: string, v: unknown) => boolean): Schema {
  const sub = (v: unknown) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? portable(v as Schema, keep) : v);
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) {
    if (!keep(k, v)) continue;
    if (k === 'properties') out[k] = Object.fromEntries(Object.entries(v as Schema).map(([name, s]) => [name, sub(s)]));
    else if (k === 'anyOf' || k === 'oneOf' || k === 'allOf') out[k] = (v as unknown[]).map(sub);
    else if (k === 'items' || k === 'additionalProperties' || k === 'propertyNames' || k === 'not') out[k] = sub(v);
    else out[k] = v;
  }
  if (!Array.isArray(out.type)) return out;
  const { type, description, ...constraints } = out;
  return { ...(description !== undefined && { description }), anyOf: (type as string[]).map((t) => (t === 'null' ? { type: t } : { type: t, ...constraints })) };
}

/**
 * The output schema in few bytes (agents pay for tools/list in tokens): no `description`s (the tool descriptions give
 * them) and no `additionalProperties: false` (results are open to new fields within /v1, as rows are to new columns).
 */
const compact = (schema: Schema) => portable(schema, (k, v) => saysSomething(k, v) && k !== 'description' && !(k === 'additionalProperties' && v === false));

/** JSON Schema of a result (libs/schema's response); a validation failure's `{ error, details }` is the other branch (the SDK client checks both). */
function outputSchemaOf(result: z.ZodObject) {
  const json = z.toJSONSchema(z.union([result, toolErrorSchema]), { io: 'output' }) as { $schema?: string; anyOf: object[] };
  return { type: 'object' as const, anyOf: json.anyOf.map((branch) => compact(branch as Schema)) };
}

type Annotations = { readOnlyHint: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint: boolean };
// Reads touch nothing; track_event adds a row (no dedup: not idempotent); neither reaches beyond this service.
const READ: Annotations = { readOnlyHint: true, openWorldHint: false };
const WRITE: Annotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  access: Access;
  inputSchema: ReturnType<typeof inputSchemaOf>;
  outputSchema: ReturnType<typeof outputSchemaOf>;
  annotations: Annotations;
  /** MCP Apps: the ui:// view that renders this tool's result. */
  _meta?: typeof CHART_TOOL_META;
}

// Filters and goals in few bytes, portable: conditions are tuples, written as plain arrays (prefixItems and recursion
// are not portable); the goal's filters are the same.
const FILTERS_JSON = {
  type: 'array',
  items: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'array' }] } }] } },
  description: `All hold. [op, dimension, [values]] (op: ${INSIGHT_FILTER_OPS.join(', ')}) or ["or", [conditions]]. is/is_not take only these values (${finiteValuesText()}).`,
};
const GOAL_JSON = {
  type: 'object',
  properties: { event: { type: 'string' }, path: { type: 'string', description: 'Ending in * : a prefix.' }, filters: { type: 'array', items: FILTERS_JSON.items } },
  additionalProperties: false,
  description: 'Event and/or path, filters on that event.',
};

export const TOOLS: readonly ToolSpec[] = [
  {
    name: 'track_event',
    title: 'Track an event',
    description: 'Records one analytics event for the key\'s project, exactly like POST /v1/track (same validation, enrichment and rate limit). Needs an sk_ or ak_ key. Returns { ok, event_id }.',
    access: 'ingest',
    inputSchema: inputSchemaOf(eventInputSchema),
    outputSchema: outputSchemaOf(trackResponseSchema),
    annotations: WRITE,
  },
  {
    name: 'query_events',
    title: 'Query raw events',
    description: `Raw events of the key's project in [from, to), newest first, like GET /v1/query. Needs an rk_ key. Returns { rows }; properties is a JSON string. ${CALLER_DATA_NOTE}`,
    access: 'read',
    inputSchema: inputSchemaOf(queryParamsSchema),
    outputSchema: outputSchemaOf(queryResponseSchema.extend({ rows: z.array(queryRowSchema.loose()), truncated })),
    annotations: READ,
  },
  {
    name: 'get_stats',
    title: 'Aggregate statistics',
    description: `Event counts or unique visitors in [from, to), optionally grouped and bucketed, like GET /v1/stats. Needs an rk_ key. Returns { metric, rows } with value per row. ${CALLER_DATA_NOTE}`,
    access: 'read',
    inputSchema: inputSchemaOf(statsParamsSchema, {
      group_by: {
        anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string', enum: [...STATS_GROUP_BY] } }],
        type: undefined,
        description: `Columns to group by: an array or a comma-separated string of ${STATS_GROUP_BY.join(', ')}.`,
      },
    }),
    outputSchema: outputSchemaOf(statsResponseSchema.extend({ rows: z.array(statsRowSchema.loose()), truncated })),
    annotations: READ,
    _meta: CHART_TOOL_META,
  },
  {
    name: 'top_sources',
    title: 'Top traffic sources',
    description: `Top traffic sources by sessions' entry source/medium in [from, to), like GET /v1/sources. Needs an rk_ key. Returns { breakdown, rows: [{ source, medium?, events, uniques, paid_share }] }. ${CALLER_DATA_NOTE}`,
    access: 'read',
    inputSchema: inputSchemaOf(sourcesParamsSchema),
    outputSchema: outputSchemaOf(sourcesResponseSchema.extend({ rows: z.array(sourcesRowSchema.loose()), truncated })),
    annotations: READ,
    _meta: CHART_TOOL_META,
  },
  {
    name: 'query_insights',
    title: 'Insights: metrics by dimensions',
    description: `Metrics by 0-3 dimensions, filtered, optionally against the previous period: arguments = the POST /v1/insights body, result = its answer. Needs an rk_ key. Returns { rows }. ${CALLER_DATA_NOTE}`,
    access: 'read',
    // Shorter texts than the API document's (agents pay for tools/list); conditions and order_by entries are tuples,
    // written as plain arrays (prefixItems and recursion are not portable).
    inputSchema: inputSchemaOf(insightsBodySchema, {
      metrics: { description: `Default ["visitors"]. Visit metrics: ${metricsOfKind('visit').join(', ')}; need goal: ${metricsOfKind('goal').join(', ')}.` },
      dimensions: { description: `0-3 of: ${dimensionsText(true)}.` },
      filters: FILTERS_JSON,
      goal: { ...GOAL_JSON, description: 'For metrics conversions, conversion_rate: { event?, path?, filters? }.' },
      order_by: { type: 'array', items: { type: 'array', items: { type: 'string' } }, description: '[[metric or dimension, "asc"|"desc"]]; default: first metric desc.' },
      compare: { description: 'Adds comparison: the metrics over the equally long range before from.' },
      include_bots: { description: 'Count device_type bot too.' },
      limit: { description: 'Rows, default 100.' },
    }),
    outputSchema: outputSchemaOf(insightsResponseSchema.extend({ truncated })),
    annotations: READ,
  },
  {
    name: 'get_funnel',
    title: 'Conversion funnel',
    description: `Entities reaching each of 2-10 ordered steps within window_s of step 1: arguments = the POST /v1/funnel body, result = its answer (breakdown: { value, steps } per value). Needs an rk_ key. ${CALLER_DATA_NOTE}`,
    access: 'read',
    inputSchema: inputSchemaOf(funnelBodySchema, {
      steps: { type: 'array', items: GOAL_JSON, description: '2-10 goals, in order.' },
      window_s: { description: 'Default 86400.' },
      count_by: { description: 'Default visitor.' },
      breakdown: { description: 'A dimension of query_insights but time:*.' },
      filters: FILTERS_JSON,
      include_bots: { description: 'Count device_type bot too.' },
    }),
    // Each breakdown value's steps are shaped as `steps` (the description says so): written once.
    outputSchema: outputSchemaOf(funnelResponseSchema.extend({ breakdown: z.array(z.looseObject({})).optional(), truncated })),
    annotations: READ,
  },
  {
    name: 'get_retention',
    title: 'Retention cohorts',
    description: `Cohorts by the period of each entity's first start event, and how many came back each later period: arguments = the POST /v1/retention body, result = its answer. Needs an rk_ key. ${CALLER_DATA_NOTE}`,
    access: 'read',
    inputSchema: inputSchemaOf(retentionBodySchema, {
      period: { description: 'day, week (from Monday) or month, UTC.' },
      count_by: { description: 'Default user.' },
      start: { ...GOAL_JSON, description: 'Default any event.' },
      return: { ...GOAL_JSON, description: 'Default any event.' },
      filters: FILTERS_JSON,
      include_bots: { description: 'Count device_type bot too.' },
    }),
    outputSchema: outputSchemaOf(retentionResponseSchema),
    annotations: READ,
  },
  {
    name: 'list_properties',
    title: 'Property keys and values',
    description: `Property keys in [from, to), most used first, or with key its values, like GET /v1/properties (for prop:<key>). Needs an rk_ key. ${CALLER_DATA_NOTE}`,
    access: 'read',
    inputSchema: inputSchemaOf(propertiesParamsSchema),
    outputSchema: outputSchemaOf(propertiesResponseSchema.extend({ truncated })),
    annotations: READ,
  },
];

/** One line naming each bad field, for the model to read (`from: Invalid ISO date; to: Required`); as long as the capped details. */
export function toolErrorText(error: ToolError): string {
  const issues = (error.details.issues as Array<{ path: string; message: string }> | undefined) ?? [];
  const parts = issues.length > 0 ? issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)) : [String(error.details.message ?? 'invalid arguments')];
  return `${error.error}: ${parts.join('; ')}${error.details.truncated ? '; (more issues left out)' : ''}`;
}

export const RESOURCES = [
  { uri: 'analytics://project', name: 'project', title: 'This key\'s project', description: 'id, name, retention_days and allowed_origins of the project that owns the key.', mimeType: 'application/json' },
  { uri: 'analytics://schema/events', name: 'event-schema', title: 'Stored event columns', description: 'The columns of a stored event and what each means.', mimeType: 'application/json' },
  { uri: 'analytics://classifier/rules', name: 'classifier-rules', title: 'Traffic-source rules', description: 'The 13 classification rules, in order, with their rule_ids.', mimeType: 'application/json' },
  { uri: CHART_URI, name: 'chart', title: 'Chart view (MCP Apps)', description: 'Renders get_stats and top_sources results as bars, in hosts that support MCP Apps.', mimeType: MCP_APP_MIME },
] as const;

export { CLASSIFIER_RULES };
