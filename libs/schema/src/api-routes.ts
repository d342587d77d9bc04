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
  readProjectResponseSchema,
  type KeyKind,
  type Project,
} from './admin.schema';
import {
  acceptedResponseSchema,
  adminResetResponseSchema,
  auditParamsSchema,
  auditResponseSchema,
  authConfigResponseSchema,
  createdInvitationResponseSchema,
  invitationAcceptInputSchema,
  invitationInputSchema,
  invitationListResponseSchema,
  keyListResponseSchema,
  loginInputSchema,
  meResponseSchema,
  memberInputSchema,
  memberListResponseSchema,
  memberResponseSchema,
  oidcCallbackParamsSchema,
  oidcCompleteInputSchema,
  oidcStartInputSchema,
  oidcStartResponseSchema,
  orgInputSchema,
  orgListResponseSchema,
  orgResponseSchema,
  passwordChangeInputSchema,
  passwordResetConfirmInputSchema,
  passwordResetInputSchema,
  readKeyInputSchema,
  readKeyResponseSchema,
  type Role,
  sessionListResponseSchema,
  sessionTokenResponseSchema,
  setupInputSchema,
  type User,
  userListResponseSchema,
} from './accounts.schema';
import { dimensionsText, metricsOfKind } from './catalog';
import type { ErrorCode } from './errors';
import { CALLER_DATA_NOTE } from './event-columns';
import { batchInputSchema, eventInputSchema, forgetInputSchema, identifyInputSchema } from './ingest.schema';
import { funnelRequestSchema, funnelResponseSchema, retentionRequestSchema, retentionResponseSchema } from './conversions.schema';
import { insightsRequestSchema, insightsResponseSchema, propertiesParamsSchema, propertiesResponseSchema } from './insights.schema';
import { importBatchInputSchema, importResponseSchema } from './import.schema';
import { FILTERS_JSON, GOAL_OR_ID_JSON, READ_TOOL, type ToolAnnotations, WRITE_TOOL, getStatsArgsSchema, truncated } from './mcp-args';
import { STATS_GROUP_BY } from './group-by';
import { ALERT_LIMITS, alertDeliveriesSchema, alertInputSchema, alertListSchema, alertPatchSchema, alertResponseSchema, alertTestResponseSchema } from './alerts.schema';
import { createdShareResponseSchema, shareFrameQuerySchema, shareFrameResponseSchema, shareInputSchema, shareListResponseSchema, shareUnlockInputSchema, shareUnlockResponseSchema } from './shares.schema';
import {
  savedFunnelListSchema,
  savedFunnelResponseSchema,
  savedGoalListSchema,
  savedGoalResponseSchema,
  savedInputSchemas,
  savedPatchSchemas,
  savedSegmentListSchema,
  savedSegmentResponseSchema,
} from './saved.schema';
import { REPORT_LIMITS, reportInputSchema, reportListResponseSchema, reportPatchSchema, reportPreviewResponseSchema, reportResponseSchema, unsubscribePageSchema } from './reports.schema';
import { ANNOTATION_LIMITS, annotationInputSchema, annotationListQuerySchema, annotationListSchema, annotationResponseSchema } from './annotations.schema';
import { exportParamsSchema, queryParamsSchema, sourcesParamsSchema, statsParamsSchema } from './read.schema';
import { liveMessageSchema, liveParamsSchema } from './live.schema';
import {
  batchResponseSchema,
  errorBodySchema,
  forgetResponseSchema,
  healthResponseSchema,
  identifyResponseSchema,
  queryResponseSchema,
  queryRowSchema,
  readyResponseSchema,
  retentionRunResponseSchema,
  sourcesResponseSchema,
  sourcesRowSchema,
  statsResponseSchema,
  statsRowSchema,
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

/**
 * The deployable that serves a route; `service` routes are served by every app, `standalone` routes by `npm start`
 * only (they need its embedded stores).
 */
export type ApiApp = 'ingest-api' | 'read-api' | 'admin-api' | 'retention-worker' | 'mcp-gateway' | 'service' | 'standalone';

/**
 * Where a route is reached in the split deployment. The proxy routes of docker/nginx.conf and the k8s Ingress are
 * generated from the `public` ones (`npm run proxy:routes`); the proxy answers every other path with its JSON 404.
 * - `public`: through the proxy, to the app's upstream (nginx) or Service (Ingress);
 * - `internal`: never through the proxy; pods of the cluster call the app's Service directly;
 * - `pod`: each process answers it on its own port (probes, Prometheus, its own document); the proxy answers /healthz itself;
 * - `standalone`: `npm start` only: no deployable of the split deployment serves it.
 */
export type Exposure = 'public' | 'internal' | 'pod' | 'standalone';

/** A route's exposure follows from its app: a new app is a compile error here until it is decided. */
const EXPOSURE: Record<ApiApp, Exposure> = {
  'ingest-api': 'public',
  'read-api': 'public',
  'admin-api': 'public',
  'mcp-gateway': 'public',
  // POST /internal/retention/run: the CronJob's `--once` does the daily pass; an operator's pod may call it.
  'retention-worker': 'internal',
  service: 'pod',
  standalone: 'standalone',
};

/** Where `route` is reached in the split deployment (see Exposure). */
export const exposureOf = (route: ApiRoute): Exposure => EXPOSURE[route.app];

/**
 * An answer the proxy passes on as it is produced instead of buffering it whole: `file`, a download written while
 * its query runs; `events`, an event stream (`text/event-stream`). `idleTimeoutS`: the longest pause between two
 * chunks the proxy waits out, when it must be longer than its default 60 s.
 */
export interface Streaming {
  kind: 'file' | 'events';
  idleTimeoutS?: number;
}

/**
 * What an API key is checked for: its kind's scope, and the Origin of pk_ keys. `annotate` (issue 48): the project's
 * secret keys (sk_, ak_) write annotations; a pk_ key, public in a page, may not.
 */
export type KeyAccess = 'ingest' | 'read' | 'forget' | 'annotate';

/**
 * Where a role is checked: the organization `{id}` of the path (`org`), the organization of the project `{id}`
 * (`project`) or of the key `{prefix}` (`key`), or that of the body's `org_id` / `project_id` field.
 */
export type RoleScope = 'org' | 'project' | 'key' | 'org_id' | 'project_id';

/**
 * A user token (`Authorization: Bearer ses_…`) route. `session`: `user` takes a user token only (the route acts on the
 * signed-in person), `any` also takes ADMIN_TOKEN (the operator, who passes every role check), `optional` runs without a
 * credential too (a token sent must be valid). `role`: the least role the caller needs in the organization `of` names;
 * a caller who is not a member of it gets 404 not_found, as for a resource that does not exist (docs/accounts.md).
 */
export interface SessionAuth {
  session: 'user' | 'any' | 'optional';
  role?: Role;
  of?: RoleScope;
}

/**
 * Who may call a route. `api_key`: the kinds the document lists and the access the key is checked for (`ak_` keys
 * also pass `ingest` and `forget`); without an access the route authorizes each call itself (MCP: per tool).
 * `session`: a user token, with a role where the declaration names one (SessionAuth). `share: true`: a share link's
 * credential (`shr_…`, docs/saved-and-shared.md) is accepted too, pinned to its project with its segment's filters;
 * every route without it refuses that credential with 403 insufficient_scope.
 */
export type RouteAuth = { api_key: readonly KeyKind[]; access?: KeyAccess; share?: true } | SessionAuth | 'admin_token' | 'internal_secret' | 'none';

/** The organization a role route named and the caller's role in it (null for the operator, who holds none). */
export interface OrgAccess {
  id: string;
  role: Role | null;
}

/** The caller of a `session` route: a signed-in user, or the operator (ADMIN_TOKEN). */
export type Caller =
  | { kind: 'operator'; org?: OrgAccess }
  | { kind: 'user'; user: User; session: { id: string; expires_at: string }; token: string; org?: OrgAccess };

/** The caller of an `api_key` route, as its key resolved: what its handler learns beside the input. */
export interface AuthContext {
  projectId: string;
  project: Project;
  kind: KeyKind;
  prefix: string;
  /** Set when the credential is a share link's (`shr_…`): the share and the segment its reads are held to. */
  share?: ShareScope;
}

/** What a share credential carries to the routes that take it (`share: true`): its share, and its segment's snapshot. */
export interface ShareScope {
  id: string;
  segment: { id: string; name: string; filters: unknown[] } | null;
}

/**
 * A route that is also an MCP tool: one capability, declared once. apps/mcp-gateway/src/tools.ts makes the tool of
 * tools/list from it (arguments: the route's body or query schema as JSON Schema with `inputOverrides`; result: the
 * route's success answer; access: the route's `auth.access`), and its call runs the same function as the route (the
 * read capabilities' map in libs/event-store, the write ones' in libs/ingest).
 */
export interface McpTool {
  /** The tool's name in tools/list and tools/call. */
  tool: string;
  title: string;
  /** The text an agent reads; agents pay for tools/list in tokens, so it may be shorter than the route's summary. */
  description: string;
  annotations: ToolAnnotations;
  /** MCP-only changes to the arguments' JSON Schema, by property: shorter texts, tuples written as plain arrays. */
  inputOverrides?: Record<string, Record<string, unknown>>;
  /** The arguments' schema when the tool takes more than the route (default: the route's body, else its query). */
  args?: z.ZodType;
  /** The result's schema (default: the route's success answer), e.g. with the `truncated` mark of a capped result. */
  result?: z.ZodObject;
  /** The result is cut to the gateway's size cap (MCP_MAX_RESULT_BYTES): its `rows`, or a funnel's `breakdown`. */
  cap?: 'rows' | 'breakdown';
  /** MCP Apps: the chart view renders the result. */
  chart?: boolean;
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
  /** The answer is streamed: the proxy must not buffer it (and may have to wait longer between its chunks). */
  streaming?: Streaming;
  /** The route is also an MCP tool (McpTool). */
  mcp?: McpTool;
}

// Every route may answer these: a body or gateway problem, an unhandled error, a store out of reach.
const ALWAYS: readonly ErrorCode[] = ['internal_error', 'upstream_failed'];
const KEY_ERRORS: readonly ErrorCode[] = ['missing_bearer_token', 'malformed_api_key', 'invalid_api_key', 'key_kind_mismatch', 'insufficient_scope'];
// A body is read within a process-wide byte budget (503 server_busy when it cannot get its share in time) and a
// deadline (408 request_timeout when it has not arrived whole within BODY_READ_TIMEOUT_MS).
const BODY_ERRORS: readonly ErrorCode[] = ['invalid_payload', 'payload_too_large', 'unsupported_encoding', 'request_timeout', 'server_busy'];
// Reads are bounded (query_too_expensive) and admitted through a gate (rate_limited while it is full).
const READ_ERRORS: readonly ErrorCode[] = [...KEY_ERRORS, 'invalid_params', 'query_too_expensive', 'rate_limited'];
const INGEST_KEYS: readonly KeyKind[] = ['pk', 'sk'];
// A user-token route answers invalid_session; with a role, insufficient_role, and not_found outside the organization.
const SESSION_ERRORS: readonly ErrorCode[] = ['invalid_session'];
const ROLE_ERRORS: readonly ErrorCode[] = ['invalid_session', 'insufficient_role', 'not_found'];
// Any member passes a viewer route: no role is too low there.
const MEMBER_ERRORS: readonly ErrorCode[] = ['invalid_session', 'not_found'];
/** A user token (or ADMIN_TOKEN) with at least `role` in the organization `of` names. */
const roleOf = (role: Role, of: RoleScope) => ({ session: 'any', role, of }) as const;
const ORG_ID = { id: 'Organization id (UUID).' };
const REPORT_ID = "The report's id.";
const UNSUBSCRIBE_TOKEN = 'The token of the unsubscribe link (from the mail).';
const PROJECT_ID = { id: 'Project id (UUID).' };

const SDK_SCRIPT = z.string().describe('The IIFE build of @analytics/sdk-browser (`window.analytics`), served with `Access-Control-Allow-Origin: *`.');
const SDK_SCRIPT_TYPE = { 'text/javascript': 'The browser SDK as one classic script.' };

/** Annotations as the MCP tools' result schemas give them: their fields are in get_annotations' description. */
const MCP_ANNOTATIONS = z.array(z.looseObject({ at: z.string(), text: z.string() }));

/** The saved lists take no parameter. */
const SAVED_LIST_QUERY = z.object({});
const EXAMPLE_SAVED = {
  goal: { name: 'Signup', event: 'signup' },
  funnel: { name: 'Checkout', steps: [{ event: '$pageview', path: '/pricing' }, { event: 'signup' }, { event: 'purchase' }], window_s: 86400 },
  segment: { name: 'Paid search, France', filters: [['is', 'channel', ['paid_search']], ['is', 'country', ['FR']]] },
};

const ALERT_ID = { ...PROJECT_ID, alert_id: "The alert's id." };
const EXAMPLE_ALERT = {
  name: 'Pageviews dropped',
  metric: 'pageviews',
  window: '1h',
  condition: { anomaly: { sensitivity: 'medium' } },
  channels: [{ email: ['ops@example.com'] }, { webhook: { url: 'https://hooks.example.com/analytics', secret: 'a-long-random-secret-0123' } }],
};

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
    mcp: {
      tool: 'track_event',
      title: 'Track an event',
      description: 'Records one analytics event for the key\'s project, exactly like POST /v1/track (same validation, enrichment and rate limit). Needs an sk_ or ak_ key. Returns { ok, event_id }.',
      annotations: WRITE_TOOL,
    },
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
  // The browser SDK for one script tag on any site (as Plausible's /js/script.js): no key, any origin may load it.
  sdkScript: {
    method: 'get', path: '/sdk/analytics.min.js', app: 'ingest-api', summary: 'The browser SDK for a script tag: the current build, cached 5 minutes', auth: 'none',
    responses: { 200: SDK_SCRIPT }, errors: ['not_found', ...ALWAYS], produces: SDK_SCRIPT_TYPE,
  },
  sdkScriptVersion: {
    method: 'get', path: '/sdk/{version}/analytics.min.js', app: 'ingest-api', summary: 'The browser SDK of one version only, cached a year (the URL to pin with an integrity hash)', auth: 'none',
    pathParams: { version: 'The SDK version this instance serves (its package.json); any other answers 404.' }, responses: { 200: SDK_SCRIPT }, errors: ['not_found', ...ALWAYS], produces: SDK_SCRIPT_TYPE,
  },
  query: {
    method: 'get', path: '/v1/query', app: 'read-api', summary: 'Raw events, newest first', auth: { api_key: ['rk'], access: 'read' },
    query: queryParamsSchema, responses: { 200: queryResponseSchema }, errors: [...READ_ERRORS, ...ALWAYS],
    mcp: {
      tool: 'query_events',
      title: 'Query raw events',
      description: `Raw events of the key's project in [from, to), newest first, like GET /v1/query. Needs an rk_ key. Returns { rows }; properties is a JSON string. ${CALLER_DATA_NOTE}`,
      annotations: READ_TOOL,
      result: queryResponseSchema.extend({ rows: z.array(queryRowSchema.loose()), truncated }),
      cap: 'rows',
    },
  },
  export: {
    method: 'get', path: '/v1/export', app: 'read-api', summary: 'Every event of a range as a file (NDJSON, CSV or Parquet), oldest first, streamed', auth: { api_key: ['rk'], access: 'read' },
    query: exportParamsSchema, responses: { 200: z.string().describe('The events in the requested format (`Content-Disposition: attachment`), ordered by timestamp then event_id; each row has the fields of a /v1/query row.') },
    errors: [...READ_ERRORS, ...ALWAYS],
    // Rows are sent while the query runs, for up to EXPORT_MAX_EXECUTION_S (300 s by default).
    streaming: { kind: 'file', idleTimeoutS: 330 },
    produces: {
      'application/x-ndjson': 'format=ndjson: one /v1/query row as a JSON object a line, every value exactly as stored.',
      'text/csv':
        "format=csv: RFC 4180, a header row of the /v1/query field names; a null is \\N (unquoted), every string is quoted. A cell a spreadsheet would run as a formula (first character =, +, -, @, tab or carriage return; OWASP's CSV injection advice) has a ' in front, as has a cell of 's before one of those; `npm run import` takes exactly one off such a cell.",
      'application/vnd.apache.parquet': 'format=parquet: one Parquet file, every column a (nullable) string as in /v1/query, every value exactly as stored.',
    },
  },
  live: {
    method: 'get', path: '/v1/live', app: 'read-api',
    summary: 'The live view: an event stream (text/event-stream) of one JSON message at once and every 5 s (visitors of the last 5 minutes, pageviews per minute, top pages and sources of the last 30 minutes, the newest events), `: ping` comments between',
    auth: { api_key: ['rk'], access: 'read' },
    query: liveParamsSchema,
    responses: { 200: liveMessageSchema.describe('Each `data:` line of the stream holds one such message (as JSON).') },
    errors: [...KEY_ERRORS, 'rate_limited', ...ALWAYS],
    // Messages every 5 s and pings between: the proxy never waits long, but must not buffer.
    streaming: { kind: 'events' },
    produces: { 'text/event-stream': 'Server-Sent Events: a `data:` line of one message as JSON at once and every 5 s, `: ping` comment lines between; the stream ends when the key is revoked.' },
    mcp: {
      tool: 'get_live',
      title: 'Live view',
      description: `One message of GET /v1/live: visitors (last 5 min), pageviews_per_minute, top_pages, top_sources (last 30 min), newest events; no bots. Needs an rk_ key. ${CALLER_DATA_NOTE}`,
      annotations: READ_TOOL,
      result: z.looseObject({ visitors: z.number() }),
    },
  },
  stats: {
    method: 'get', path: '/v1/stats', app: 'read-api', summary: 'Event counts or unique visitors, grouped and bucketed', auth: { api_key: ['rk'], access: 'read', share: true },
    query: statsParamsSchema, responses: { 200: statsResponseSchema }, errors: [...READ_ERRORS, 'invalid_group_by', ...ALWAYS],
    mcp: {
      tool: 'get_stats',
      title: 'Aggregate statistics',
      description: `Event counts or unique visitors in [from, to), optionally grouped and bucketed, like GET /v1/stats. Every stored event, bots included; source and channel are each event's own, not the visit's entry. Dashboard figures: query_insights. Needs an rk_ key. Returns { metric, rows } with value per row. ${CALLER_DATA_NOTE}`,
      annotations: READ_TOOL,
      inputOverrides: {
        group_by: {
          anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string', enum: [...STATS_GROUP_BY] } }],
          type: undefined,
          description: `Columns to group by: an array or a comma-separated string of ${STATS_GROUP_BY.join(', ')}.`,
        },
      },
      args: getStatsArgsSchema,
      result: statsResponseSchema.extend({ rows: z.array(statsRowSchema.loose()), truncated }),
      cap: 'rows',
      chart: true,
    },
  },
  sources: {
    method: 'get', path: '/v1/sources', app: 'read-api', summary: 'Top traffic sources by sessions\' entry source and medium', auth: { api_key: ['rk'], access: 'read', share: true },
    query: sourcesParamsSchema, responses: { 200: sourcesResponseSchema }, errors: [...READ_ERRORS, ...ALWAYS],
    mcp: {
      tool: 'top_sources',
      title: 'Top traffic sources',
      description: `Top traffic sources in [from, to), like GET /v1/sources: each session counts whole under its entry source/medium; uniques = visitors. Bots included unless include_bots false; then uniques by source = the dashboard's Sources list. Needs an rk_ key. Returns { breakdown, rows: [{ source, medium?, events, uniques, paid_share }] }. ${CALLER_DATA_NOTE}`,
      annotations: READ_TOOL,
      inputOverrides: { include_bots: { anyOf: undefined, type: 'boolean', description: 'Default true.' } },
      result: sourcesResponseSchema.extend({ rows: z.array(sourcesRowSchema.loose()), truncated }),
      cap: 'rows',
      chart: true,
    },
  },
  insights: {
    method: 'post', path: '/v1/insights', app: 'read-api', summary: 'Any metric by up to 3 dimensions, filtered, optionally against the previous period', auth: { api_key: ['rk'], access: 'read', share: true },
    body: insightsRequestSchema, responses: { 200: insightsResponseSchema }, errors: [...READ_ERRORS, ...BODY_ERRORS, ...ALWAYS],
    example: {
      from: '2026-03-01T00:00:00Z', to: '2026-03-08T00:00:00Z', metrics: ['visitors', 'visits', 'bounce_rate'], dimensions: ['source'],
      filters: [['is', 'country', ['GB', 'FR']], ['or', [['contains', 'path', ['/pricing']], ['is', 'prop:plan', ['pro']]]]], compare: 'previous_period', limit: 10,
    },
    mcp: {
      tool: 'query_insights',
      title: 'Insights: metrics by dimensions',
      description: `Metrics by 0-3 dimensions, filtered, optionally against the previous period: arguments = the POST /v1/insights body, result = its answer. Bots left out unless include_bots; source = the visit's entry. What the dashboard shows. Needs an rk_ key. Returns { rows }, with a time:* dimension also the range's annotations: read them to explain spikes or dips before speculating. Call list_goals and list_segments first: goal may be { id } of a saved goal, segment a saved segment's id. ${CALLER_DATA_NOTE}`,
      annotations: READ_TOOL,
      // Shorter texts than the API document's (agents pay for tools/list); conditions and order_by entries are tuples,
      // written as plain arrays (prefixItems and recursion are not portable).
      inputOverrides: {
        metrics: { description: `Default ["visitors"]. Visit metrics: ${metricsOfKind('visit').join(', ')}; need goal: ${metricsOfKind('goal').join(', ')}.` },
        dimensions: { description: `0-3 of: ${dimensionsText(true)}.` },
        filters: FILTERS_JSON,
        goal: { ...GOAL_OR_ID_JSON, description: 'For metrics conversions, conversion_rate: { event?, path?, filters? } or { id } of a saved goal.' },
        segment: { description: 'A saved segment\'s id (list_segments): its filters hold too.' },
        order_by: { type: 'array', items: { type: 'array', items: { type: 'string' } }, description: '[[metric or dimension, "asc"|"desc"]]; default: first metric desc.' },
        compare: { description: 'Adds comparison: the metrics over the equally long range before from (as long as from..now if to > now).' },
        include_bots: { description: 'Count device_type bot too.' },
        limit: { description: 'Rows, default 100.' },
      },
      // The annotations' fields are get_annotations' (its description): the agent pays for tools/list in tokens.
      result: insightsResponseSchema.extend({ truncated, annotations: MCP_ANNOTATIONS.optional() }),
      cap: 'rows',
    },
  },
  funnel: {
    method: 'post', path: '/v1/funnel', app: 'read-api', summary: 'Conversion funnel: entities reaching each of 2 to 10 ordered steps within a window, optionally broken down', auth: { api_key: ['rk'], access: 'read', share: true },
    body: funnelRequestSchema, responses: { 200: funnelResponseSchema }, errors: [...READ_ERRORS, ...BODY_ERRORS, ...ALWAYS],
    example: {
      from: '2026-03-01T00:00:00Z', to: '2026-03-08T00:00:00Z',
      steps: [{ event: '$pageview', path: '/pricing' }, { event: 'signup' }, { event: 'purchase', filters: [['is', 'prop:plan', ['pro']]] }],
      window_s: 86400, count_by: 'visitor', breakdown: 'channel',
    },
    mcp: {
      tool: 'get_funnel',
      title: 'Conversion funnel',
      description: `Entities reaching each of 2-10 ordered steps within window_s of step 1: arguments = the POST /v1/funnel body, result = its answer (breakdown: { value, steps } per value). Needs an rk_ key. Call list_funnels and list_segments first: id runs a saved funnel (no steps then), segment is a saved segment's id. ${CALLER_DATA_NOTE}`,
      annotations: READ_TOOL,
      inputOverrides: {
        id: { description: 'A saved funnel\'s id (list_funnels), instead of steps, window_s and count_by.' },
        steps: { type: 'array', items: GOAL_OR_ID_JSON, description: '2-10 goals ({ id } of a saved goal, or inline), in order; without id.' },
        segment: { description: 'A saved segment\'s id (list_segments): its filters hold too.' },
        window_s: { description: 'Default 86400.' },
        count_by: { description: 'Default visitor.' },
        breakdown: { description: 'A dimension of query_insights but time:*.' },
        filters: FILTERS_JSON,
        include_bots: { description: 'Count device_type bot too.' },
      },
      // Each breakdown value's steps are shaped as `steps` (the description says so): written once.
      result: funnelResponseSchema.extend({ breakdown: z.array(z.looseObject({})).optional(), truncated }),
      cap: 'breakdown',
    },
  },
  retention: {
    method: 'post', path: '/v1/retention', app: 'read-api', summary: 'Retention cohorts: entities by the period of their first start event, and how many came back each period after', auth: { api_key: ['rk'], access: 'read', share: true },
    body: retentionRequestSchema, responses: { 200: retentionResponseSchema }, errors: [...READ_ERRORS, ...BODY_ERRORS, ...ALWAYS],
    example: { from: '2026-01-05T00:00:00Z', to: '2026-03-02T00:00:00Z', period: 'week', count_by: 'user', start: { event: 'signup' } },
    mcp: {
      tool: 'get_retention',
      title: 'Retention cohorts',
      description: `Cohorts by the period of each entity's first start event, and how many came back each later period: arguments = the POST /v1/retention body, result = its answer. Needs an rk_ key. Call list_goals and list_segments first: start and return may be { id } of a saved goal, segment a saved segment's id. ${CALLER_DATA_NOTE}`,
      annotations: READ_TOOL,
      inputOverrides: {
        period: { description: 'day, week (from Monday) or month.' },
        count_by: { description: 'Default user.' },
        start: { ...GOAL_OR_ID_JSON, description: 'Default any event.' },
        return: { ...GOAL_OR_ID_JSON, description: 'Default any event.' },
        segment: { description: 'A saved segment\'s id (list_segments): its filters hold too.' },
        filters: FILTERS_JSON,
        include_bots: { description: 'Count device_type bot too.' },
      },
    },
  },
  properties: {
    method: 'get', path: '/v1/properties', app: 'read-api', summary: 'Property keys seen in a range (or one key\'s values), most used first', auth: { api_key: ['rk'], access: 'read', share: true },
    query: propertiesParamsSchema, responses: { 200: propertiesResponseSchema }, errors: [...READ_ERRORS, ...ALWAYS],
    mcp: {
      tool: 'list_properties',
      title: 'Property keys and values',
      description: `Property keys in [from, to), most used first, or with key its values, like GET /v1/properties (for prop:<key>). Needs an rk_ key. ${CALLER_DATA_NOTE}`,
      annotations: READ_TOOL,
      result: propertiesResponseSchema.extend({ truncated }),
      cap: 'rows',
    },
  },
  // Saved definitions (issue 46, docs/saved-and-shared.md): the project's goals, funnels and segments, for its rk_ key.
  goals: {
    method: 'get', path: '/v1/goals', app: 'read-api', summary: "The project's saved goals, oldest first (give one to /v1/insights or /v1/retention as { id })", auth: { api_key: ['rk'], access: 'read', share: true },
    query: SAVED_LIST_QUERY, responses: { 200: savedGoalListSchema }, errors: [...KEY_ERRORS, ...ALWAYS],
    mcp: {
      tool: 'list_goals',
      title: 'Saved goals',
      description: `The goals saved for the key's project: { goals: [{ id, name, event?, path?, filters }] }. Needs an rk_ key. Call it before query_insights or get_retention: pass a goal as { id }. ${CALLER_DATA_NOTE}`,
      annotations: READ_TOOL,
      // The fields in the description, not the schema: the agent pays for tools/list in tokens.
      result: z.object({ goals: z.array(z.looseObject({ id: z.string(), name: z.string() })) }),
    },
  },
  funnels: {
    method: 'get', path: '/v1/funnels', app: 'read-api', summary: "The project's saved funnels, oldest first (run one with POST /v1/funnel { id, from, to })", auth: { api_key: ['rk'], access: 'read', share: true },
    query: SAVED_LIST_QUERY, responses: { 200: savedFunnelListSchema }, errors: [...KEY_ERRORS, ...ALWAYS],
    mcp: {
      tool: 'list_funnels',
      title: 'Saved funnels',
      description: `The funnels saved for the key's project: { funnels: [{ id, name, steps, window_s, count_by, filters }] }. Needs an rk_ key. Call it before get_funnel: run one with { id, from, to }. ${CALLER_DATA_NOTE}`,
      annotations: READ_TOOL,
      // The fields in the description, not the schema: the agent pays for tools/list in tokens.
      result: z.object({ funnels: z.array(z.looseObject({ id: z.string(), name: z.string() })) }),
    },
  },
  segments: {
    method: 'get', path: '/v1/segments', app: 'read-api', summary: "The project's saved segments, oldest first (give one's id as `segment` to insights, funnel, retention, export)", auth: { api_key: ['rk'], access: 'read', share: true },
    query: SAVED_LIST_QUERY, responses: { 200: savedSegmentListSchema }, errors: [...KEY_ERRORS, ...ALWAYS],
    mcp: {
      tool: 'list_segments',
      title: 'Saved segments',
      description: `The segments (saved filters) of the key's project: { segments: [{ id, name, filters }] }. Needs an rk_ key. Call it before query_insights, get_funnel or get_retention: pass segment: <id>. ${CALLER_DATA_NOTE}`,
      annotations: READ_TOOL,
      // The fields in the description, not the schema: the agent pays for tools/list in tokens.
      result: z.object({ segments: z.array(z.looseObject({ id: z.string(), name: z.string() })) }),
    },
  },
  // Issue 47: the dashboard (an rk_ key, often a session's) learns the project's name and time zone; no earlier read
  // route answered the project.
  project: {
    method: 'get', path: '/v1/project', app: 'read-api', summary: "The key's project: id, name and the time zone its days are counted in", auth: { api_key: ['rk'], access: 'read', share: true },
    responses: { 200: readProjectResponseSchema }, errors: [...KEY_ERRORS, ...ALWAYS],
  },
  createProject: {
    method: 'post', path: '/admin/projects', app: 'admin-api', summary: 'Create a project and its pk_, sk_ and rk_ keys', auth: roleOf('admin', 'org_id'),
    body: createProjectInputSchema, responses: { 201: createdProjectResponseSchema }, errors: [...ROLE_ERRORS, ...BODY_ERRORS, ...ALWAYS],
    example: { name: 'shop', allowed_origins: ['https://shop.example.com'], retention_days: 365 },
  },
  listProjects: {
    method: 'get', path: '/admin/projects', app: 'admin-api', summary: "List the projects of the caller's organizations", auth: { session: 'any' },
    responses: { 200: projectListResponseSchema }, errors: [...SESSION_ERRORS, ...ALWAYS],
  },
  getProject: {
    method: 'get', path: '/admin/projects/{id}', app: 'admin-api', summary: 'One project', auth: roleOf('viewer', 'project'), pathParams: PROJECT_ID,
    responses: { 200: projectResponseSchema }, errors: [...MEMBER_ERRORS, ...ALWAYS],
  },
  updateProject: {
    method: 'patch', path: '/admin/projects/{id}', app: 'admin-api', summary: 'Change a project\'s name, origins, retention or time zone', auth: roleOf('admin', 'project'),
    pathParams: PROJECT_ID, body: patchProjectInputSchema, responses: { 200: projectResponseSchema },
    errors: [...ROLE_ERRORS, ...BODY_ERRORS, ...ALWAYS], example: { retention_days: 90 },
  },
  createKey: {
    method: 'post', path: '/admin/projects/{id}/keys', app: 'admin-api', summary: 'Mint a key for a project', auth: roleOf('admin', 'project'),
    pathParams: PROJECT_ID, body: createKeyInputSchema, responses: { 201: mintedKeyResponseSchema },
    errors: [...ROLE_ERRORS, ...BODY_ERRORS, ...ALWAYS], example: { kind: 'rk' },
  },
  // Share links (docs/saved-and-shared.md, "Share links and embeds"): editors make and revoke them; the link's
  // credential reads only the routes declared with `share: true`.
  createShare: {
    method: 'post', path: '/admin/projects/{id}/shares', app: 'admin-api', summary: "Make a share link of a project's dashboard (read-only, optional password, expiry, segment and embedding origins)", auth: roleOf('editor', 'project'),
    pathParams: PROJECT_ID, body: shareInputSchema, responses: { 201: createdShareResponseSchema }, errors: [...ROLE_ERRORS, 'limit_reached', ...BODY_ERRORS, ...ALWAYS],
    example: { name: 'For the agency', expires_at: '2099-12-31T00:00:00Z', embed_origins: ['https://agency.example.com'] },
  },
  listShares: {
    method: 'get', path: '/admin/projects/{id}/shares', app: 'admin-api', summary: "A project's live share links (never their tokens)", auth: roleOf('editor', 'project'),
    pathParams: PROJECT_ID, responses: { 200: shareListResponseSchema }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  deleteShare: {
    method: 'delete', path: '/admin/projects/{id}/shares/{share_id}', app: 'admin-api', summary: 'Revoke a share link: every credential of it is refused on every instance once this answers', auth: roleOf('editor', 'project'),
    pathParams: { ...PROJECT_ID, share_id: 'Share id.' }, responses: { 204: null }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  shareUnlock: {
    method: 'post', path: '/v1/share/unlock', app: 'admin-api',
    summary: "Open a share link: its credential, the project's name and the link (with its password when it has one; wrong guesses throttled per link and per address). An unknown, revoked or expired link: 404 not_found",
    auth: 'none', body: shareUnlockInputSchema, responses: { 200: shareUnlockResponseSchema }, errors: ['not_found', 'invalid_credentials', 'rate_limited', ...BODY_ERRORS, ...ALWAYS],
    example: { token: 'shr_4fQ9xZ2LmP0a_0123456789abcdefghijABCDEFGHIJKL', password: 'correct horse battery' },
  },
  // The production proxy serves GET /share/<token> itself and asks this, as an auth_request, for the page's framing.
  shareFrameAncestors: {
    method: 'get', path: '/v1/share/frame-ancestors', app: 'admin-api',
    summary: "Who may frame a share link's page: with embed=1, a live link's embed_origins, else 'none' (the frame-ancestors the proxy sends with GET /share/<token>)",
    auth: 'none', query: shareFrameQuerySchema, responses: { 200: shareFrameResponseSchema }, errors: ['invalid_params', ...ALWAYS],
  },
  revokeKey: {
    method: 'delete', path: '/admin/keys/{prefix}', app: 'admin-api', summary: 'Revoke a key (with Redis, every instance refuses it once this answers; without, within the key-cache TTL)', auth: roleOf('admin', 'key'),
    pathParams: { prefix: 'The key\'s prefix, or the whole key.' }, responses: { 204: null }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  listKeys: {
    method: 'get', path: '/admin/projects/{id}/keys', app: 'admin-api', summary: "A project's keys: prefix, kind, when created, last used and revoked; never a secret", auth: roleOf('admin', 'project'),
    pathParams: PROJECT_ID, responses: { 200: keyListResponseSchema }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  // Issue 50: our own export imported with its enrichment columns (country, device, bots, sources) kept, as stored.
  importEvents: {
    method: 'post', path: '/admin/projects/{id}/import', app: 'admin-api',
    summary: "Import rows of this service's own export (GET /v1/export) into a project, keeping their stored columns (country, device_type, browser, os, source, medium, campaign, channel): the project's admin or ADMIN_TOKEN; a row whose event_id and timestamp the project already holds is skipped",
    auth: roleOf('admin', 'project'), pathParams: PROJECT_ID, body: importBatchInputSchema, responses: { 200: importResponseSchema },
    errors: [...ROLE_ERRORS, ...BODY_ERRORS, 'not_ready', ...ALWAYS],
    example: {
      events: [{
        timestamp: '2026-03-01T09:30:00.000Z', event_name: '$pageview', event_id: '3f1e2d4c-5b6a-4789-9abc-def012345678', anonymous_id: 'a-7f3c', user_id: null, session_id: 'a-7f3c-985432',
        source: 'google', medium: 'organic', campaign: null, source_confidence: 'medium', channel: 'organic_search', referrer: 'https://www.google.com/',
        url: 'https://shop.example.com/pricing', path: '/pricing', country: 'GB', device_type: 'mobile', browser: 'Mobile Safari', os: 'iOS', properties: '{}',
      }],
    },
  },
  // Saved definitions of a project (issue 46, docs/saved-and-shared.md): any member lists, an editor writes.
  listGoals: {
    method: 'get', path: '/admin/projects/{id}/goals', app: 'admin-api', summary: "A project's saved goals (any member; as GET /v1/goals)", auth: roleOf('viewer', 'project'),
    pathParams: PROJECT_ID, responses: { 200: savedGoalListSchema }, errors: [...MEMBER_ERRORS, ...ALWAYS],
  },
  createGoal: {
    method: 'post', path: '/admin/projects/{id}/goals', app: 'admin-api', summary: 'Save a goal for a project (409 name_taken, 409 limit_reached at 200 per project)', auth: roleOf('editor', 'project'),
    pathParams: PROJECT_ID, body: savedInputSchemas.goal, responses: { 201: savedGoalResponseSchema }, errors: [...ROLE_ERRORS, 'name_taken', 'limit_reached', ...BODY_ERRORS, ...ALWAYS],
    example: EXAMPLE_SAVED.goal,
  },
  updateGoal: {
    method: 'patch', path: '/admin/projects/{id}/goals/{goal_id}', app: 'admin-api', summary: 'Rename or change a saved goal (any subset of its fields; the whole is checked again)', auth: roleOf('editor', 'project'),
    pathParams: { ...PROJECT_ID, goal_id: 'The saved goal\'s id.' }, body: savedPatchSchemas.goal, responses: { 200: savedGoalResponseSchema }, errors: [...ROLE_ERRORS, 'name_taken', ...BODY_ERRORS, ...ALWAYS],
    example: { name: 'Renamed' },
  },
  deleteGoal: {
    method: 'delete', path: '/admin/projects/{id}/goals/{goal_id}', app: 'admin-api', summary: 'Delete a saved goal (reads naming its id then answer 400)', auth: roleOf('editor', 'project'),
    pathParams: { ...PROJECT_ID, goal_id: 'The saved goal\'s id.' }, responses: { 204: null }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  listFunnels: {
    method: 'get', path: '/admin/projects/{id}/funnels', app: 'admin-api', summary: "A project's saved funnels (any member; as GET /v1/funnels)", auth: roleOf('viewer', 'project'),
    pathParams: PROJECT_ID, responses: { 200: savedFunnelListSchema }, errors: [...MEMBER_ERRORS, ...ALWAYS],
  },
  createFunnel: {
    method: 'post', path: '/admin/projects/{id}/funnels', app: 'admin-api', summary: 'Save a funnel for a project (409 name_taken, 409 limit_reached at 200 per project)', auth: roleOf('editor', 'project'),
    pathParams: PROJECT_ID, body: savedInputSchemas.funnel, responses: { 201: savedFunnelResponseSchema }, errors: [...ROLE_ERRORS, 'name_taken', 'limit_reached', ...BODY_ERRORS, ...ALWAYS],
    example: EXAMPLE_SAVED.funnel,
  },
  updateFunnel: {
    method: 'patch', path: '/admin/projects/{id}/funnels/{funnel_id}', app: 'admin-api', summary: 'Rename or change a saved funnel (any subset of its fields; the whole is checked again)', auth: roleOf('editor', 'project'),
    pathParams: { ...PROJECT_ID, funnel_id: 'The saved funnel\'s id.' }, body: savedPatchSchemas.funnel, responses: { 200: savedFunnelResponseSchema }, errors: [...ROLE_ERRORS, 'name_taken', ...BODY_ERRORS, ...ALWAYS],
    example: { name: 'Renamed' },
  },
  deleteFunnel: {
    method: 'delete', path: '/admin/projects/{id}/funnels/{funnel_id}', app: 'admin-api', summary: 'Delete a saved funnel (reads naming its id then answer 400)', auth: roleOf('editor', 'project'),
    pathParams: { ...PROJECT_ID, funnel_id: 'The saved funnel\'s id.' }, responses: { 204: null }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  listSegments: {
    method: 'get', path: '/admin/projects/{id}/segments', app: 'admin-api', summary: "A project's saved segments (any member; as GET /v1/segments)", auth: roleOf('viewer', 'project'),
    pathParams: PROJECT_ID, responses: { 200: savedSegmentListSchema }, errors: [...MEMBER_ERRORS, ...ALWAYS],
  },
  createSegment: {
    method: 'post', path: '/admin/projects/{id}/segments', app: 'admin-api', summary: 'Save a segment for a project (409 name_taken, 409 limit_reached at 200 per project)', auth: roleOf('editor', 'project'),
    pathParams: PROJECT_ID, body: savedInputSchemas.segment, responses: { 201: savedSegmentResponseSchema }, errors: [...ROLE_ERRORS, 'name_taken', 'limit_reached', ...BODY_ERRORS, ...ALWAYS],
    example: EXAMPLE_SAVED.segment,
  },
  updateSegment: {
    method: 'patch', path: '/admin/projects/{id}/segments/{segment_id}', app: 'admin-api', summary: 'Rename or change a saved segment (any subset of its fields; the whole is checked again)', auth: roleOf('editor', 'project'),
    pathParams: { ...PROJECT_ID, segment_id: 'The saved segment\'s id.' }, body: savedPatchSchemas.segment, responses: { 200: savedSegmentResponseSchema }, errors: [...ROLE_ERRORS, 'name_taken', ...BODY_ERRORS, ...ALWAYS],
    example: { name: 'Renamed' },
  },
  deleteSegment: {
    method: 'delete', path: '/admin/projects/{id}/segments/{segment_id}', app: 'admin-api', summary: 'Delete a saved segment (reads naming its id then answer 400)', auth: roleOf('editor', 'project'),
    pathParams: { ...PROJECT_ID, segment_id: 'The saved segment\'s id.' }, responses: { 204: null }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  deleteProject: {
    method: 'delete', path: '/admin/projects/{id}', app: 'admin-api', summary: 'Delete a project: it and its keys at once, its events queued for deletion (as a forget)', auth: roleOf('admin', 'project'),
    pathParams: PROJECT_ID, responses: { 204: null }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  backup: {
    method: 'post', path: '/admin/backup', app: 'standalone',
    summary: 'Back up the embedded stores of `npm start` (event store BACKUP, key store dump, secrets, manifest) to a directory on the server',
    auth: 'admin_token', body: backupInputSchema, responses: { 200: backupResponseSchema }, errors: ['invalid_session', ...BODY_ERRORS, ...ALWAYS],
    example: { dir: '/var/backups/analytics/2026-11-24' },
  },
  // People (issue 45, docs/accounts.md): users and sessions under /auth, organizations, members and invitations under /admin.
  authSetup: {
    method: 'post', path: '/auth/setup', app: 'admin-api', summary: 'Create the first user, owner of the organization "Default" that receives every existing project', auth: 'admin_token',
    body: setupInputSchema, responses: { 201: sessionTokenResponseSchema }, errors: ['invalid_session', 'already_set_up', ...BODY_ERRORS, ...ALWAYS],
    example: { email: 'you@example.com', password: 'a long passphrase', name: 'You' },
  },
  authLogin: {
    method: 'post', path: '/auth/login', app: 'admin-api', summary: 'Sign in with email and password (more than 10 failures per account or address in 15 minutes: 429)', auth: 'none',
    body: loginInputSchema, responses: { 200: sessionTokenResponseSchema }, errors: ['invalid_credentials', 'rate_limited', ...BODY_ERRORS, ...ALWAYS],
    example: { email: 'you@example.com', password: 'a long passphrase' },
  },
  authMe: {
    method: 'get', path: '/auth/me', app: 'admin-api', summary: 'The signed-in user and their organizations with their role in each', auth: { session: 'user' },
    responses: { 200: meResponseSchema }, errors: [...SESSION_ERRORS, ...ALWAYS],
  },
  authLogout: {
    method: 'post', path: '/auth/logout', app: 'admin-api', summary: "End this request's session (and its read keys)", auth: { session: 'user' },
    responses: { 204: null }, errors: [...SESSION_ERRORS, ...ALWAYS],
  },
  authSessions: {
    method: 'get', path: '/auth/sessions', app: 'admin-api', summary: 'The live sessions of the signed-in user', auth: { session: 'user' },
    responses: { 200: sessionListResponseSchema }, errors: [...SESSION_ERRORS, ...ALWAYS],
  },
  authDeleteSession: {
    method: 'delete', path: '/auth/sessions/{id}', app: 'admin-api', summary: 'End one session of the signed-in user (and its read keys)', auth: { session: 'user' },
    pathParams: { id: 'Session id.' }, responses: { 204: null }, errors: [...SESSION_ERRORS, 'not_found', ...ALWAYS],
  },
  authPassword: {
    method: 'post', path: '/auth/password', app: 'admin-api', summary: 'Change the password; every other session of the user ends', auth: { session: 'user' },
    body: passwordChangeInputSchema, responses: { 204: null }, errors: [...SESSION_ERRORS, 'invalid_credentials', 'rate_limited', ...BODY_ERRORS, ...ALWAYS],
  },
  authPasswordReset: {
    method: 'post', path: '/auth/password-reset', app: 'admin-api', summary: 'Mail a one-time reset link valid one hour (when mail is configured); 202 whatever the email', auth: 'none',
    body: passwordResetInputSchema, responses: { 202: acceptedResponseSchema }, errors: ['rate_limited', ...BODY_ERRORS, ...ALWAYS], example: { email: 'you@example.com' },
  },
  authPasswordResetConfirm: {
    method: 'post', path: '/auth/password-reset/confirm', app: 'admin-api', summary: "Set a new password with a reset link's token; every session of the user ends, a new one starts", auth: 'none',
    body: passwordResetConfirmInputSchema, responses: { 200: sessionTokenResponseSchema }, errors: ['invalid_token', ...BODY_ERRORS, ...ALWAYS],
  },
  authAcceptInvitation: {
    method: 'post', path: '/auth/invitations/accept', app: 'admin-api',
    summary: 'Join an organization with an invitation: a new user sets a password, an existing one signs in with theirs or is signed in as the invited email', auth: { session: 'optional' },
    body: invitationAcceptInputSchema, responses: { 200: sessionTokenResponseSchema }, errors: [...SESSION_ERRORS, 'invalid_token', 'invalid_credentials', 'rate_limited', ...BODY_ERRORS, ...ALWAYS],
  },
  authReadKey: {
    method: 'post', path: '/auth/read-key', app: 'admin-api', summary: 'Mint a short-lived rk_ key of a project for this session (any member): the dashboard reads without a pasted key',
    auth: { session: 'user', role: 'viewer', of: 'project_id' }, body: readKeyInputSchema, responses: { 201: readKeyResponseSchema }, errors: [...MEMBER_ERRORS, ...BODY_ERRORS, ...ALWAYS],
  },
  authConfig: {
    method: 'get', path: '/auth/config', app: 'admin-api', summary: 'What the sign-in and first-run pages offer: setup still required, single sign-on (its name), password reset by mail', auth: 'none',
    responses: { 200: authConfigResponseSchema }, errors: [...ALWAYS],
  },
  // Single sign-on (docs/accounts.md): no cookie; the browser proves it started the sign-in with the binding's secret.
  authOidcStart: {
    method: 'post', path: '/auth/oidc/start', app: 'admin-api', summary: "Start a single sign-on: the provider's authorization URL (PKCE, state, nonce), bound to a secret the browser keeps (404 when SSO is not configured)",
    auth: 'none', body: oidcStartInputSchema, responses: { 200: oidcStartResponseSchema }, errors: ['not_found', 'rate_limited', ...BODY_ERRORS, ...ALWAYS],
    example: { binding: 'n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg' },
  },
  authOidcCallback: {
    method: 'get', path: '/auth/oidc/callback', app: 'admin-api',
    summary: 'Where the provider sends the browser back: 302 to `<PUBLIC_URL>/#sso=<one-time code>` (60 s), or `#sso_error=<reason>`; for a sign-in started on the MCP consent page, to `<PUBLIC_URL>/authorize?<its OAuth request>&sso=<code>` (or `&sso_error=<reason>`); never a session token in an address',
    auth: 'none', query: oidcCallbackParamsSchema, responses: { 302: null }, errors: ['not_found', ...ALWAYS],
  },
  authOidcComplete: {
    method: 'post', path: '/auth/oidc/complete', app: 'admin-api', summary: "Finish a single sign-on: the fragment's one-time code and the binding's secret for a session token",
    auth: 'none', body: oidcCompleteInputSchema, responses: { 200: sessionTokenResponseSchema }, errors: ['not_found', 'invalid_credentials', ...BODY_ERRORS, ...ALWAYS],
  },
  listOrgs: {
    method: 'get', path: '/admin/orgs', app: 'admin-api', summary: "The caller's organizations (every one for ADMIN_TOKEN)", auth: { session: 'any' },
    responses: { 200: orgListResponseSchema }, errors: [...SESSION_ERRORS, ...ALWAYS],
  },
  createOrg: {
    method: 'post', path: '/admin/orgs', app: 'admin-api', summary: 'Create an organization; the signed-in caller becomes its owner', auth: { session: 'any' },
    body: orgInputSchema, responses: { 201: orgResponseSchema }, errors: [...SESSION_ERRORS, ...BODY_ERRORS, ...ALWAYS], example: { name: 'Acme' },
  },
  updateOrg: {
    method: 'patch', path: '/admin/orgs/{id}', app: 'admin-api', summary: 'Rename an organization', auth: roleOf('owner', 'org'),
    pathParams: ORG_ID, body: orgInputSchema, responses: { 200: orgResponseSchema }, errors: [...ROLE_ERRORS, ...BODY_ERRORS, ...ALWAYS],
  },
  deleteOrg: {
    method: 'delete', path: '/admin/orgs/{id}', app: 'admin-api', summary: 'Delete an organization (409 not_empty while it holds projects)', auth: roleOf('owner', 'org'),
    pathParams: ORG_ID, responses: { 204: null }, errors: [...ROLE_ERRORS, 'not_empty', ...ALWAYS],
  },
  createInvitation: {
    method: 'post', path: '/admin/orgs/{id}/invitations', app: 'admin-api', summary: 'Invite someone by email with a role (7 days, one use; an owner invitation needs an owner)', auth: roleOf('admin', 'org'),
    pathParams: ORG_ID, body: invitationInputSchema, responses: { 201: createdInvitationResponseSchema }, errors: [...ROLE_ERRORS, 'already_member', ...BODY_ERRORS, ...ALWAYS],
    example: { email: 'colleague@example.com', role: 'viewer' },
  },
  listInvitations: {
    method: 'get', path: '/admin/orgs/{id}/invitations', app: 'admin-api', summary: 'Pending invitations of an organization', auth: roleOf('admin', 'org'),
    pathParams: ORG_ID, responses: { 200: invitationListResponseSchema }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  deleteInvitation: {
    method: 'delete', path: '/admin/orgs/{id}/invitations/{invitation_id}', app: 'admin-api', summary: 'Withdraw an invitation (an owner invitation needs an owner)', auth: roleOf('admin', 'org'),
    pathParams: { ...ORG_ID, invitation_id: 'Invitation id (UUID).' }, responses: { 204: null }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  listMembers: {
    method: 'get', path: '/admin/orgs/{id}/members', app: 'admin-api', summary: 'Members of an organization with their roles', auth: roleOf('admin', 'org'),
    pathParams: ORG_ID, responses: { 200: memberListResponseSchema }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  updateMember: {
    method: 'patch', path: '/admin/orgs/{id}/members/{user_id}', app: 'admin-api', summary: "Change a member's role (owners and the owner role need an owner; the last owner stays one)", auth: roleOf('admin', 'org'),
    pathParams: { ...ORG_ID, user_id: 'User id (UUID).' }, body: memberInputSchema, responses: { 200: memberResponseSchema }, errors: [...ROLE_ERRORS, 'last_owner', ...BODY_ERRORS, ...ALWAYS],
    example: { role: 'editor' },
  },
  removeMember: {
    method: 'delete', path: '/admin/orgs/{id}/members/{user_id}', app: 'admin-api', summary: "Remove a member: their access to the organization's projects ends at once (read keys revoked)", auth: roleOf('admin', 'org'),
    pathParams: { ...ORG_ID, user_id: 'User id (UUID).' }, responses: { 204: null }, errors: [...ROLE_ERRORS, 'last_owner', ...ALWAYS],
  },
  orgAudit: {
    method: 'get', path: '/admin/orgs/{id}/audit', app: 'admin-api', summary: 'The audit log of an organization: who did what, when (kept 400 days)', auth: roleOf('admin', 'org'),
    pathParams: ORG_ID, query: auditParamsSchema, responses: { 200: auditResponseSchema }, errors: [...ROLE_ERRORS, 'invalid_params', ...ALWAYS],
  },
  listUsers: {
    method: 'get', path: '/admin/users', app: 'admin-api', summary: 'Every user with their organizations (operator)', auth: 'admin_token',
    responses: { 200: userListResponseSchema }, errors: ['invalid_session', ...ALWAYS],
  },
  createPasswordReset: {
    method: 'post', path: '/admin/password-resets', app: 'admin-api', summary: "A user's one-time password-reset link, for the operator to hand over (no mail needed)", auth: 'admin_token',
    body: passwordResetInputSchema, responses: { 201: adminResetResponseSchema }, errors: ['invalid_session', 'not_found', ...BODY_ERRORS, ...ALWAYS], example: { email: 'you@example.com' },
  },
  runRetention: {
    method: 'post', path: '/internal/retention/run', app: 'retention-worker', summary: 'Delete events older than each project\'s retention', auth: 'internal_secret',
    responses: { 200: retentionRunResponseSchema }, errors: ['unauthorized', ...ALWAYS],
  },
  mcp: {
    method: 'post', path: '/mcp', app: 'mcp-gateway',
    // The tools are the routes declared with `mcp`, in declaration order (read when the document is made).
    get summary(): string {
      return `MCP (JSON-RPC 2.0, Streamable HTTP, stateless): tools ${MCP_CAPABILITIES.map((c) => c.mcp.tool).join(', ')}; resources`;
    },
    auth: { api_key: ['sk', 'rk', 'ak'] }, body: jsonRpcRequestSchema, responses: { 200: jsonRpcResponseSchema, 202: null }, errors: [],
    // A refused request (key, body) gets the `{ error }` envelope; JSON-RPC problems the JSON-RPC one.
    errorBody: z.union([errorBodySchema, jsonRpcResponseSchema]),
    example: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    // Streamable HTTP may answer with an event stream.
    streaming: { kind: 'events' },
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
  // Annotations (issue 48, docs/alerts-and-reports.md "Annotations"): dated notes drawn on the chart. read-api serves
  // every /v1/annotations route (the proxy sends a path to one app): the rk_ list is a read capability (get_annotations),
  // the sk_ writes go to the key store. Members list them, editors write them under /admin/projects/{id}/annotations.
  annotations: {
    method: 'get', path: '/v1/annotations', app: 'read-api', summary: `The project's annotations in [from, to), oldest first (at most ${ANNOTATION_LIMITS.listed}; truncated: true when the range holds more)`,
    auth: { api_key: ['rk'], access: 'read', share: true }, query: annotationListQuerySchema, responses: { 200: annotationListSchema }, errors: [...KEY_ERRORS, 'invalid_params', 'rate_limited', ...ALWAYS],
    mcp: {
      tool: 'get_annotations',
      title: 'Annotations',
      description: `Dated notes (deploys, campaigns, incidents) in [from, to), oldest first: { annotations: [{ at, text, kind, created_by }] }. Read them to explain spikes or dips before speculating. Needs an rk_ key. ${CALLER_DATA_NOTE}`,
      annotations: READ_TOOL,
      // The fields in the description, not the schema: the agent pays for tools/list in tokens.
      result: z.object({ annotations: MCP_ANNOTATIONS, truncated: z.boolean().optional() }),
    },
  },
  createAnnotation: {
    method: 'post', path: '/v1/annotations', app: 'read-api', summary: `Add an annotation with the project's sk_ key (a deploy marker from CI); created_by is key:<prefix>. 409 limit_reached at ${ANNOTATION_LIMITS.perProject} per project`,
    auth: { api_key: ['sk', 'ak'], access: 'annotate' }, body: annotationInputSchema, responses: { 201: annotationResponseSchema }, errors: [...KEY_ERRORS, 'limit_reached', ...BODY_ERRORS, ...ALWAYS],
    example: { at: '2026-03-04T09:30:00Z', text: 'Deployed v2.4.0', kind: 'deploy' },
  },
  deleteAnnotation: {
    method: 'delete', path: '/v1/annotations/{annotation_id}', app: 'read-api', summary: 'Delete an annotation made by this same key (any other: 404 not_found)',
    auth: { api_key: ['sk', 'ak'], access: 'annotate' }, pathParams: { annotation_id: 'The annotation\'s id.' }, responses: { 204: null }, errors: [...KEY_ERRORS, 'not_found', ...ALWAYS],
  },
  listProjectAnnotations: {
    method: 'get', path: '/admin/projects/{id}/annotations', app: 'admin-api', summary: "A project's annotations in [from, to) (any member; as GET /v1/annotations)", auth: roleOf('viewer', 'project'),
    pathParams: PROJECT_ID, query: annotationListQuerySchema, responses: { 200: annotationListSchema }, errors: [...MEMBER_ERRORS, 'invalid_params', ...ALWAYS],
  },
  createProjectAnnotation: {
    method: 'post', path: '/admin/projects/{id}/annotations', app: 'admin-api', summary: `Add an annotation to a project (editor; created_by is the user's id, null for ADMIN_TOKEN; 409 limit_reached at ${ANNOTATION_LIMITS.perProject})`,
    auth: roleOf('editor', 'project'), pathParams: PROJECT_ID, body: annotationInputSchema, responses: { 201: annotationResponseSchema }, errors: [...ROLE_ERRORS, 'limit_reached', ...BODY_ERRORS, ...ALWAYS],
    example: { at: '2026-03-04T00:00:00Z', text: 'Spring campaign starts', kind: 'campaign' },
  },
  deleteProjectAnnotation: {
    method: 'delete', path: '/admin/projects/{id}/annotations/{annotation_id}', app: 'admin-api', summary: "Delete any of a project's annotations (editor)", auth: roleOf('editor', 'project'),
    pathParams: { ...PROJECT_ID, annotation_id: 'The annotation\'s id.' }, responses: { 204: null }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  // Alerts (issue 48, docs/alerts-and-reports.md "Alerts"): admins only (the channels name addresses and URLs).
  listAlerts: {
    method: 'get', path: '/admin/projects/{id}/alerts', app: 'admin-api', summary: "A project's alerts with their state (channels without secrets)", auth: roleOf('admin', 'project'),
    pathParams: PROJECT_ID, responses: { 200: alertListSchema }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  createAlert: {
    method: 'post', path: '/admin/projects/{id}/alerts', app: 'admin-api', summary: `Create a spike or drop alert (409 name_taken, 409 limit_reached at ${ALERT_LIMITS.perProject} per project; private outbound addresses refused)`, auth: roleOf('admin', 'project'),
    pathParams: PROJECT_ID, body: alertInputSchema, responses: { 201: alertResponseSchema }, errors: [...ROLE_ERRORS, 'name_taken', 'limit_reached', ...BODY_ERRORS, ...ALWAYS],
    example: EXAMPLE_ALERT,
  },
  getAlert: {
    method: 'get', path: '/admin/projects/{id}/alerts/{alert_id}', app: 'admin-api', summary: 'One alert with its state', auth: roleOf('admin', 'project'),
    pathParams: ALERT_ID, responses: { 200: alertResponseSchema }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  updateAlert: {
    method: 'patch', path: '/admin/projects/{id}/alerts/{alert_id}', app: 'admin-api', summary: 'Change an alert (any subset of its fields; the whole is checked again; a changed condition starts over)', auth: roleOf('admin', 'project'),
    pathParams: ALERT_ID, body: alertPatchSchema, responses: { 200: alertResponseSchema }, errors: [...ROLE_ERRORS, 'name_taken', ...BODY_ERRORS, ...ALWAYS],
    example: { condition: { anomaly: { sensitivity: 'low' } } },
  },
  alertDeliveries: {
    method: 'get', path: '/admin/projects/{id}/alerts/{alert_id}/deliveries', app: 'admin-api', summary: `An alert's messages per channel (fired, recovered, test) and how each went, newest first (at most ${ALERT_LIMITS.deliveriesListed})`, auth: roleOf('admin', 'project'),
    pathParams: ALERT_ID, responses: { 200: alertDeliveriesSchema }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  testAlert: {
    method: 'post', path: '/admin/projects/{id}/alerts/{alert_id}/test', app: 'admin-api', summary: 'Send a test message to every channel of an alert now (retried as any; see its deliveries)', auth: roleOf('admin', 'project'),
    pathParams: ALERT_ID, responses: { 202: alertTestResponseSchema }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  // Last of the block: a route walk deletes the alert the others take.
  deleteAlert: {
    method: 'delete', path: '/admin/projects/{id}/alerts/{alert_id}', app: 'admin-api', summary: 'Delete an alert and its deliveries (pending ones are not sent)', auth: roleOf('admin', 'project'),
    pathParams: ALERT_ID, responses: { 204: null }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  // Scheduled email reports (issue 48, docs/alerts-and-reports.md "Scheduled reports"): a project's admin manages them;
  // the unsubscribe link of each mail works without signing in (its token is the credential, RFC 8058 one-click POST).
  listReports: {
    method: 'get', path: '/admin/projects/{id}/reports', app: 'admin-api', summary: "A project's scheduled email reports, oldest first (the project's admin)", auth: roleOf('admin', 'project'),
    pathParams: PROJECT_ID, responses: { 200: reportListResponseSchema }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  createReport: {
    method: 'post', path: '/admin/projects/{id}/reports', app: 'admin-api',
    summary: `Schedule an email report: weekly (Monday 08:00) or monthly (the 1st 08:00) in the project's time zone, to 1-${REPORT_LIMITS.recipients} recipients, optionally held to a saved segment (409 limit_reached at ${REPORT_LIMITS.perProject} per project)`,
    auth: roleOf('admin', 'project'), pathParams: PROJECT_ID, body: reportInputSchema, responses: { 201: reportResponseSchema }, errors: [...ROLE_ERRORS, 'limit_reached', ...BODY_ERRORS, ...ALWAYS],
    example: { frequency: 'weekly', recipients: ['owner@example.com'] },
  },
  getReport: {
    method: 'get', path: '/admin/projects/{id}/reports/{report_id}', app: 'admin-api', summary: 'One scheduled report, with when it is next sent', auth: roleOf('admin', 'project'),
    pathParams: { ...PROJECT_ID, report_id: REPORT_ID }, responses: { 200: reportResponseSchema }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  updateReport: {
    method: 'patch', path: '/admin/projects/{id}/reports/{report_id}', app: 'admin-api', summary: 'Change a scheduled report (any of frequency, recipients, segment; a new frequency starts its schedule now)', auth: roleOf('admin', 'project'),
    pathParams: { ...PROJECT_ID, report_id: REPORT_ID }, body: reportPatchSchema, responses: { 200: reportResponseSchema }, errors: [...ROLE_ERRORS, ...BODY_ERRORS, ...ALWAYS],
    example: { recipients: ['owner@example.com', 'team@example.com'] },
  },
  sendReport: {
    method: 'post', path: '/admin/projects/{id}/reports/{report_id}/send', app: 'admin-api',
    summary: "Send the report of the latest full period to its recipients now, as a preview (not counted as the period's send; 503 not_ready without mail, PUBLIC_URL or the event store)",
    auth: roleOf('admin', 'project'), pathParams: { ...PROJECT_ID, report_id: REPORT_ID }, responses: { 202: reportPreviewResponseSchema }, errors: [...ROLE_ERRORS, 'invalid_payload', 'not_ready', ...ALWAYS],
  },
  deleteReport: {
    method: 'delete', path: '/admin/projects/{id}/reports/{report_id}', app: 'admin-api', summary: 'Delete a scheduled report (its unsubscribe links stop working)', auth: roleOf('admin', 'project'),
    pathParams: { ...PROJECT_ID, report_id: REPORT_ID }, responses: { 204: null }, errors: [...ROLE_ERRORS, ...ALWAYS],
  },
  reportUnsubscribePage: {
    method: 'get', path: '/reports/unsubscribe/{token}', app: 'admin-api', summary: "A report mail's unsubscribe link: a page asking to confirm (its button POSTs to the same address)", auth: 'none',
    pathParams: { token: UNSUBSCRIBE_TOKEN }, responses: { 200: unsubscribePageSchema }, errors: ['not_found', ...ALWAYS], produces: { 'text/html': 'A small confirm page.' },
  },
  reportUnsubscribe: {
    method: 'post', path: '/reports/unsubscribe/{token}', app: 'admin-api',
    summary: 'One-click unsubscribe (RFC 8058 `List-Unsubscribe=One-Click`, or the confirm page\'s button): the link\'s recipient stops receiving that report; no sign-in, any body ignored',
    auth: 'none', pathParams: { token: UNSUBSCRIBE_TOKEN }, responses: { 200: unsubscribePageSchema }, errors: ['not_found', ...ALWAYS], produces: { 'text/html': 'A page saying the address is unsubscribed.' },
  },
} as const satisfies Record<string, ApiRoute>;

export type RouteName = keyof typeof routes;
type Routes = typeof routes;

/** The routes that are MCP tools (declared with `mcp`). */
export type McpCapability = { [K in RouteName]: Routes[K] extends { mcp: McpTool } ? K : never }[RouteName];
/**
 * The read capabilities: every read-api route read with an rk_ key but a streamed one (the export answers a file as it
 * is read; the annotation writes of /v1/annotations, served by read-api as the path's one app, are no reads). Each runs
 * through one function of libs/event-store's `readCapabilities`, which its HTTP route and its MCP tool both call.
 */
export type ReadCapability = { [K in RouteName]: Routes[K] extends { app: 'read-api'; auth: { access: 'read' } } ? (Routes[K] extends { streaming: Streaming } ? never : K) : never }[RouteName];
/** The write capabilities an MCP tool exposes: each runs through one function of libs/ingest's `writeCapabilities`. */
export type WriteCapability = { [K in McpCapability]: Routes[K] extends { app: 'ingest-api' } ? K : never }[McpCapability];
/**
 * A streamed read that is also an MCP tool (GET /v1/live): its route sends a message of the function's answer at
 * once and every few seconds; its tool answers one (libs/event-store's `snapshotCapabilities`).
 */
export type SnapshotCapability = { [K in McpCapability]: Routes[K] extends { app: 'read-api'; streaming: Streaming } ? K : never }[McpCapability];

type InputSchemaOf<R> = R extends { body: infer B extends z.ZodType } ? B : R extends { query: infer Q extends z.ZodType } ? Q : never;
type ResultSchemaOf<R> = R extends { responses: Record<number, infer S extends z.ZodType> } ? S : never;
/** What a capability's function takes: its route's parsed body, or else its parsed query string. */
export type CapabilityInput<K extends RouteName> = z.output<InputSchemaOf<Routes[K]>>;
/** What a capability's function answers: its route's success body. */
export type CapabilityResult<K extends RouteName> = z.input<ResultSchemaOf<Routes[K]>>;

/** One MCP tool's declaration with its route: what apps/mcp-gateway makes the tool and its call from. */
export interface McpCapabilityDeclaration {
  name: McpCapability;
  route: ApiRoute & { auth: { api_key: readonly KeyKind[]; access: KeyAccess } };
  mcp: McpTool;
}

/** The routes declared with `mcp`, in declaration order: the order of tools/list. */
export const MCP_CAPABILITIES: readonly McpCapabilityDeclaration[] = Object.entries(routes).flatMap(([name, route]) =>
  'mcp' in route ? [{ name: name as McpCapability, route: route as McpCapabilityDeclaration['route'], mcp: route.mcp }] : [],
);

/** The arguments' schema of a capability's route: its body, or else its query string. */
export const routeInputSchema = (route: ApiRoute): z.ZodType => {
  const schema = route.body ?? route.query;
  if (!schema) throw new Error(`${route.method} ${route.path} takes neither a body nor a query string`);
  return schema;
};

/**
 * Whether a route's success answer may carry `warnings` (issue 50, `unknownFieldWarnings`): the ingest and read routes,
 * those a project's key calls and that answer one JSON object (not /mcp, which answers JSON-RPC, nor a file).
 */
export const answersWithWarnings = (route: ApiRoute): boolean =>
  typeof route.auth === 'object' && 'api_key' in route.auth && route.app !== 'mcp-gateway' && !route.produces && Object.keys(route.responses).length === 1;

/** Every route of the API, in declaration order. */
export const API_ROUTES: readonly ApiRoute[] = Object.values(routes);

/** Codes any route can answer beyond its own: an unknown path, or a known path with another method. */
export const ROUTING_ERRORS: readonly ErrorCode[] = ['not_found', 'method_not_allowed'];

/**
 * A declared path as an anchored regular expression's source: `/admin/projects/{id}` -> `^/admin/projects/[^/]+$`
 * (one path segment per parameter, every other character literal). The proxy generator writes it into nginx.conf.
 */
export const pathPattern = (path: string): string =>
  `^${path
    .split(/(\{[^}]+\})/)
    .map((part, i) => (i % 2 ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
    .join('')}$`;
const matchers = API_ROUTES.map((route) => ({ route, re: new RegExp(pathPattern(route.path)) }));

/** The route a request reached, by method and path (without the query string). */
export function routeOf(method: string, path: string): ApiRoute | undefined {
  const m = method.toLowerCase();
  return matchers.find(({ route, re }) => route.method === m && re.test(path))?.route;
}
