import { z } from 'zod';
import { API_ROUTES, type ApiApp, type ApiRoute, type RoleScope, type SessionAuth, answersWithWarnings } from './api-routes';
import { COLUMN_DIMENSIONS, FINITE_DIMENSION_VALUES, INSIGHT_METRICS, INSIGHT_TIME_DIMENSIONS, dimensionsText, metricsText } from './catalog';
import { ERROR_STATUS, type ErrorCode } from './errors';
import { errorBodySchema } from './responses.schema';
import { warningsSchema } from './unknown-fields';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the workspace's package.json is the one place the release is numbered; a bundle inlines only `version`
import { version as PACKAGE_VERSION } from '../../../package.json';

type JsonSchema = Record<string, unknown>;

// JSON Schema 2020-12 is OpenAPI 3.1's dialect: the documents embed zod's output as it is, minus `$schema`.
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

const KIND_USE: Record<string, string> = { pk: 'pk_ (browsers, Origin checked)', sk: 'sk_ (servers)', rk: 'rk_ (read)', ak: 'ak_ (admin)' };
const ROLE_SCOPE: Record<RoleScope, string> = {
  org: 'the organization {id}',
  project: "the project {id}'s organization",
  key: "the key's project's organization",
  org_id: 'the organization the body names (org_id)',
  project_id: "the organization of the project the body names (project_id)",
};

function sessionNote(auth: SessionAuth): string {
  const who = { user: 'A user token (Authorization: Bearer ses_…); ADMIN_TOKEN is not a user.', any: 'A user token, or ADMIN_TOKEN (the operator passes every role check).', optional: 'Optionally a user token.' }[auth.session];
  if (!auth.role || !auth.of) return who;
  return `${who} Role: ${auth.role} or above in ${ROLE_SCOPE[auth.of]}; a caller who is not a member of it gets 404 not_found.`;
}

function security(route: ApiRoute): { security: Array<Record<string, string[]>>; note: string; role?: SessionAuth } {
  if (route.auth === 'none') return { security: [], note: 'No credentials.' };
  if (route.auth === 'admin_token') return { security: [{ adminToken: [] }], note: 'Authorization: Bearer <ADMIN_TOKEN>.' };
  if (route.auth === 'internal_secret') return { security: [{ internalSecret: [] }], note: 'X-Internal-Secret: <INTERNAL_SECRET>; API keys are not accepted.' };
  if ('session' in route.auth) {
    const schemes: Array<Record<string, string[]>> = route.auth.session === 'any' ? [{ userToken: [] }, { adminToken: [] }] : [{ userToken: [] }];
    // `{}` in the list: the credential is optional (OpenAPI 3.1, Security Requirement Object).
    return { security: route.auth.session === 'optional' ? [...schemes, {}] : schemes, note: sessionNote(route.auth), role: route.auth };
  }
  return { security: [{ apiKey: [] }], note: `Key kinds: ${route.auth.api_key.map((k) => KIND_USE[k]).join(', ')}.` };
}

function parameters(route: ApiRoute): JsonSchema[] {
  const out: JsonSchema[] = Object.entries(route.pathParams ?? {}).map(([name, description]) => ({ name, in: 'path', required: true, description, schema: { type: 'string' } }));
  if (route.query) {
    const query = jsonSchema(route.query, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      const { description, ...rest } = schema;
      out.push({ name, in: 'query', required: (query.required ?? []).includes(name), ...(description ? { description } : {}), schema: rest });
    }
  }
  return out;
}

function errorResponses(route: ApiRoute): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  if (route.errorBody) {
    out.default = { description: 'A JSON-RPC error envelope (HTTP 4xx for a refused request, 200 for a JSON-RPC error).', content: { 'application/json': { schema: jsonSchema(route.errorBody, 'output') } } };
    return out;
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of route.errors) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const envelope = jsonSchema(errorBodySchema, 'output') as { properties: Record<string, JsonSchema> };
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const schema = { ...envelope, properties: { ...envelope.properties, error: { ...envelope.properties.error, enum: codes } } };
    const examples = Object.fromEntries(codes.map((code) => [code, { value: { error: code } }]));
    out[String(status)] = { description: codes.join(', '), content: { 'application/json': { schema, examples } } };
  }
  return out;
}

