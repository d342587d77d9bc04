import { Router, type NextFunction, type Request, type Response } from 'express';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  JSONRPCMessageSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { type AuthContext, type Authenticator, requiredScope, scopeOf } from '@analytics/auth';
import type { RequestContext } from '@analytics/enrichment';
import { type EventStore, queryEvents, querySources, queryStats } from '@analytics/event-store';
import type { IngestService } from '@analytics/ingest';
import { z } from 'zod';
import { ApiError, eventInputSchema, queryParamsSchema, sourcesParamsSchema, validationDetails } from '@analytics/schema';
import { type Logger, jsonBody, toApiError } from '@analytics/service-kit';
import { CLASSIFIER_RULES, EVENT_COLUMNS, RESOURCES, TOOLS, type ToolSpec, getStatsArgsSchema } from './tools';

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

const SERVER_INFO = { name: 'event-analytics', version: '1.0.0' };
const DEFAULT_MAX_RESULT_BYTES = 512 * 1024;

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
    const server = new Server(SERVER_INFO, { capabilities: { tools: {}, resources: {} } });
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
    server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
      const uri = request.params.uri;
      const { id, name, retention_days, allowed_origins } = auth.project;
      const bodies: Record<string, unknown> = {
        'analytics://project': { id, name, retention_days, allowed_origins },
        'analytics://schema/events': { table: 'events', columns: EVENT_COLUMNS },
        'analytics://classifier/rules': { rules: CLASSIFIER_RULES },
      };
      if (!(uri in bodies)) throw rpcError(ErrorCode.InvalidParams, 'unknown_resource', { uri });
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(bodies[uri]) }] };
    });
    return server;
  };

  const envelopeError = (res: Response, status: number, message: string, data?: unknown) =>
    res.status(status).json({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, message, ...(data ? { data } : {}) } });

  router.post('/mcp', jsonBody(), async (req, res) => {
    // Only server-side keys: pk_ is refused before any tool runs.
    const auth = await deps.authenticator.resolve(req.get('authorization'));
    if (auth.kind === 'pk') throw new ApiError('insufficient_scope', { required: 'read|ingest (server-side key)', got: 'ingest (pk_)' });

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
    await transport.handleRequest(req, res, body);
  });

  // Stateless: no server-initiated streams and no sessions to end.
  router.all('/mcp', (_req, res) => {
    res.status(405).set('Allow', 'POST').json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'method_not_allowed' } });
  });

  // Body errors on /mcp answer in the JSON-RPC envelope (the rest of the API answers { error }).
  router.use('/mcp', (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const type = (err as { type?: string })?.type;
    if (type === 'entity.parse.failed') return envelopeError(res, 400, 'invalid_request', { reason: 'body is not valid JSON' });
    if (type === 'entity.too.large') return envelopeError(res, 413, 'invalid_request', { reason: 'body too large' });
    next(err);
  });

  return router;
}
