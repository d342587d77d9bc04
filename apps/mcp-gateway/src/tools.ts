import { z } from 'zod';
import { CLASSIFIER_RULES } from '@analytics/classifier';
import type { Access } from '@analytics/auth';
import { CHART_TOOL_META, CHART_URI, MCP_APP_MIME } from './chart-view';
import { CALLER_DATA_NOTE, QUERY_ROW_COLUMNS, STATS_GROUP_BY, eventInputSchema, queryParamsSchema, sourcesParamsSchema, statsParamsSchema } from '@analytics/schema';

/** What an agent sees for each argument (merged into the JSON schemas derived from libs/schema). */
const DESCRIPTIONS: Record<string, string> = {
  event: 'Event name, 1-128 chars; snake_case by convention (e.g. agent_task_started, tool_called). Names starting with $ are reserved.',
  event_id: 'Optional id (join key); a UUID is generated when omitted. No deduplication.',
  timestamp: 'ISO 8601; defaults to the server clock at arrival.',
  anonymous_id: 'Caller-supplied anonymous id (1-128 chars); generated when neither it nor user_id is sent.',
  user_id: 'Known user id (1-256 chars).',
  session_id: 'Session id; defaults to <anonymous_id>-<30-minute bucket>.',
  url: 'Page or resource URL (valid URL, <= 2048 chars); utm_* and click ids in it drive source classification.',
  path: 'Path (<= 2048 chars); defaults to the url path.',
  referrer: 'Referrer URL (<= 2048 chars).',
  properties: 'Free-form JSON object, at most 8 KB once stringified. Never put emails, names or addresses here.',
  from: 'Start of the range, ISO 8601, inclusive.',
  to: 'End of the range, ISO 8601, exclusive.',
  source: 'Only events of this traffic source (e.g. google, direct, newsletter).',
  medium: 'Only events of this medium (e.g. paid, organic, social, email, referral, direct).',
  limit: 'Maximum rows.',
  metric: 'count (events, default) or uniques (distinct anonymous_id, an estimate).',
  group_by: `Columns to group by: an array or a comma-separated string of ${STATS_GROUP_BY.join(', ')}.`,
  interval: 'hour, day or week (weeks start Monday, UTC): adds a bucket column "YYYY-MM-DD HH:MM:SS".',
  breakdown: 'source_medium (default: one row per source and medium) or source.',
};

function inputSchemaOf(schema: z.ZodTypeAny, overrides: Record<string, unknown> = {}) {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, Record<string, unknown>>; $schema?: string };
  delete json.$schema;
  for (const [name, prop] of Object.entries(json.properties ?? {})) {
    Object.assign(prop, overrides[name] ?? {});
    if (DESCRIPTIONS[name]) prop.description = DESCRIPTIONS[name];
  }
  return json as { type: 'object'; properties?: Record<string, object>; required?: string[] };
}

/** get_stats takes group_by as an array too. */
export const getStatsArgsSchema = z.preprocess((v) => {
  if (v && typeof v === 'object' && Array.isArray((v as { group_by?: unknown }).group_by)) {
    const g = (v as { group_by: unknown[] }).group_by;
    return { ...v, group_by: g.every((x) => typeof x === 'string') ? g.join(',') : g };
  }
  return v;
}, statsParamsSchema);

/** An argument error returned as a tool result (`isError: true`), so the model reads which field to fix. */
const toolErrorSchema = z.object({ error: z.enum(['invalid_params', 'invalid_group_by']), details: z.looseObject({}) });
export type ToolError = z.infer<typeof toolErrorSchema>;

const truncated = z.boolean().optional();
const cell = z.string().nullable();
// Row shapes follow libs/schema: the query columns, the stats group-by columns, the sources row.
const queryRow = z.object(Object.fromEntries(QUERY_ROW_COLUMNS.map((c) => [c, cell]))).catchall(cell);
const statsRow = z.object({ value: z.number(), bucket: z.string().optional(), ...Object.fromEntries(STATS_GROUP_BY.map((c) => [c, cell.optional()])) });
const sourcesRow = z.object({ source: z.string(), medium: z.string().optional(), events: z.number(), uniques: z.number(), paid_share: z.number() });