/** A success answer's schema with the additive `warnings` the route may add (issue 50). */
function withWarnings(route: ApiRoute, schema: JsonSchema): JsonSchema {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (!answersWithWarnings(route) || schema.type !== 'object' || !properties) return schema;
  return { ...schema, properties: { ...properties, warnings: jsonSchema(warningsSchema, 'output') } };
}

function operation(route: ApiRoute): JsonSchema {
  const { security: sec, note, role } = security(route);
  const responses: Record<string, JsonSchema> = {};
  for (const [status, schema] of Object.entries(route.responses)) {
    const content = route.produces
      ? Object.fromEntries(Object.entries(route.produces).map(([type, description]) => [type, { schema: { type: 'string', format: 'binary', description } }]))
      : schema && { 'application/json': { schema: withWarnings(route, jsonSchema(schema, 'output')) } };
    responses[status] = schema ? { description: schema.description ?? 'Success.', content } : { description: 'No body.' };
  }
  Object.assign(responses, errorResponses(route));
  const params = parameters(route);
  return {
    operationId: `${route.method}${route.path.replace(/[{}]/g, '').replace(/[/_.-]+(\w)/g, (_m, c: string) => c.toUpperCase())}`,
    summary: route.summary,
    description: note,
    tags: [route.app],
    security: sec,
    // Machine-readable beside the description: the session the route takes and the role it requires, and where.
    ...(role ? { 'x-session': role } : {}),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(route.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.body, 'input'), ...(route.example ? { example: route.example } : {}) } } } }
      : {}),
    responses,
  };
}

const pascal = (name: string) => name.replace(/(^|_)(\w)/g, (_m, _u, c: string) => c.toUpperCase());

/**
 * The catalog's names as enums (libs/schema/src/catalog.ts): the metrics, the dimensions, and the values of each finite
 * dimension (`Channel`, `DeviceType`), which `is`/`is_not` filters on it take (other values: 400 invalid_payload).
 */
function catalogSchemas(): Record<string, JsonSchema> {
  const finite = Object.entries(FINITE_DIMENSION_VALUES).map(([name, values]) => [
    pascal(name),
    { type: 'string', enum: [...values!], description: `The values of the ${name} dimension: filters is/is_not on ${name} take only these.` },
  ]);
  return {
    InsightMetric: { type: 'string', enum: [...INSIGHT_METRICS], description: metricsText() },
    InsightDimension: {
      anyOf: [{ type: 'string', enum: [...Object.keys(COLUMN_DIMENSIONS), ...INSIGHT_TIME_DIMENSIONS] }, { type: 'string', pattern: '^prop:.{1,256}$' }],
      description: dimensionsText(true),
    },
    ...Object.fromEntries(finite),
  };
}

/**
 * The OpenAPI 3.1 document of the routes `apps` serve (the `service` routes every app serves are always in), generated
 * from API_ROUTES and its zod schemas: nothing in it is written by hand.
 */
export function openApiDocument(apps: readonly ApiApp[] | 'all'): JsonSchema {
  const routes = API_ROUTES.filter((r) => apps === 'all' || r.app === 'service' || apps.includes(r.app));
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method] = operation(route);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Event Analytics API',
      // The release that serves this document: /v1 in the paths is the API's own version.
      version: PACKAGE_VERSION,
      description: 'Privacy-respecting event analytics: ingest, read, MCP and admin. Errors are `{ error: <code> }`; the code is the contract.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'This instance' }],
    tags: [...new Set(routes.map((r) => r.app))].map((name) => ({ name })),
    paths,
    components: {
      schemas: catalogSchemas(),
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', bearerFormat: '{kind}_{env}_{prefix}_{secret}', description: 'An API key: pk_, sk_, rk_ or ak_; each route names the kinds it takes.' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'The ADMIN_TOKEN of this instance (/admin/*): the operator, who may do everything.' },
        userToken: { type: 'http', scheme: 'bearer', bearerFormat: 'ses_{id}_{secret}', description: 'A user token from POST /auth/login, /auth/setup, /auth/password-reset/confirm or /auth/invitations/accept (docs/accounts.md).' },
        internalSecret: { type: 'apiKey', in: 'header', name: 'X-Internal-Secret', description: 'The INTERNAL_SECRET of this instance (/internal/*).' },
      },
    },
  };
}
