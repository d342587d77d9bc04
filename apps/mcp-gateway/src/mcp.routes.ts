import { Router, type Request, type Response } from 'express';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  JSONRPCMessageSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  PingRequestSchema,
  ReadResourceRequestSchema,
  isJSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { AuditLog, McpConsent } from '@analytics/accounts';
import { type AuthContext, type Authenticator, type OAuthStore, isOAuthAccessToken, normalizeOrigin, originAllowed, requiredScope, scopeOf } from '@analytics/auth';
import { type EventStore, isReadCapability, isSnapshotCapability, readCapabilities, readScopeOf, snapshotCapabilities } from '@analytics/event-store';
import { type IngestService, requestContexts, writeCapabilities } from '@analytics/ingest';
import { z } from 'zod';
import { ApiError, EVENTS_TABLE_DESCRIPTION, MCP_CAPABILITIES, type McpTool, NO_SAVED, type SavedLookup, parseOrThrow, routeInputSchema, routes, unknownFieldWarnings, validationDetails } from '@analytics/schema';
import { ANSWERED, type Logger, MemoryRateLimiter, type RateLimiter, countIngested, defineRoute, publicBaseUrl, recordErrorCode, routerOf, toApiError } from '@analytics/service-kit';
import { CHART_HTML, CHART_RESOURCE_META, CHART_URI, MCP_APP_MIME } from './chart-view';
import { PROTECTED_RESOURCE_PATH, createOAuthRouter } from './oauth';
import { CLASSIFIER_RULES, RESOURCES, TOOLS, type ToolError, type ToolSpec, toolErrorText } from './tools';

export interface McpRouterDeps {
  authenticator: Authenticator;
  ingest: IngestService;
  events: EventStore;
  /** The projects' saved goals, funnels and segments (the key store's, mcpWiring): list_goals and the ids a read tool names. Unset: none. */
  saved?: SavedLookup;
  ipHashSecret: string;
  logger: Logger;
  clock?: () => number;
  /** Largest tool result (serialised JSON); longer row lists are cut and marked truncated. */
  maxResultBytes?: number;
  /** Browser origins admitted on /mcp besides the key's project origins (MCP_ALLOWED_ORIGINS); unset: loopback origins. */
  allowedOrigins?: readonly string[];
  /**
   * OAuth 2.1 for connector UIs (MCP_OAUTH=on): tokens and codes in the key store; `limiter` holds the registrations
   * per client address (the deployment's buckets: Redis when REDIS_URL is set; this process's when not given).
   */
  oauth?: { store: OAuthStore; limiter?: RateLimiter };
  /** PUBLIC_URL: the origin named in OAuth metadata and WWW-Authenticate; unset: the request's validated Host. */
  publicUrl?: string;
  /**
   * The consent page's sign-in and project picker (people accounts: npm start, the gateway with ADMIN_TOKEN); unset:
   * the page takes a pasted key only.
   */
  consent?: McpConsent;
  /** Where every tool call through a grant bound to a person is written (`mcp.tool_called`, the project's organization). */
  audit?: AuditLog;
}

/** Who called through an OAuth grant a person gave by signing in: what the audit names. */
interface GrantCaller {
  client: { id: string; name: string | null };
  user: { id: string; email: string };
}

const DECLARATIONS = new Map(MCP_CAPABILITIES.map((c) => [c.name, c]));
const SERVER_INFO = { name: 'event-analytics', version: '1.0.0' };
/** Messages in one JSON-RPC batch at most: agents send one call at a time; a longer batch is a 400 before any is parsed. */
export const MAX_BATCH_MESSAGES = 100;
const DEFAULT_MAX_RESULT_BYTES = 512 * 1024;
/** Characters of a string JSON-RPC id at most (ids are short tokens; a number id is short anyway). */
export const MAX_ID_CHARS = 256;

/** Params schema of each method this server answers (initialize and ping are the SDK's own handlers). */
const PARAMS_SCHEMAS = new Map<string, z.ZodType>(
  [InitializeRequestSchema, PingRequestSchema, ListToolsRequestSchema, CallToolRequestSchema, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ReadResourceRequestSchema, ListPromptsRequestSchema].map(
    (schema) => [schema.shape.method.value, schema.shape.params] as const,
  ),
);

