import { Router, type NextFunction, type Request, type Response } from 'express';
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
import { type AuthContext, type Authenticator, requiredScope, scopeOf } from '@analytics/auth';
import type { RequestContext } from '@analytics/enrichment';
import { type EventStore, queryEvents, querySources, queryStats } from '@analytics/event-store';
import type { IngestService } from '@analytics/ingest';
import { z } from 'zod';
import { ApiError, EVENTS_TABLE_DESCRIPTION, eventInputSchema, queryParamsSchema, sourcesParamsSchema, validationDetails } from '@analytics/schema';
import { type Logger, jsonBody, toApiError } from '@analytics/service-kit';
import { CLASSIFIER_RULES, RESOURCES, TOOLS, type ToolSpec, getStatsArgsSchema } from './tools';

export interface McpRouterDeps {
  authenticator: Authenticator;
  ingest: IngestService;
  events: EventStore;
  ipHashSecret: string;
  logger: Logger;
  clock?: () => number;
  /** Largest tool result (serialised JSON); longer row lists are cut and marked truncated. */
  maxResultBytes?: number;
}

interface McpLocals {
  auth: AuthContext;
}

const SERVER_INFO = { name: 'event-analytics', version: '1.0.0' };
const DEFAULT_MAX_RESULT_BYTES = 512 * 1024;

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

/** POST /mcp: MCP over Streamable HTTP, stateless (a fresh server and transport per request), JSON responses. */
export function createMcpRouter(deps: McpRouterDeps): Router {
  const router = Router();
  const now = deps.clock ?? Date.now;
  const maxBytes = deps.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;

  const parseArgs = <S extends z.ZodTypeAny>(schema: S, args: unknown): z.output<S> => {
    const parsed = schema.safeParse(args ?? {});
    if (!parsed.success) throw rpcError(ErrorCode.InvalidParams, 'invalid_params', { details: validationDetails(parsed.error) });
    return parsed.data;
  };

  // The same lib functions as ingest-api and read-api: no HTTP hop between our own services.
  const handlers: Record<string, (auth: AuthContext, args: unknown, req: Request) => Promise<Record<string, unknown>>> = {
    track_event: async (auth, args, req) => {
      const input = parseArgs(eventInputSchema, args);
      const ctx: RequestContext = { projectId: auth.projectId, ip: req.ip, userAgent: req.get('user-agent'), host: req.get('host'), nowMs: now(), ipHashSecret: deps.ipHashSecret };
      const { event_id } = await deps.ingest.track(ctx, input);
      return { ok: true, event_id };
    },
    query_events: async (auth, args) => capRows({ rows: await queryEvents(deps.events, auth.projectId, parseArgs(queryParamsSchema, args)) }, maxBytes),
    get_stats: async (auth, args) => capRows({ ...(await queryStats(deps.events, auth.projectId, parseArgs(getStatsArgsSchema, args))) }, maxBytes),
    top_sources: async (auth, args) => capRows({ ...(await querySources(deps.events, auth.projectId, parseArgs(sourcesParamsSchema, args))) }, maxBytes),
  };

  const runTool = (tool: ToolSpec, auth: AuthContext, args: unknown, req: Request) => {
    const handler = handlers[tool.name];
    if (!handler) throw rpcError(ErrorCode.InvalidParams, 'unhandled_tool', { tool: tool.name });
    return handler(auth, args, req);
  };

  const buildServer = (auth: AuthContext, req: Request): Server => {
    // prompts: declared so the SDK accepts a prompts/list handler; MCP Inspector lists prompts on every connect.
    const server = new Server(SERVER_INFO, { capabilities: { tools: {}, resources: {}, prompts: {} } });
    server.fallbackRequestHandler = async (request) => {
      throw rpcError(ErrorCode.MethodNotFound, 'method_not_found', { method: request.method });
    };
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: TOOLS.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const tool = TOOLS.find((t) => t.name === request.params.name);
      if (!tool) throw rpcError(ErrorCode.InvalidParams, 'unknown_tool', { tool: request.params.name });
      try {
        deps.authenticator.authorize(auth, tool.access);
      } catch {
        throw rpcError(-32000, 'insufficient_scope', { required: requiredScope(tool.access), got: scopeOf(auth.kind) });
      }
      try {
        const result = await runTool(tool, auth, request.params.arguments, req);
        return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
      } catch (e) {
        if (e instanceof McpError) throw e;
        const apiError = toApiError(e);
        if (apiError.code === 'invalid_group_by' || apiError.code === 'invalid_params') {
          throw rpcError(ErrorCode.InvalidParams, apiError.code, apiError.extra);
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
      const { id, name, retention_days, allowed_origins } = auth.project;
      const bodies: Record<string, unknown> = {
        'analytics://project': { id, name, retention_days, allowed_origins },
        'analytics://schema/events': EVENTS_TABLE_DESCRIPTION,
        'analytics://classifier/rules': { rules: CLASSIFIER_RULES },
      };
      if (!(uri in bodies)) throw rpcError(ErrorCode.InvalidParams, 'unknown_resource', { uri });
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(bodies[uri]) }] };
    });
    return server;
  };

  const envelopeError = (res: Response, status: number, message: string, data?: unknown) =>
    res.status(status).json({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, message, ...(data ? { data } : {}) } });

  // The key is checked before the body is read: a refused request's body is never buffered or parsed.
  const authenticate = async (req: Request, res: Response<unknown, McpLocals>, next: NextFunction) => {
    // Only server-side keys: pk_ is refused before any tool runs.
    const auth = await deps.authenticator.resolve(req.get('authorization'));
    if (auth.kind === 'pk') throw new ApiError('insufficient_scope', { required: 'read|ingest (server-side key)', got: 'ingest (pk_)' });
    res.locals.auth = auth;
    next();
  };

  // Body errors of an authenticated request answer in the JSON-RPC envelope (the rest of the API answers { error }).
  const parseJson = jsonBody();
  const readBody = (req: Request, res: Response, next: NextFunction) =>
    parseJson(req, res, (err?: unknown) => {
      if (!err) return next();
      const apiError = toApiError(err);
      if (apiError.status >= 500) return next(err);
      envelopeError(res, apiError.status, 'invalid_request', { error: apiError.code, ...apiError.extra });
    });

  router.post('/mcp', authenticate, readBody, async (req: Request, res: Response<unknown, McpLocals>) => {
    const { auth } = res.locals;
    const body: unknown = req.body;
    const messages = Array.isArray(body) ? body : [body];
    if (messages.length === 0 || !messages.every((m) => JSONRPCMessageSchema.safeParse(m).success)) {
      return envelopeError(res, 400, 'invalid_request');
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
  });

  // Stateless: no server-initiated streams and no sessions to end.
  router.all('/mcp', (_req, res) => {
    res.status(405).set('Allow', 'POST').json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'method_not_allowed' } });
  });

  return router;
}
