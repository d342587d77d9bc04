import { createHash, timingSafeEqual } from 'node:crypto';
import { type Request, type Response, Router } from 'express';
import type { z } from 'zod';
import { ApiError, type ApiRoute, type AuthContext, type Caller, type SessionAuth, answersWithWarnings, isShareToken, parseOrThrow, unknownFieldWarnings } from '@analytics/schema';
import { readJsonBody } from './json-body';

/**
 * A route is declared once, in libs/schema's `routes` (method, path, auth, body and query schemas, responses), and
 * served by `defineRoute(routes.x, handler)`: the path and method string exist only in the declaration, which the
 * router, the OpenAPI document, the 405 `Allow` lists and the contract tests all read.
 *
 * What a defined route does, in the spec's order: the credential check the declaration's `auth` names (from the
 * router's RouteGuards), then the body through `readJsonBody` (the process's body budget) parsed with the `body`
 * schema (400 invalid_payload), the query string with the `query` schema (400 invalid_params), then the handler; its
 * result is sent with the route's one success status (`null` body: no content). Rate limits, enrichment and the rest
 * are the handler's: it receives typed input and its caller, `(input, auth, http) => result`.
 *
 * Guards are the app's (service-kit knows no key store): `api_key` routes take the router's `apiKey` check, `session`
 * routes its `session` guard (user tokens and roles: libs/accounts), `admin_token` and `internal_secret` routes the
 * constant-time checks below. A role the declaration places in the body (`of: 'org_id'`) is checked right after the
 * body is parsed, before the handler; every other credential and role check runs before the body is read.
 */

type Responses<C> = C extends { responses: infer R } ? R : never;
type Schema<C, K extends 'body' | 'query'> = C extends { [P in K]: infer S extends z.ZodType } ? S : undefined;
type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;
type IsUnion<T, U = T> = T extends unknown ? ([U] extends [T] ? false : true) : never;
type Bodies<R> = { [K in keyof R]: R[K] extends z.ZodType ? z.input<R[K]> : void }[keyof R];

// A class, not a symbol: a returned unique symbol widens to `symbol` and would not type-check against Reply.
class Answered {
  private readonly answered = true;
}
/** A handler that wrote its answer itself (MCP's transport) returns this. */
export const ANSWERED = new Answered();

/** What a handler returns: the body of the route's one success status, or ANSWERED when it declares several. */
export type Reply<C extends ApiRoute> = true extends IsUnion<keyof Responses<C>> ? typeof ANSWERED : Bodies<Responses<C>> | typeof ANSWERED;

/** What a handler learns of its caller: the key's context on `api_key` routes, the user or operator on `session` routes. */
export type AuthOf<C extends ApiRoute> = C['auth'] extends { api_key: unknown }
  ? AuthContext
  : C['auth'] extends { session: 'optional' }
    ? Caller | undefined
    : C['auth'] extends { session: unknown }
      ? Caller
      : undefined;

export interface RouteInput<C extends ApiRoute, B extends z.ZodType | undefined = Schema<C, 'body'>> {
  body: Parsed<B>;
  query: Parsed<Schema<C, 'query'>>;
  params: C extends { pathParams: infer P } ? { [K in keyof P]: string } : Record<string, never>;
}

export type RouteHandler<C extends ApiRoute, B extends z.ZodType | undefined = Schema<C, 'body'>> = (
  input: RouteInput<C, B>,
  auth: AuthOf<C>,
  http: { req: Request; res: Response },
) => Promise<Reply<C>> | Reply<C>;

export interface RouteOptions<C extends ApiRoute, B> {
  /** A refinement of the declaration's body schema (normalised origins), or one per key (a pk_ identify may omit its id). */
  body?: B | ((auth: AuthOf<C>) => B);
  /** Answers a body that could not be read (too large, not JSON, budget full) in the route's own envelope (MCP: JSON-RPC). */
  onBodyError?: (error: unknown, res: Response) => void;
}

export interface RouteDefinition {
  contract: ApiRoute;
  serve(guards: RouteGuards, req: Request, res: Response): Promise<void>;
}