/**
 * Answers requests whose params fail their schema with -32602 invalid_params and the validation details.
 * Checked per message between transport and Server because the SDK parses params inside its handler wrapper and
 * answers a failure with -32603 (-32602 for tools/call) and a zod dump as message; the transport still pairs this
 * answer with its request id, batches included.
 */
function guardParams(transport: Transport): void {
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message)) {
      const parsed = PARAMS_SCHEMAS.get(message.method)?.safeParse(message.params);
      if (parsed && !parsed.success) {
        const error = { code: ErrorCode.InvalidParams, message: 'invalid_params', data: { details: validationDetails(parsed.error) } };
        return void transport.send({ jsonrpc: '2.0', id: message.id, error });
      }
    }
    deliver?.(message, extra);
  };
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/**
 * A page on the caller's own machine (any port). DNS rebinding cannot forge it: the browser sends the attacker's
 * origin, not the address it resolved to.
 */
export function isLoopbackOrigin(origin: string | undefined): boolean {
  const o = origin === undefined ? null : normalizeOrigin(origin);
  return o !== null && LOOPBACK_HOSTS.has(new URL(o).hostname);
}

/** A name the caller sent, as an error echoes it: cut, so the answer stays small whatever was sent. */
const echoed = (name: unknown) => (typeof name === 'string' && name.length > 200 ? `${name.slice(0, 200)}…` : name);

/** Error message + data for the spec's JSON-RPC codes. */
function rpcError(code: number, message: string, data?: unknown): McpError {
  const e = new McpError(code, message, data);
  // McpError prefixes "MCP error <code>: "; the spec's message is the bare code string.
  e.message = message;
  return e;
}

/** Cuts `rows` until the JSON fits the cap, so one tool call cannot flood an agent's context. */
export function capRows<T extends { rows: unknown[] }>(result: T, maxBytes: number): T & { truncated?: boolean } {
  let text = JSON.stringify(result);
  if (Buffer.byteLength(text) <= maxBytes) return result;
  let rows = result.rows;
  while (rows.length > 0 && Buffer.byteLength(text) > maxBytes) {
    rows = rows.slice(0, Math.floor(rows.length / 2));
    text = JSON.stringify({ ...result, rows });
  }
  return { ...result, rows, truncated: true };
}

/** A funnel's breakdown (up to 100 values x 10 steps) cut, as capRows cuts rows, until the JSON fits the cap. */
export function capBreakdown<T extends { breakdown?: unknown[] }>(result: T, maxBytes: number): T & { truncated?: boolean } {
  if (!result.breakdown || Buffer.byteLength(JSON.stringify(result)) <= maxBytes) return { ...result };
  let breakdown = result.breakdown;
  while (breakdown.length > 0 && Buffer.byteLength(JSON.stringify({ ...result, breakdown })) > maxBytes) breakdown = breakdown.slice(0, Math.floor(breakdown.length / 2));
  return { ...result, breakdown, truncated: true };
}

/** A tool's result as the declaration caps it (`cap`): its rows or its breakdown cut to the size cap, else a copy. */
function capped(result: object, cap: McpTool['cap'], maxBytes: number): Record<string, unknown> {
  if (cap === 'rows') return capRows(result as { rows: unknown[] }, maxBytes);
  if (cap === 'breakdown') return capBreakdown(result as { breakdown?: unknown[] }, maxBytes);
  return { ...result };
}

