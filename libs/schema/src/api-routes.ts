import { z } from 'zod';
import {
  backupInputSchema,
  backupResponseSchema,
  createKeyInputSchema,
  createProjectInputSchema,
  createdProjectResponseSchema,
  mintedKeyResponseSchema,
  patchProjectInputSchema,
  projectListResponseSchema,
  projectResponseSchema,
  type KeyKind,
  type Project,
} from './admin.schema';
import type { ErrorCode } from './errors';
import { batchInputSchema, eventInputSchema, forgetInputSchema, identifyInputSchema } from './ingest.schema';
import { funnelBodySchema, funnelResponseSchema, retentionBodySchema, retentionResponseSchema } from './conversions.schema';
import { insightsBodySchema, insightsResponseSchema, propertiesParamsSchema, propertiesResponseSchema } from './insights.schema';
import { exportParamsSchema, queryParamsSchema, sourcesParamsSchema, statsParamsSchema } from './read.schema';
import {
  batchResponseSchema,
  errorBodySchema,
  forgetResponseSchema,
  healthResponseSchema,
  identifyResponseSchema,
  queryResponseSchema,
  readyResponseSchema,
  retentionRunResponseSchema,
  sourcesResponseSchema,
  statsResponseSchema,
  trackResponseSchema,
} from './responses.schema';

const jsonRpcId = z.union([z.string(), z.number(), z.null()]);
export const jsonRpcRequestSchema = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: jsonRpcId.optional().describe('Absent for a notification (answered 202 without a body).'),
    method: z.string().describe('initialize, tools/list, tools/call, resources/list, resources/read, ...'),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .describe('A JSON-RPC 2.0 request or notification.');
export const jsonRpcResponseSchema = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: jsonRpcId,
    result: z.record(z.string(), z.unknown()).optional(),
    error: z
      .object({ code: z.number().int().describe('-32600, -32601, -32602 or -32000.'), message: z.string().describe('invalid_request, method_not_found, unknown_tool, tool_failed, insufficient_scope, ...'), data: z.unknown().optional() })
      .optional(),
  })
  .describe('A JSON-RPC 2.0 response: `result`, or `error` with the spec\'s codes.');

/** The deployable that serves a route; `service` routes are served by every app. */
export type ApiApp = 'ingest-api' | 'read-api' | 'admin-api' | 'retention-worker' | 'mcp-gateway' | 'service';

/** What an API key is checked for: its kind's scope, and the Origin of pk_ keys. */
export type KeyAccess = 'ingest' | 'read' | 'forget';

/**
 * Who may call a route. `api_key`: the kinds the document lists and the access the key is checked for (`ak_` keys
 * also pass `ingest` and `forget`); without an access the route authorizes each call itself (MCP: per tool).
 */
export type RouteAuth = { api_key: readonly KeyKind[]; access?: KeyAccess } | 'admin_token' | 'internal_secret' | 'none';

/** The caller of an `api_key` route, as its key resolved: what its handler learns beside the input. */
export interface AuthContext {
  projectId: string;
  project: Project;
  kind: KeyKind;
  prefix: string;
}

/** One route of the HTTP API: what it takes, what it answers, which error codes it can answer. */
export interface ApiRoute {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI form: `/admin/projects/{id}`. */
  path: string;
  app: ApiApp;
  summary: string;
  auth: RouteAuth;
  body?: z.ZodType;
  query?: z.ZodType;
  pathParams?: Record<string, string>;
  /** Success statuses and their bodies (null: no body). */
  responses: Record<number, z.ZodType | null>;
  errors: readonly ErrorCode[];
  /** Errors answered in another envelope than `{ error }` (MCP: JSON-RPC), for every 4xx/5xx status. */
  errorBody?: z.ZodType;
  /** A request body that succeeds, shown in the document. */
  example?: unknown;
  /** A success answer that is a file, not JSON: its content types (and what each holds), in place of application/json. */
  produces?: Record<string, string>;
}

