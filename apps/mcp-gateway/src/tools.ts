import { z } from 'zod';
import { CLASSIFIER_RULES } from '@analytics/classifier';
import type { Access } from '@analytics/auth';
import { STATS_GROUP_BY, eventInputSchema, queryParamsSchema, sourcesParamsSchema, statsParamsSchema } from '@analytics/schema';

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

export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  access: Access;
  inputSchema: ReturnType<typeof inputSchemaOf>;
}

export const TOOLS: readonly ToolSpec[] = [
  {
    name: 'track_event',
    title: 'Track an event',
    description: 'Records one analytics event for the key\'s project, exactly like POST /v1/track (same validation, enrichment and rate limit). Needs an sk_ or ak_ key. Returns { ok, event_id }.',
    access: 'ingest',
    inputSchema: inputSchemaOf(eventInputSchema),
  },
  {
    name: 'query_events',
    title: 'Query raw events',
    description: 'Raw events of the key\'s project in [from, to), newest first, like GET /v1/query. Needs an rk_ key. Returns { rows }; properties is a JSON string.',
    access: 'read',
    inputSchema: inputSchemaOf(queryParamsSchema),
  },
  {
    name: 'get_stats',
    title: 'Aggregate statistics',
    description: 'Event counts or unique visitors in [from, to), optionally grouped and bucketed, like GET /v1/stats. Needs an rk_ key. Returns { metric, rows } with value per row.',
    access: 'read',
    inputSchema: inputSchemaOf(statsParamsSchema, {
      group_by: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string', enum: [...STATS_GROUP_BY] } }], type: undefined },
    }),
  },
  {
    name: 'top_sources',
    title: 'Top traffic sources',
    description: 'Top traffic sources by sessions\' entry source/medium in [from, to), like GET /v1/sources. Needs an rk_ key. Returns { breakdown, rows: [{ source, medium?, events, uniques, paid_share }] }.',
    access: 'read',
    inputSchema: inputSchemaOf(sourcesParamsSchema),
  },
];

export const RESOURCES = [
  { uri: 'analytics://project', name: 'project', title: 'This key\'s project', description: 'id, name, retention_days and allowed_origins of the project that owns the key.', mimeType: 'application/json' },
  { uri: 'analytics://schema/events', name: 'event-schema', title: 'Stored event columns', description: 'The columns of a stored event and what each means.', mimeType: 'application/json' },
  { uri: 'analytics://classifier/rules', name: 'classifier-rules', title: 'Traffic-source rules', description: 'The 13 classification rules, in order, with their rule_ids.', mimeType: 'application/json' },
] as const;

export { CLASSIFIER_RULES };
