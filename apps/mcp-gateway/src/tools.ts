import { z } from 'zod';
import { CLASSIFIER_RULES } from '@analytics/classifier';
import type { Access } from '@analytics/auth';
import { MCP_CAPABILITIES, type McpCapability, type ToolAnnotations, routeInputSchema } from '@analytics/schema';
import { CHART_TOOL_META, CHART_URI, MCP_APP_MIME } from './chart-view';

/** The JSON Schema of a tool's arguments: libs/schema's request schema with its `.describe()` texts, and MCP-only overrides. */
function inputSchemaOf(schema: z.ZodType, overrides: Record<string, Record<string, unknown>> = {}) {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, Record<string, unknown>>; $schema?: string };
  delete json.$schema;
  for (const [name, prop] of Object.entries(json.properties ?? {})) {
    Object.assign(prop, overrides[name] ?? {});
    // An override of `undefined` removes the key (e.g. a query string's boolean-or-text union shown as a boolean).
    for (const [k, v] of Object.entries(prop)) if (v === undefined) delete prop[k];
  }
  return portable(json, saysSomething) as { type: 'object'; properties?: Record<string, object>; required?: string[] };
}

/** An argument error returned as a tool result (`isError: true`), so the model reads which field to fix. */
const toolErrorSchema = z.object({ error: z.enum(['invalid_params', 'invalid_group_by']), details: z.looseObject({}) });
export type ToolError = z.infer<typeof toolErrorSchema>;

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

/** The one success answer's schema of a capability's route. */
function successSchema(responses: Record<number, z.ZodType | null>): z.ZodObject {
  const [schema, more] = Object.values(responses);
  if (!(schema instanceof z.ZodObject) || more !== undefined) throw new Error('an MCP tool\'s route answers one JSON object');
  return schema;
}

/** JSON Schema of a result (libs/schema's response); a validation failure's `{ error, details }` is the other branch (the SDK client checks both). */
function outputSchemaOf(result: z.ZodObject) {
  const json = z.toJSONSchema(z.union([result, toolErrorSchema]), { io: 'output' }) as { $schema?: string; anyOf: object[] };
  return { type: 'object' as const, anyOf: json.anyOf.map((branch) => compact(branch as Schema)) };
}

export interface ToolSpec {
  /** The route declared with this tool (libs/schema's `routes`): its function runs the call. */
  capability: McpCapability;
  name: string;
  title: string;
  description: string;
  access: Access;
  inputSchema: ReturnType<typeof inputSchemaOf>;
  outputSchema: ReturnType<typeof outputSchemaOf>;
  annotations: ToolAnnotations;
  /** MCP Apps: the ui:// view that renders this tool's result. */
  _meta?: typeof CHART_TOOL_META;
}

/**
 * The tools, made from the routes declared with `mcp` (libs/schema/src/api-routes.ts), in their order: arguments from
 * the route's body or query schema (with the declaration's MCP-only overrides), the result from its success answer
 * (or the declaration's `result`), access from the route's `auth.access`.
 */
export const TOOLS: readonly ToolSpec[] = MCP_CAPABILITIES.map(({ name, route, mcp }) => ({
  capability: name,
  name: mcp.tool,
  title: mcp.title,
  description: mcp.description,
  access: route.auth.access,
  inputSchema: inputSchemaOf(routeInputSchema(route), mcp.inputOverrides),
  outputSchema: outputSchemaOf(mcp.result ?? successSchema(route.responses)),
  annotations: mcp.annotations,
  ...(mcp.chart ? { _meta: CHART_TOOL_META } : {}),
}));

/** One line naming each bad field, for the model to read (`from: Invalid ISO date; to: Required`); as long as the capped details. */
export function toolErrorText(error: ToolError): string {
  const issues = (error.details.issues as Array<{ path: string; message: string }> | undefined) ?? [];
  const parts = issues.length > 0 ? issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)) : [String(error.details.message ?? 'invalid arguments')];
  const warnings = (error.details.warnings as string[] | undefined) ?? [];
  return `${error.error}: ${[...parts, ...warnings].join('; ')}${error.details.truncated ? '; (more issues left out)' : ''}`;
}

export const RESOURCES = [
  { uri: 'analytics://project', name: 'project', title: 'This key\'s project', description: 'id, name, retention_days, allowed_origins and timezone (the IANA zone its days are counted in) of the project that owns the key.', mimeType: 'application/json' },
  { uri: 'analytics://schema/events', name: 'event-schema', title: 'Stored event columns', description: 'The columns of a stored event and what each means.', mimeType: 'application/json' },
  { uri: 'analytics://classifier/rules', name: 'classifier-rules', title: 'Traffic-source rules', description: 'The 13 classification rules, in order, with their rule_ids.', mimeType: 'application/json' },
  { uri: CHART_URI, name: 'chart', title: 'Chart view (MCP Apps)', description: 'Renders get_stats and top_sources results as bars, in hosts that support MCP Apps.', mimeType: MCP_APP_MIME },
] as const;

export { CLASSIFIER_RULES };