// Every route may answer these: a body or gateway problem, an unhandled error, a store out of reach.
const ALWAYS: readonly ErrorCode[] = ['internal_error', 'upstream_failed'];
const KEY_ERRORS: readonly ErrorCode[] = ['missing_bearer_token', 'malformed_api_key', 'invalid_api_key', 'key_kind_mismatch', 'insufficient_scope'];
// A body is read within a process-wide byte budget: 503 server_busy when it cannot get its share in time.
const BODY_ERRORS: readonly ErrorCode[] = ['invalid_payload', 'payload_too_large', 'unsupported_encoding', 'server_busy'];
// Reads are bounded (query_too_expensive) and admitted through a gate (rate_limited while it is full).
const READ_ERRORS: readonly ErrorCode[] = [...KEY_ERRORS, 'invalid_params', 'query_too_expensive', 'rate_limited'];
const INGEST_KEYS: readonly KeyKind[] = ['pk', 'sk'];

const EXAMPLE_EVENT = { event: 'signup', anonymous_id: 'a-7f3c', url: 'https://shop.example.com/pricing?utm_source=newsletter', properties: { plan: 'pro' } };

/**
 * Every route of the API by name, declared once: each app builds its router from these (service-kit's defineRoute),
 * and the OpenAPI document and the contract tests are generated from them.
 */