/** POST /mcp: MCP over Streamable HTTP, stateless (a fresh server and transport per request), JSON responses. */
export function createMcpRouter(deps: McpRouterDeps): Router {
  const requestContextOf = requestContexts(deps.ipHashSecret, deps.clock);
  const maxBytes = deps.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;

  const parseArgs = <S extends z.ZodTypeAny>(schema: S, args: unknown): z.output<S> => parseOrThrow(schema, args ?? {}, 'invalid_params');

  /**
   * A tool call runs its capability's one function, the one its HTTP route runs (no HTTP hop between our own
   * services): the arguments parsed with the declaration's schema (`args`, else the route's), the result capped as it says.
   */
  const runTool = async (tool: ToolSpec, auth: AuthContext, args: unknown, req: Request): Promise<Record<string, unknown>> => {
    const { route, mcp } = DECLARATIONS.get(tool.capability)!;
    const schema = mcp.args ?? routeInputSchema(route);
    // Arguments the tool does not take, each with the one it likely meant (`event_name`: did you mean event?): in the
    // error when the call fails (the model fixes the right argument), as `warnings` beside the result when it does not.
    const warnings = unknownFieldWarnings(schema, args ?? {}, 'argument');
    let input: never;
    try {
      input = parseArgs(schema, args) as never;
    } catch (e) {
      if (warnings.length === 0 || !(e instanceof ApiError)) throw e;
      const { details, ...rest } = e.extra as { details: Record<string, unknown> };
      throw new ApiError(e.code, { ...rest, details: { ...details, warnings } });
    }
    const name = tool.capability;
    const warned = <T extends object>(result: T) => (warnings.length > 0 ? { ...result, warnings } : result);
    if (isReadCapability(name)) return capped(warned(await readCapabilities[name](deps.events, auth.projectId, input, deps.saved ?? NO_SAVED, readScopeOf(auth.project))), mcp.cap, maxBytes);
    // A streamed read's tool (get_live): one message of its stream, the function each of its ticks runs.
    if (isSnapshotCapability(name)) return capped(warned(await snapshotCapabilities[name](deps.events, auth.projectId, input)), mcp.cap, maxBytes);
    const result = await writeCapabilities[name](deps.ingest, requestContextOf(req, auth), input);
    // track_event, the one write tool, adds one event.
    countIngested(req.res, 1);
    return capped(warned(result), mcp.cap, maxBytes);
  };

  const mayCall = (auth: AuthContext, tool: ToolSpec): boolean => {
    try {
      deps.authenticator.authorize(auth, tool.access);
      return true;
    } catch {
      return false;
    }
  };

  // The person and client behind a request's OAuth token, when the grant was given by signing in (set by authenticate).
  const grantCallers = new WeakMap<Request, GrantCaller>();

  /** `mcp.tool_called` in the project's organization: who, which client, which tool; never arguments, results or an address. */
  const auditToolCall = (auth: AuthContext, caller: GrantCaller, tool: string): void => {
    const audit = deps.audit;
    if (!audit) return;
    // Not awaited: the call is neither failed nor slowed by its audit entry (AuditLog.record reports its own failures).
    void audit
      .record(
        { orgOfProject: auth.projectId },
        {
          action: 'mcp.tool_called',
          actor: { type: 'user', id: caller.user.id, name: caller.user.email },
          target: { type: 'project', id: auth.project.id, name: auth.project.name },
          details: { client: caller.client, tool },
        },
      )
      .catch((e: unknown) => deps.logger.warn({ err: (e as Error).message, tool }, 'audit of an MCP tool call failed'));
  };

  const buildServer = (auth: AuthContext, req: Request): Server => {
    // prompts: declared so the SDK accepts a prompts/list handler; MCP Inspector lists prompts on every connect.
    const server = new Server(SERVER_INFO, { capabilities: { tools: {}, resources: {}, prompts: {} } });
    server.fallbackRequestHandler = async (request) => {
      throw rpcError(ErrorCode.MethodNotFound, 'method_not_found', { method: echoed(request.method) });
    };
    // Only the tools this key may call: an rk_ key is not offered track_event only to be refused it.
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: TOOLS.filter((t) => mayCall(auth, t)).map(({ access: _access, capability: _capability, ...tool }) => tool),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const tool = TOOLS.find((t) => t.name === request.params.name);
      if (!tool) throw rpcError(ErrorCode.InvalidParams, 'unknown_tool', { tool: echoed(request.params.name) });
      try {
        deps.authenticator.authorize(auth, tool.access);
      } catch {
        throw rpcError(-32000, 'insufficient_scope', { required: requiredScope(tool.access), got: scopeOf(auth.kind) });
      }
      const grantCaller = grantCallers.get(req);
      if (grantCaller) auditToolCall(auth, grantCaller, tool.name);
      try {
        const result = await runTool(tool, auth, request.params.arguments, req);
        return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
      } catch (e) {
        if (e instanceof McpError) throw e;
        const apiError = toApiError(e);
        // Argument errors are results the model reads (SEP-1303), not protocol errors a client shows as opaque.
        // A saved id the project does not have (goal, funnel, segment) is the body's 400 invalid_payload over HTTP: an
        // argument error here too.
        if (apiError.code === 'invalid_group_by' || apiError.code === 'invalid_params' || apiError.code === 'invalid_payload') {
          const { details, ...rest } = apiError.extra as { details: Record<string, unknown> };
          const error: ToolError = { error: apiError.code === 'invalid_payload' ? 'invalid_params' : apiError.code, details: { ...details, ...rest } };
          return { isError: true, content: [{ type: 'text', text: toolErrorText(error) }], structuredContent: error };
        }
        if (apiError.status >= 500) deps.logger.error({ tool: tool.name, err: e }, 'mcp tool failed');
        throw rpcError(-32000, 'tool_failed', { error: apiError.code, ...apiError.extra });
      }
    });
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES.map((r) => ({ ...r })) }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [] }));
    server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: [] }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
      const uri = request.params.uri;
      const { id, name, retention_days, allowed_origins, timezone } = auth.project;
      // A Map, not an object literal: `uri in {}` would find __proto__, constructor, toString and the like.
      const bodies = new Map<string, unknown>([
        ['analytics://project', { id, name, retention_days, allowed_origins, timezone }],
        ['analytics://schema/events', EVENTS_TABLE_DESCRIPTION],
        ['analytics://classifier/rules', { rules: CLASSIFIER_RULES }],
      ]);
      if (uri === CHART_URI) return { contents: [{ uri, mimeType: MCP_APP_MIME, text: CHART_HTML, _meta: CHART_RESOURCE_META }] };
      if (!bodies.has(uri)) throw rpcError(ErrorCode.InvalidParams, 'unknown_resource', { uri: echoed(uri) });
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(bodies.get(uri)) }] };
    });
    return server;
  };

  const envelopeError = (res: Response, status: number, message: string, data?: unknown, code: number = ErrorCode.InvalidRequest) =>
    res.status(status).json({ jsonrpc: '2.0', id: null, error: { code, message, ...(data ? { data } : {}) } });

  /** An API key, or (OAuth on) an access token standing for the key its owner pasted into /authorize. */
  const resolve = async (req: Request, authorization: string | undefined): Promise<AuthContext> => {
    const token = authorization ? /^Bearer[ \t]+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
    if (!deps.oauth || !token || !isOAuthAccessToken(token)) return deps.authenticator.resolve(authorization);
    const access = await deps.oauth.store.resolveAccessToken(token);
    if (!access) throw new ApiError('invalid_api_key');
    if (access.user) grantCallers.set(req, { client: { id: access.client_id, name: access.client_name }, user: access.user });
    return { projectId: access.project.id, project: access.project, kind: access.kind, prefix: access.prefix };
  };

  /** RFC 6750 challenge of a 401: why (none for a missing key), and where OAuth starts when it is on (RFC 9728). */
  const challenge = (req: Request, e: ApiError): string => {
    const params = e.code === 'missing_bearer_token' ? [] : ['error="invalid_token"', `error_description="${e.code}"`];
    if (deps.oauth) params.push(`resource_metadata="${publicBaseUrl(req, deps.publicUrl)}${PROTECTED_RESOURCE_PATH}"`);
    return params.length > 0 ? `Bearer ${params.join(', ')}` : 'Bearer';
  };

  // The key is checked before the body is read: a refused request's body is never buffered or parsed.
  const authenticate = async (req: Request, res: Response): Promise<AuthContext> => {
    let auth: AuthContext;
    try {
      auth = await resolve(req, req.get('authorization'));
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) res.set('WWW-Authenticate', challenge(req, e));
      throw e;
    }
    // Only server-side keys: pk_ is refused before any tool runs.
    if (auth.kind === 'pk') throw new ApiError('insufficient_scope', { required: 'read|ingest (server-side key)', got: 'ingest (pk_)' });
    // A browser page may reach /mcp only from an allowed origin (DNS rebinding, CSRF); desktop clients send none.
    const origin = req.get('origin');
    const allowed = deps.allowedOrigins ? originAllowed(origin, deps.allowedOrigins) : isLoopbackOrigin(origin);
    if (origin !== undefined && !allowed && !originAllowed(origin, auth.project.allowed_origins)) {
      throw new ApiError('origin_not_allowed', { details: { formErrors: [`Origin ${origin.slice(0, 200)} may not call /mcp: add it to MCP_ALLOWED_ORIGINS or the project's allowed_origins`], fieldErrors: {} } });
    }
    return auth;
  };

  /**
   * A body that could not be read (through the process's body budget, like every other route's) answers in the
   * JSON-RPC envelope (the rest of the API answers { error }): 4xx as invalid_request, a full budget as 503 server_busy
   * with Retry-After.
   */
  const onBodyError = (err: unknown, res: Response): void => {
    const apiError = toApiError(err);
    if (apiError.code === 'server_busy') {
      res.set('Retry-After', String(apiError.extra['retry_after_s'] ?? 1));
      recordErrorCode(res, 'server_busy');
      return void envelopeError(res, apiError.status, 'server_busy', { error: apiError.code, ...apiError.extra }, -32000);
    }
    if (apiError.status >= 500) throw err;
    envelopeError(res, apiError.status, 'invalid_request', { error: apiError.code, ...apiError.extra });
  };

  const router = Router();
  if (deps.oauth) {
    const registration = { limiter: deps.oauth.limiter ?? new MemoryRateLimiter(), addressSecret: deps.ipHashSecret };
    router.use(createOAuthRouter(deps.oauth.store, deps.authenticator, { publicUrl: deps.publicUrl, registration, consent: deps.consent }));
  }

  const mcp = defineRoute(
    routes.mcp,
    async ({ body }, auth, { req, res }) => {
      const messages = Array.isArray(body) ? body : [body];
      // Counted before any message is validated: a batch of 100,000 calls costs one comparison, not 100,000 parses.
      if (messages.length > MAX_BATCH_MESSAGES) {
        envelopeError(res, 400, 'invalid_request', { error: 'batch_too_large', max_messages: MAX_BATCH_MESSAGES, got: messages.length });
        return ANSWERED;
      }
      if (messages.length === 0 || !messages.every((m) => JSONRPCMessageSchema.safeParse(m).success)) {
        envelopeError(res, 400, 'invalid_request');
        return ANSWERED;
      }
      // Every answer echoes its request's id: a longer one is refused, so no answer is larger than its bounded content.
      if (messages.some((m) => typeof (m as { id?: unknown }).id === 'string' && (m as { id: string }).id.length > MAX_ID_CHARS)) {
        envelopeError(res, 400, 'invalid_request', { error: 'id_too_long', max_chars: MAX_ID_CHARS });
        return ANSWERED;
      }
      // Raw JSON-RPC clients may not send the Streamable HTTP Accept header; answers are JSON either way.
      req.headers.accept = 'application/json, text/event-stream';
      const server = buildServer(auth, req);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      guardParams(transport);
      await transport.handleRequest(req, res, body);
      return ANSWERED;
    },
    // The messages (one or a batch) are checked above, each answered in the JSON-RPC envelope: the body is taken as it is.
    { body: z.unknown(), onBodyError },
  );
  routerOf({ apiKey: authenticate }, [mcp], router);

  // Stateless: no server-initiated streams and no sessions to end.
  router.all('/mcp', (_req, res) => {
    res.status(405).set('Allow', 'POST').json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'method_not_allowed' } });
  });

  return router;
}