/** JSON Schema of a result; a validation failure's `{ error, details }` is the other branch (the SDK client checks both). */
function outputSchemaOf(result: z.ZodObject) {
  const json = z.toJSONSchema(z.union([result, toolErrorSchema]), { io: 'output' }) as { $schema?: string; anyOf: object[] };
  return { type: 'object' as const, anyOf: json.anyOf };
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

export const TOOLS: readonly ToolSpec[] = [
  {
    name: 'track_event',
    title: 'Track an event',
    description: 'Records one analytics event for the key\'s project, exactly like POST /v1/track (same validation, enrichment and rate limit). Needs an sk_ or ak_ key. Returns { ok, event_id }.',
    access: 'ingest',
    inputSchema: inputSchemaOf(eventInputSchema),
    outputSchema: outputSchemaOf(z.object({ ok: z.literal(true), event_id: z.string() })),
    annotations: WRITE,
  },
  {
    name: 'query_events',
    title: 'Query raw events',
    description: `Raw events of the key's project in [from, to), newest first, like GET /v1/query. Needs an rk_ key. Returns { rows }; properties is a JSON string. ${CALLER_DATA_NOTE}`,
    access: 'read',
    inputSchema: inputSchemaOf(queryParamsSchema),
    outputSchema: outputSchemaOf(z.object({ rows: z.array(queryRow), truncated })),
    annotations: READ,
  },
  {
    name: 'get_stats',
    title: 'Aggregate statistics',
    description: `Event counts or unique visitors in [from, to), optionally grouped and bucketed, like GET /v1/stats. Needs an rk_ key. Returns { metric, rows } with value per row. ${CALLER_DATA_NOTE}`,
    access: 'read',
    inputSchema: inputSchemaOf(statsParamsSchema, {
      group_by: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string', enum: [...STATS_GROUP_BY] } }], type: undefined },
    }),
    outputSchema: outputSchemaOf(z.object({ metric: z.enum(['count', 'uniques']), rows: z.array(statsRow), truncated })),
    annotations: READ,
    _meta: CHART_TOOL_META,
  },
  {
    name: 'top_sources',
    title: 'Top traffic sources',
    description: `Top traffic sources by sessions' entry source/medium in [from, to), like GET /v1/sources. Needs an rk_ key. Returns { breakdown, rows: [{ source, medium?, events, uniques, paid_share }] }. ${CALLER_DATA_NOTE}`,
    access: 'read',
    inputSchema: inputSchemaOf(sourcesParamsSchema),
    outputSchema: outputSchemaOf(z.object({ breakdown: z.enum(['source_medium', 'source']), rows: z.array(sourcesRow), truncated })),
    annotations: READ,
    _meta: CHART_TOOL_META,
  },
];

/** One line naming each bad field, for the model to read (`from: Invalid ISO date; to: Required`). */
export function toolErrorText(error: ToolError): string {
  const issues = (error.details.issues as Array<{ path: string; message: string }> | undefined) ?? [];
  const parts = issues.length > 0 ? issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)) : [String(error.details.message ?? 'invalid arguments')];
  return `${error.error}: ${parts.join('; ')}`;
}

export const RESOURCES = [
  { uri: 'analytics://project', name: 'project', title: 'This key\'s project', description: 'id, name, retention_days and allowed_origins of the project that owns the key.', mimeType: 'application/json' },
  { uri: 'analytics://schema/events', name: 'event-schema', title: 'Stored event columns', description: 'The columns of a stored event and what each means.', mimeType: 'application/json' },
  { uri: 'analytics://classifier/rules', name: 'classifier-rules', title: 'Traffic-source rules', description: 'The 13 classification rules, in order, with their rule_ids.', mimeType: 'application/json' },
  { uri: CHART_URI, name: 'chart', title: 'Chart view (MCP Apps)', description: 'Renders get_stats and top_sources results as bars, in hosts that support MCP Apps.', mimeType: MCP_APP_MIME },
] as const;

export { CLASSIFIER_RULES };