export const routes = {
  track: {
    method: 'post', path: '/v1/track', app: 'ingest-api', summary: 'Track one event', auth: { api_key: INGEST_KEYS, access: 'ingest' },
    body: eventInputSchema, responses: { 202: trackResponseSchema },
    errors: [...KEY_ERRORS, ...BODY_ERRORS, 'origin_not_allowed', 'rate_limited', ...ALWAYS], example: EXAMPLE_EVENT,
  },
  batch: {
    method: 'post', path: '/v1/batch', app: 'ingest-api', summary: 'Track 1 to 1000 events, all or nothing', auth: { api_key: INGEST_KEYS, access: 'ingest' },
    body: batchInputSchema, responses: { 202: batchResponseSchema },
    errors: [...KEY_ERRORS, ...BODY_ERRORS, 'origin_not_allowed', 'rate_limited', ...ALWAYS], example: { events: [EXAMPLE_EVENT, { event: '$pageview', anonymous_id: 'a-7f3c', path: '/' }] },
  },
  identify: {
    method: 'post', path: '/v1/identify', app: 'ingest-api', summary: 'Bind an anonymous id to a user id ($identify event)', auth: { api_key: INGEST_KEYS, access: 'ingest' },
    body: identifyInputSchema, responses: { 200: identifyResponseSchema },
    errors: [...KEY_ERRORS, ...BODY_ERRORS, 'origin_not_allowed', ...ALWAYS], example: { anonymous_id: 'a-7f3c', user_id: 'user-42', traits: { plan: 'pro' } },
  },
  forget: {
    method: 'post', path: '/v1/forget', app: 'ingest-api', summary: 'Delete every event of a user_id (queued)', auth: { api_key: ['sk'], access: 'forget' },
    body: forgetInputSchema, responses: { 202: forgetResponseSchema },
    errors: [...KEY_ERRORS, ...BODY_ERRORS, 'forget_requires_secret_key', 'forget_failed', ...ALWAYS], example: { user_id: 'user-42' },
  },
  query: {
    method: 'get', path: '/v1/query', app: 'read-api', summary: 'Raw events, newest first', auth: { api_key: ['rk'], access: 'read' },
    query: queryParamsSchema, responses: { 200: queryResponseSchema }, errors: [...READ_ERRORS, ...ALWAYS],
  },
  export: {
    method: 'get', path: '/v1/export', app: 'read-api', summary: 'Every event of a range as a file (NDJSON, CSV or Parquet), oldest first, streamed', auth: { api_key: ['rk'], access: 'read' },
    query: exportParamsSchema, responses: { 200: z.string().describe('The events in the requested format (`Content-Disposition: attachment`), ordered by timestamp then event_id; each row has the fields of a /v1/query row.') },
    errors: [...READ_ERRORS, ...ALWAYS],
    produces: {
      'application/x-ndjson': 'format=ndjson: one /v1/query row as a JSON object a line.',
      'text/csv': 'format=csv: RFC 4180, a header row of the /v1/query field names; a null is \\N (unquoted), every string is quoted.',
      'application/vnd.apache.parquet': 'format=parquet: one Parquet file, every column a (nullable) string as in /v1/query.',
    },
  },
  stats: {
    method: 'get', path: '/v1/stats', app: 'read-api', summary: 'Event counts or unique visitors, grouped and bucketed', auth: { api_key: ['rk'], access: 'read' },
    query: statsParamsSchema, responses: { 200: statsResponseSchema }, errors: [...READ_ERRORS, 'invalid_group_by', ...ALWAYS],
  },
  sources: {
    method: 'get', path: '/v1/sources', app: 'read-api', summary: 'Top traffic sources by sessions\' entry source and medium', auth: { api_key: ['rk'], access: 'read' },
    query: sourcesParamsSchema, responses: { 200: sourcesResponseSchema }, errors: [...READ_ERRORS, ...ALWAYS],
  },
  insights: {
    method: 'post', path: '/v1/insights', app: 'read-api', summary: 'Any metric by up to 3 dimensions, filtered, optionally against the previous period', auth: { api_key: ['rk'], access: 'read' },
    body: insightsBodySchema, responses: { 200: insightsResponseSchema }, errors: [...READ_ERRORS, ...BODY_ERRORS, ...ALWAYS],
    example: {
      from: '2026-03-01T00:00:00Z', to: '2026-03-08T00:00:00Z', metrics: ['visitors', 'visits', 'bounce_rate'], dimensions: ['source'],
      filters: [['is', 'country', ['GB', 'FR']], ['or', [['contains', 'path', ['/pricing']], ['is', 'prop:plan', ['pro']]]]], compare: 'previous_period', limit: 10,
    },
  },
  properties: {
    method: 'get', path: '/v1/properties', app: 'read-api', summary: 'Property keys seen in a range (or one key\'s values), most used first', auth: { api_key: ['rk'], access: 'read' },
    query: propertiesParamsSchema, responses: { 200: propertiesResponseSchema }, errors: [...READ_ERRORS, ...ALWAYS],
  },
  funnel: {
    method: 'post', path: '/v1/funnel', app: 'read-api', summary: 'Conversion funnel: entities reaching each of 2 to 10 ordered steps within a window, optionally broken down', auth: { api_key: ['rk'], access: 'read' },
    body: funnelBodySchema, responses: { 200: funnelResponseSchema }, errors: [...READ_ERRORS, ...BODY_ERRORS, ...ALWAYS],
    example: {
      from: '2026-03-01T00:00:00Z', to: '2026-03-08T00:00:00Z',
      steps: [{ event: '$pageview', path: '/pricing' }, { event: 'signup' }, { event: 'purchase', filters: [['is', 'prop:plan', ['pro']]] }],
      window_s: 86400, count_by: 'visitor', breakdown: 'channel',
    },
  },
  retention: {
    method: 'post', path: '/v1/retention', app: 'read-api', summary: 'Retention cohorts: entities by the period of their first start event, and how many came back each period after', auth: { api_key: ['rk'], access: 'read' },
    body: retentionBodySchema, responses: { 200: retentionResponseSchema }, errors: [...READ_ERRORS, ...BODY_ERRORS, ...ALWAYS],
    example: { from: '2026-01-05T00:00:00Z', to: '2026-03-02T00:00:00Z', period: 'week', count_by: 'user', start: { event: 'signup' } },
  },
  createProject: {
    method: 'post', path: '/admin/projects', app: 'admin-api', summary: 'Create a project and its pk_, sk_ and rk_ keys', auth: 'admin_token',
    body: createProjectInputSchema, responses: { 201: createdProjectResponseSchema }, errors: ['invalid_session', ...BODY_ERRORS, ...ALWAYS],
    example: { name: 'shop', allowed_origins: ['https://shop.example.com'], retention_days: 365 },
  },
  listProjects: {
    method: 'get', path: '/admin/projects', app: 'admin-api', summary: 'List projects', auth: 'admin_token',
    responses: { 200: projectListResponseSchema }, errors: ['invalid_session', ...ALWAYS],
  },
  getProject: {
    method: 'get', path: '/admin/projects/{id}', app: 'admin-api', summary: 'One project', auth: 'admin_token', pathParams: { id: 'Project id (UUID).' },
    responses: { 200: projectResponseSchema }, errors: ['invalid_session', 'not_found', ...ALWAYS],
  },
  updateProject: {
    method: 'patch', path: '/admin/projects/{id}', app: 'admin-api', summary: 'Change a project\'s name, origins or retention', auth: 'admin_token',
    pathParams: { id: 'Project id (UUID).' }, body: patchProjectInputSchema, responses: { 200: projectResponseSchema },
    errors: ['invalid_session', 'not_found', ...BODY_ERRORS, ...ALWAYS], example: { retention_days: 90 },
  },
  createKey: {
    method: 'post', path: '/admin/projects/{id}/keys', app: 'admin-api', summary: 'Mint a key for a project', auth: 'admin_token',
    pathParams: { id: 'Project id (UUID).' }, body: createKeyInputSchema, responses: { 201: mintedKeyResponseSchema },
    errors: ['invalid_session', 'not_found', ...BODY_ERRORS, ...ALWAYS], example: { kind: 'rk' },
  },
  revokeKey: {
    method: 'delete', path: '/admin/keys/{prefix}', app: 'admin-api', summary: 'Revoke a key (with Redis, every instance refuses it once this answers; without, within the key-cache TTL)', auth: 'admin_token',
    pathParams: { prefix: 'The key\'s prefix, or the whole key.' }, responses: { 204: null }, errors: ['invalid_session', 'not_found', ...ALWAYS],
  },
  backup: {
    method: 'post', path: '/admin/backup', app: 'admin-api',
    summary: 'Back up the embedded stores of `npm start` (event store BACKUP, key store dump, secrets, manifest) to a directory on the server',
    auth: 'admin_token', body: backupInputSchema, responses: { 200: backupResponseSchema }, errors: ['invalid_session', ...BODY_ERRORS, ...ALWAYS],
    example: { dir: '/var/backups/analytics/2026-11-24' },
  },
  runRetention: {
    method: 'post', path: '/internal/retention/run', app: 'retention-worker', summary: 'Delete events older than each project\'s retention', auth: 'internal_secret',
    responses: { 200: retentionRunResponseSchema }, errors: ['unauthorized', ...ALWAYS],
  },
  mcp: {
    method: 'post', path: '/mcp', app: 'mcp-gateway', summary: 'MCP (JSON-RPC 2.0, Streamable HTTP, stateless): tools track_event, query_events, get_stats, top_sources, query_insights, get_funnel, get_retention, list_properties; resources',
    auth: { api_key: ['sk', 'rk', 'ak'] }, body: jsonRpcRequestSchema, responses: { 200: jsonRpcResponseSchema, 202: null }, errors: [],
    // A refused request (key, body) gets the `{ error }` envelope; JSON-RPC problems the JSON-RPC one.
    errorBody: z.union([errorBodySchema, jsonRpcResponseSchema]),
    example: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  },
  healthz: {
    method: 'get', path: '/healthz', app: 'service', summary: 'Liveness (no store touched)', auth: 'none', responses: { 200: healthResponseSchema }, errors: [],
  },
  openapi: {
    method: 'get', path: '/openapi.json', app: 'service', summary: 'This OpenAPI 3.1 document (the routes of the app that answers)', auth: 'none',
    responses: { 200: z.record(z.string(), z.unknown()).describe('OpenAPI 3.1 document.') }, errors: [],
  },
  readyz: {
    method: 'get', path: '/readyz', app: 'service', summary: 'Readiness (every store this app uses answers)', auth: 'none', responses: { 200: readyResponseSchema }, errors: ['not_ready'],
  },
  // Scraped by Prometheus from the pods, never routed by the proxy; with METRICS_TOKEN set, that bearer token is required.
  metrics: {
    method: 'get', path: '/metrics', app: 'service', summary: 'Prometheus metrics of this instance (Authorization: Bearer <METRICS_TOKEN> when it is set)', auth: 'none',
    responses: { 200: z.string().describe('Prometheus text exposition format 0.0.4.') }, errors: ['unauthorized'], produces: { 'text/plain; version=0.0.4': 'Prometheus text exposition format 0.0.4.' },
  },
} as const satisfies Record<string, ApiRoute>;

export type RouteName = keyof typeof routes;

/** Every route of the API, in declaration order. */
export const API_ROUTES: readonly ApiRoute[] = Object.values(routes);

/** Codes any route can answer beyond its own: an unknown path, or a known path with another method. */
export const ROUTING_ERRORS: readonly ErrorCode[] = ['not_found', 'method_not_allowed'];

const templateOf = (path: string) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
const matchers = API_ROUTES.map((route) => ({ route, re: templateOf(route.path) }));

/** The route a request reached, by method and path (without the query string). */
export function routeOf(method: string, path: string): ApiRoute | undefined {
  const m = method.toLowerCase();
  return matchers.find(({ route, re }) => route.method === m && re.test(path))?.route;
}