/** The credential checks of one router, by the declaration's `auth`. */
export interface RouteGuards {
  /** `api_key` routes: the key's context, or the spec's 401/403 ApiError. */
  apiKey?: (req: Request, res: Response, auth: Extract<ApiRoute['auth'], { api_key: unknown }>) => Promise<AuthContext>;
  /** `session` routes: user tokens (and ADMIN_TOKEN where the declaration takes it) and the role checks. */
  session?: SessionGuard;
  /** `admin_token` routes: `Authorization: Bearer <ADMIN_TOKEN>`. */
  adminToken?: string;
  /** `internal_secret` routes: `X-Internal-Secret: <INTERNAL_SECRET>`. */
  internalSecret?: string;
}

/** The checks of `session` routes (libs/accounts' sessionGuard): the spec's 401 invalid_session, 403 insufficient_role, 404 not_found. */
export interface SessionGuard {
  /** Before the body: who calls (undefined: an `optional` route called without a credential), the role checked when the path names the scope. */
  authenticate(req: Request, auth: SessionAuth): Promise<Caller | undefined>;
  /** After the body: the role checked in the organization the body names (`org_id`, `project_id` scopes). */
  authorizeBody(caller: Caller, auth: SessionAuth, body: unknown): Promise<Caller>;
}

const isBodyScoped = (auth: ApiRoute['auth']): auth is SessionAuth => typeof auth === 'object' && 'session' in auth && (auth.of === 'org_id' || auth.of === 'project_id');

/** Serves the declared route with `handler` (see the top of this file for what it does before and after). */
export function defineRoute<C extends ApiRoute, B extends z.ZodType | undefined = Schema<C, 'body'>>(
  contract: C,
  // NoInfer: the handler is typed by the declaration (its literal `ok: true` stays literal), it does not shape it.
  handler: NoInfer<RouteHandler<C, B>>,
  options: RouteOptions<C, B> = {},
): RouteDefinition {
  const [status, more] = Object.keys(contract.responses).map(Number);
  const warns = answersWithWarnings(contract);
  return {
    contract,
    async serve(guards, req, res) {
      let auth = await guard(contract, guards, req, res);
      let body: unknown;
      const warnings: string[] = [];
      if (contract.body) {
        let raw: unknown;
        try {
          // A key's body counts against its project's share of the body budget (and its address's, as every body).
          raw = await readJsonBody(req, res, auth && 'projectId' in auth ? `project:${auth.projectId}` : undefined);
        } catch (error) {
          if (!options.onBodyError) throw error;
          return options.onBodyError(error, res);
        }
        const schema = typeof options.body === 'function' ? options.body(auth as AuthOf<C>) : (options.body ?? contract.body);
        body = parseNamingUnknown(schema as z.ZodType, raw, 'invalid_payload', 'field', warns);
        if (warns) warnings.push(...unknownFieldWarnings(schema as z.ZodType, raw, 'field'));
        if (isBodyScoped(contract.auth) && auth) auth = await required(guards.session, contract).authorizeBody(auth as Caller, contract.auth, body);
      }
      const query = contract.query ? parseNamingUnknown(contract.query, req.query, 'invalid_params', 'parameter', warns) : undefined;
      if (warns && contract.query) warnings.push(...unknownFieldWarnings(contract.query, req.query, 'parameter'));
      const input = { body, query, params: req.params } as RouteInput<C, B>;
      const reply: unknown = await handler(input, auth as AuthOf<C>, { req, res });
      if (reply === ANSWERED) return;
      if (more !== undefined || status === undefined) throw new Error(`${contract.method} ${contract.path} declares several success statuses: its handler answers itself`);
      if (contract.responses[status] === null) res.status(status).end();
      // What the request sent and the schema dropped, said beside the answer (the spec's answer is unchanged).
      else res.status(status).json(warnings.length > 0 && isPlainObject(reply) ? { ...reply, warnings } : reply);
    },
  };
}

/**
 * `parseOrThrow`, and on an ingest or read route a refusal also names the unknown names it holds with the ones they
 * likely meant (`details.warnings`): a strict schema's "Unrecognized key: dimension" then says "did you mean dimensions?".
 */
function parseNamingUnknown<S extends z.ZodType>(schema: S, input: unknown, code: 'invalid_payload' | 'invalid_params', noun: 'field' | 'parameter', warns: boolean): z.output<S> {
  try {
    return parseOrThrow(schema, input, code);
  } catch (e) {
    const warnings = warns && e instanceof ApiError ? unknownFieldWarnings(schema, input, noun) : [];
    if (warnings.length === 0) throw e;
    const { details, ...rest } = (e as ApiError).extra as { details: Record<string, unknown> };
    throw new ApiError(code, { ...rest, details: { ...details, warnings } });
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An express Router serving the defined routes at their declared methods and paths, with this router's guards. */
export function routerOf(guards: RouteGuards, definitions: readonly RouteDefinition[], router: Router = Router()): Router {
  for (const definition of definitions) {
    const { method, path } = definition.contract;
    router[method](expressPath(path), (req, res) => definition.serve(guards, req, res));
  }
  return router;
}

/** `/admin/projects/{id}` (OpenAPI) as express writes it: `/admin/projects/:id`. */
export const expressPath = (path: string): string => path.replace(/\{([^}]+)\}/g, ':$1');

/** What a route's credential must be, as insufficient_scope's `required` names it to a share credential it refuses. */
function requiredOf(auth: Exclude<ApiRoute['auth'], 'none'>): string {
  if (auth === 'admin_token') return 'admin';
  if (auth === 'internal_secret') return 'internal';
  if ('session' in auth) return 'session';
  return auth.access === 'forget' ? 'ingest' : (auth.access ?? 'api_key');
}

async function guard(contract: ApiRoute, guards: RouteGuards, req: Request, res: Response): Promise<AuthContext | Caller | undefined> {
  const auth = contract.auth;
  if (auth === 'none') return undefined;
  // A share link's credential (`shr_…`) is refused by form, before any lookup, on every route that does not declare
  // `share: true` (docs/saved-and-shared.md): it reads what the shared dashboard needs and nothing else.
  if (isShareToken(/^Bearer[ \t]+(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1]) && !(typeof auth === 'object' && 'api_key' in auth && auth.share === true)) {
    throw new ApiError('insufficient_scope', { required: requiredOf(auth), got: 'share' });
  }
  if (auth === 'admin_token') return void checkAdminToken(req, required(guards.adminToken, contract));
  if (auth === 'internal_secret') return void checkInternalSecret(req, required(guards.internalSecret, contract));
  if ('session' in auth) return required(guards.session, contract).authenticate(req, auth);
  return required(guards.apiKey, contract)(req, res, auth);
}

function required<T>(value: T | undefined, contract: ApiRoute): T {
  if (value === undefined) throw new Error(`${contract.method} ${contract.path} needs a ${JSON.stringify(contract.auth)} guard on its router`);
  return value;
}

const digest = (s: string) => createHash('sha256').update(s).digest();
// Both sides hashed first: timingSafeEqual needs equal lengths, and the length of the secret must not leak either.
const sameSecret = (given: string, expected: string) => timingSafeEqual(digest(given), digest(expected));

/** Whether the request presents `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. */
export function presentsAdminToken(req: Request, adminToken: string): boolean {
  const m = /^Bearer[ \t]+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
  return m !== null && sameSecret(m[1]!, adminToken);
}

/** `Authorization: Bearer <ADMIN_TOKEN>`; anything else is 401 invalid_session. */
export function checkAdminToken(req: Request, adminToken: string): void {
  if (!presentsAdminToken(req, adminToken)) throw new ApiError('invalid_session');
}

/** `X-Internal-Secret` equal to INTERNAL_SECRET (constant time); API keys are not accepted: anything else is 401 unauthorized. */
export function checkInternalSecret(req: Request, secret: string): void {
  const given = req.get('x-internal-secret');
  if (!given || !sameSecret(given, secret)) throw new ApiError('unauthorized');
}
