import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import request from 'supertest';
import type { Express } from 'express';
import { openApiDocument } from '@analytics/schema';
import { openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from './app';
import { sdkBuildFixture } from './test-service';

type Stores = Awaited<ReturnType<typeof openTestStores>>;
type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>> };
const SECRETS = { ADMIN_TOKEN: 'admin-token-contract-tests', IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal' };
const METRICS_TOKEN = 'metrics-token-contract-tests';
const ORIGIN = 'https://shop.example.com';
const RANGE = { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' };
// What the document declares that no single request can produce against healthy embedded stores: a store out of reach
// (502, readiness 503), an unhandled error or a store refusing a deletion (500), the body budget exhausted (503
// server_busy) and the read admission gate full (429 on reads, the POST reads among them) need concurrent load or
// a broken store.
const NOT_REPRODUCIBLE = (method: string, path: string, status: string) => ['500', '502', '503'].includes(status) || (status === '429' && (method === 'get' || ['/v1/insights', '/v1/funnel', '/v1/retention'].includes(path)));

let stores: Stores;
let app: Express;
/** The same service where the browser SDK was not built: its /sdk paths answer 404. */
let unbuilt: Express;
const sdk = sdkBuildFixture();
const noBuild = mkdtempSync(join(tmpdir(), 'sdk-unbuilt-'));
let doc: Doc;
let keys: { pk: string; sk: string; rk: string; projectId: string };
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });

beforeAll(async () => {
  stores = await openTestStores();
  // Track and batch buckets of 3 so that 429 is reachable in a few requests.
  app = buildApp({ stores, secrets: SECRETS, logger: silentLogger, trustProxy: ['loopback'], metricsToken: METRICS_TOKEN, rateRules: { track: { ratePerS: 0.001, burst: 3 }, batch: { ratePerS: 0.001, burst: 3 } }, sdkDir: sdk.dir });
  unbuilt = buildApp({ stores, secrets: SECRETS, logger: silentLogger, sdkDir: noBuild });
  doc = (await request(app).get('/openapi.json')).body as Doc;
  const created = await request(app).post('/admin/projects').set('authorization', `Bearer ${SECRETS.ADMIN_TOKEN}`).send({ name: 'contract', allowed_origins: [ORIGIN] });
  keys = { ...created.body.keys, projectId: created.body.project.id };
});
afterAll(async () => {
  await stores.close();
  rmSync(`${stores.dataDir}-backup-contract`, { recursive: true, force: true });
  for (const dir of [sdk.dir, noBuild]) rmSync(dir, { recursive: true, force: true });
});

// swagger-parser is ESM-only: it runs in a child Node, reading the document on stdin.
const VALIDATE = "import P from '@apidevtools/swagger-parser'; let s=''; for await (const c of process.stdin) s+=c; P.validate(JSON.parse(s)).then(() => console.log('valid'), (e) => console.log(e.message));";
const validateWithSwaggerParser = (document: unknown) =>
  spawnSync(process.execPath, ['--input-type=module', '-e', VALIDATE], { input: JSON.stringify(document), encoding: 'utf8' }).stdout.trim();

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const admin = bearer(SECRETS.ADMIN_TOKEN);
type Case = [method: string, path: string, status: number, send: () => request.Test];
const get = (url: string, headers: Record<string, string> = {}, query: object = {}) => request(app).get(url).set(headers).query(query);
const post = (url: string, headers: Record<string, string> = {}, body?: unknown) => {
  const r = request(app).post(url).set(headers);
  return body === undefined ? r : r.send(body as object);
};

// One real request for every (route, status) the document declares, except NOT_REPRODUCIBLE.
const cases = (): Case[] => [
  ['post', '/v1/track', 202, () => post('/v1/track', bearer(keys.sk), { event: 'signup', anonymous_id: 'a-1' })],
  ['post', '/v1/track', 400, () => post('/v1/track', bearer(keys.sk), { anonymous_id: 'a-1' })],
  ['post', '/v1/track', 401, () => post('/v1/track', {}, { event: 'x' })],
  ['post', '/v1/track', 403, () => post('/v1/track', { ...bearer(keys.pk), origin: 'https://evil.example' }, { event: 'x' })],
  ['post', '/v1/track', 413, () => post('/v1/track', { ...bearer(keys.sk), 'content-type': 'application/json' }, 'x'.repeat(16 * 1024 * 1024 + 1))],
  ['post', '/v1/track', 415, () => post('/v1/track', { ...bearer(keys.sk), 'content-type': 'application/json', 'content-encoding': 'snappy' }, '{}')],
  ['post', '/v1/track', 429, () => post('/v1/track', bearer(keys.sk), { event: 'burst' })],
  ['post', '/v1/batch', 202, () => post('/v1/batch', bearer(keys.sk), { events: [{ event: 'a', anonymous_id: 'a-1' }] })],
  ['post', '/v1/batch', 400, () => post('/v1/batch', bearer(keys.sk), { events: [] })],
  ['post', '/v1/batch', 401, () => post('/v1/batch', bearer('sk_live_nope'), { events: [] })],
  ['post', '/v1/batch', 403, () => post('/v1/batch', bearer(keys.rk), { events: [{ event: 'a' }] })],
  ['post', '/v1/batch', 413, () => post('/v1/batch', { ...bearer(keys.sk), 'content-type': 'application/json' }, 'x'.repeat(16 * 1024 * 1024 + 1))],
  ['post', '/v1/batch', 429, () => post('/v1/batch', bearer(keys.sk), { events: [{ event: 'burst' }] })],
  ['post', '/v1/batch', 415, () => post('/v1/batch', { ...bearer(keys.sk), 'content-type': 'application/json', 'content-encoding': 'snappy' }, '{}')],
  ['post', '/v1/identify', 200, () => post('/v1/identify', bearer(keys.sk), { anonymous_id: 'a-1', user_id: 'u-1' })],
  ['post', '/v1/identify', 400, () => post('/v1/identify', bearer(keys.sk), { user_id: 'u-1' })],
  ['post', '/v1/identify', 401, () => post('/v1/identify', {}, {})],
  ['post', '/v1/identify', 403, () => post('/v1/identify', bearer(keys.rk), {})],
  ['post', '/v1/identify', 413, () => post('/v1/identify', { ...bearer(keys.sk), 'content-type': 'application/json' }, 'x'.repeat(16 * 1024 * 1024 + 1))],
  ['post', '/v1/identify', 415, () => post('/v1/identify', { ...bearer(keys.sk), 'content-type': 'application/json', 'content-encoding': 'snappy' }, '{}')],
  ['post', '/v1/forget', 202, () => post('/v1/forget', bearer(keys.sk), { user_id: 'u-1' })],
  ['post', '/v1/forget', 400, () => post('/v1/forget', bearer(keys.sk), {})],
  ['post', '/v1/forget', 401, () => post('/v1/forget', {}, {})],
  ['post', '/v1/forget', 403, () => post('/v1/forget', { ...bearer(keys.pk), origin: ORIGIN }, { user_id: 'u-1' })],
  ['post', '/v1/forget', 413, () => post('/v1/forget', { ...bearer(keys.sk), 'content-type': 'application/json' }, 'x'.repeat(16 * 1024 * 1024 + 1))],
  ['post', '/v1/forget', 415, () => post('/v1/forget', { ...bearer(keys.sk), 'content-type': 'application/json', 'content-encoding': 'snappy' }, '{}')],
  ['get', '/v1/query', 200, () => get('/v1/query', bearer(keys.rk), RANGE)],
  ['get', '/v1/query', 400, () => get('/v1/query', bearer(keys.rk), { from: 'yesterday' })],
  ['get', '/v1/query', 401, () => get('/v1/query')],
  ['get', '/v1/query', 403, () => get('/v1/query', bearer(keys.sk), RANGE)],
  ['post', '/v1/funnel', 200, () => post('/v1/funnel', bearer(keys.rk), { ...RANGE, steps: [{ event: '$pageview' }, { event: 'signup' }], breakdown: 'source' })],
  ['post', '/v1/funnel', 400, () => post('/v1/funnel', bearer(keys.rk), { ...RANGE, steps: [{ event: 'signup' }] })],
  ['post', '/v1/funnel', 401, () => post('/v1/funnel', {}, {})],
  ['post', '/v1/funnel', 403, () => post('/v1/funnel', bearer(keys.sk), { ...RANGE, steps: [] })],
  ['post', '/v1/funnel', 413, () => post('/v1/funnel', { ...bearer(keys.rk), 'content-type': 'application/json' }, 'x'.repeat(16 * 1024 * 1024 + 1))],
  ['post', '/v1/funnel', 415, () => post('/v1/funnel', { ...bearer(keys.rk), 'content-type': 'application/json', 'content-encoding': 'snappy' }, '{}')],
  ['post', '/v1/retention', 200, () => post('/v1/retention', bearer(keys.rk), { ...RANGE, period: 'day', count_by: 'visitor' })],
  ['post', '/v1/retention', 400, () => post('/v1/retention', bearer(keys.rk), { ...RANGE, period: 'year' })],
  ['post', '/v1/retention', 401, () => post('/v1/retention', {}, {})],
  ['post', '/v1/retention', 403, () => post('/v1/retention', bearer(keys.sk), { ...RANGE, period: 'day' })],
  ['post', '/v1/retention', 413, () => post('/v1/retention', { ...bearer(keys.rk), 'content-type': 'application/json' }, 'x'.repeat(16 * 1024 * 1024 + 1))],
  ['post', '/v1/retention', 415, () => post('/v1/retention', { ...bearer(keys.rk), 'content-type': 'application/json', 'content-encoding': 'snappy' }, '{}')],
  ['get', '/v1/stats', 200, () => get('/v1/stats', bearer(keys.rk), { ...RANGE, group_by: 'source,path', interval: 'day' })],
  ['get', '/v1/stats', 400, () => get('/v1/stats', bearer(keys.rk), { ...RANGE, group_by: 'ip_hash' })],
  ['get', '/v1/stats', 401, () => get('/v1/stats')],
  ['get', '/v1/stats', 403, () => get('/v1/stats', bearer(keys.sk), RANGE)],
  ['get', '/v1/sources', 200, () => get('/v1/sources', bearer(keys.rk), RANGE)],
  ['get', '/v1/sources', 400, () => get('/v1/sources', bearer(keys.rk), { ...RANGE, breakdown: 'campaign' })],
  ['get', '/v1/sources', 401, () => get('/v1/sources')],
  ['get', '/v1/sources', 403, () => get('/v1/sources', bearer(keys.sk), RANGE)],
  ['get', '/v1/export', 200, () => get('/v1/export', bearer(keys.rk), { ...RANGE, format: 'csv' })],
  ['get', '/v1/export', 400, () => get('/v1/export', bearer(keys.rk), { ...RANGE, format: 'xlsx' })],
  ['get', '/v1/export', 401, () => get('/v1/export')],
  ['get', '/v1/export', 403, () => get('/v1/export', bearer(keys.sk), RANGE)],
  ['post', '/v1/insights', 200, () => post('/v1/insights', bearer(keys.rk), { ...RANGE, metrics: ['visits', 'bounce_rate'], dimensions: ['channel'], compare: 'previous_period' })],
  ['post', '/v1/insights', 400, () => post('/v1/insights', bearer(keys.rk), { ...RANGE, metrics: ['revenue'] })],
  ['post', '/v1/insights', 401, () => post('/v1/insights', {}, RANGE)],
  ['post', '/v1/insights', 403, () => post('/v1/insights', bearer(keys.sk), RANGE)],
  ['post', '/v1/insights', 413, () => post('/v1/insights', { ...bearer(keys.rk), 'content-type': 'application/json' }, 'x'.repeat(16 * 1024 * 1024 + 1))],
  ['post', '/v1/insights', 415, () => post('/v1/insights', { ...bearer(keys.rk), 'content-type': 'application/json', 'content-encoding': 'snappy' }, '{}')],
  ['get', '/v1/properties', 200, () => get('/v1/properties', bearer(keys.rk), RANGE)],
  ['get', '/v1/properties', 400, () => get('/v1/properties', bearer(keys.rk), { from: 'yesterday' })],
  ['get', '/v1/properties', 401, () => get('/v1/properties')],
  ['get', '/v1/properties', 403, () => get('/v1/properties', bearer(keys.sk), RANGE)],
  ['post', '/mcp', 200, () => post('/mcp', bearer(keys.rk), { jsonrpc: '2.0', id: 1, method: 'tools/list' })],
  ['post', '/mcp', 202, () => post('/mcp', bearer(keys.rk), { jsonrpc: '2.0', method: 'notifications/initialized' })],
  ['post', '/mcp', 'default' as never, () => post('/mcp', {}, { jsonrpc: '2.0', id: 1, method: 'tools/list' })],
  ['post', '/admin/projects', 201, () => post('/admin/projects', admin, { name: 'another', allowed_origins: ['https://*.example.com'] })],
  ['post', '/admin/projects', 400, () => post('/admin/projects', admin, { name: '' })],
  ['post', '/admin/projects', 401, () => post('/admin/projects', {}, { name: 'x' })],
  ['post', '/admin/projects', 413, () => post('/admin/projects', { ...admin, 'content-type': 'application/json' }, 'x'.repeat(16 * 1024 * 1024 + 1))],
  ['post', '/admin/projects', 415, () => post('/admin/projects', { ...admin, 'content-type': 'application/json', 'content-encoding': 'snappy' }, '{}')],
  ['get', '/admin/projects', 200, () => get('/admin/projects', admin)],
  ['get', '/admin/projects', 401, () => get('/admin/projects')],
  ['get', '/admin/projects/{id}', 200, () => get(`/admin/projects/${keys.projectId}`, admin)],
  ['get', '/admin/projects/{id}', 401, () => get(`/admin/projects/${keys.projectId}`)],
  ['get', '/admin/projects/{id}', 404, () => get('/admin/projects/00000000-0000-4000-8000-000000000000', admin)],
  ['patch', '/admin/projects/{id}', 200, () => request(app).patch(`/admin/projects/${keys.projectId}`).set(admin).send({ retention_days: 90 })],
  ['patch', '/admin/projects/{id}', 400, () => request(app).patch(`/admin/projects/${keys.projectId}`).set(admin).send({ retention_days: 0 })],
  ['patch', '/admin/projects/{id}', 401, () => request(app).patch(`/admin/projects/${keys.projectId}`).send({})],
  ['patch', '/admin/projects/{id}', 404, () => request(app).patch('/admin/projects/nope').set(admin).send({ name: 'x' })],
  ['patch', '/admin/projects/{id}', 413, () => request(app).patch(`/admin/projects/${keys.projectId}`).set({ ...admin, 'content-type': 'application/json' }).send('x'.repeat(16 * 1024 * 1024 + 1))],
  ['patch', '/admin/projects/{id}', 415, () => request(app).patch(`/admin/projects/${keys.projectId}`).set({ ...admin, 'content-type': 'application/json', 'content-encoding': 'snappy' }).send('{}')],
  ['post', '/admin/projects/{id}/keys', 201, () => post(`/admin/projects/${keys.projectId}/keys`, admin, { kind: 'rk' })],
  ['post', '/admin/projects/{id}/keys', 400, () => post(`/admin/projects/${keys.projectId}/keys`, admin, { kind: 'zz' })],
  ['post', '/admin/projects/{id}/keys', 401, () => post(`/admin/projects/${keys.projectId}/keys`, {}, { kind: 'rk' })],
  ['post', '/admin/projects/{id}/keys', 404, () => post('/admin/projects/00000000-0000-4000-8000-000000000000/keys', admin, { kind: 'rk' })],
  ['post', '/admin/projects/{id}/keys', 413, () => post(`/admin/projects/${keys.projectId}/keys`, { ...admin, 'content-type': 'application/json' }, 'x'.repeat(16 * 1024 * 1024 + 1))],
  ['post', '/admin/projects/{id}/keys', 415, () => post(`/admin/projects/${keys.projectId}/keys`, { ...admin, 'content-type': 'application/json', 'content-encoding': 'snappy' }, '{}')],
  ['delete', '/admin/keys/{prefix}', 204, () => request(app).delete(`/admin/keys/${keys.rk}`).set(admin)],
  ['delete', '/admin/keys/{prefix}', 401, () => request(app).delete(`/admin/keys/${keys.rk}`)],
  ['delete', '/admin/keys/{prefix}', 404, () => request(app).delete('/admin/keys/nope').set(admin)],
  ['post', '/internal/retention/run', 200, () => post('/internal/retention/run', { 'x-internal-secret': SECRETS.INTERNAL_SECRET })],
  ['post', '/internal/retention/run', 401, () => post('/internal/retention/run', { 'x-internal-secret': 'wrong' })],
  ['get', '/healthz', 200, () => get('/healthz')],
  ['get', '/readyz', 200, () => get('/readyz')],
  ['get', '/openapi.json', 200, () => get('/openapi.json')],
  ['post', '/admin/backup', 200, () => post('/admin/backup', admin, { dir: `${stores.dataDir}-backup-contract` })],
  ['post', '/admin/backup', 400, () => post('/admin/backup', admin, { dir: 'relative/dir' })],
  ['post', '/admin/backup', 401, () => post('/admin/backup', {}, { dir: '/tmp/x' })],
  ['post', '/admin/backup', 413, () => post('/admin/backup', { ...admin, 'content-type': 'application/json' }, 'x'.repeat(16 * 1024 * 1024 + 1))],
  ['post', '/admin/backup', 415, () => post('/admin/backup', { ...admin, 'content-type': 'application/json', 'content-encoding': 'snappy' }, '{}')],
  ['get', '/sdk/analytics.min.js', 200, () => get('/sdk/analytics.min.js')],
  ['get', '/sdk/analytics.min.js', 404, () => request(unbuilt).get('/sdk/analytics.min.js')],
  ['get', '/sdk/{version}/analytics.min.js', 200, () => get(`/sdk/${sdk.version}/analytics.min.js`)],
  ['get', '/sdk/{version}/analytics.min.js', 404, () => get('/sdk/0.0.0-nope/analytics.min.js')],
  ['get', '/metrics', 200, () => get('/metrics', bearer(METRICS_TOKEN))],
  ['get', '/metrics', 401, () => get('/metrics')],
];

describe('GET /openapi.json (standalone)', () => {
  it('is a valid OpenAPI 3.1 document (swagger-parser) answered without a key', async () => {
    const res = await get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(validateWithSwaggerParser(res.body)).toBe('valid');
  });

  it.each(['ingest-api', 'read-api', 'admin-api', 'retention-worker', 'mcp-gateway'] as const)('documents %s on its own as a valid OpenAPI 3.1 document', (name) => {
    expect(validateWithSwaggerParser(openApiDocument([name]))).toBe('valid');
  });

  it('declares the bearer auth, the key kinds of each route and every error code it can answer', () => {
    expect((doc as unknown as { components: { securitySchemes: Record<string, { scheme?: string }> } }).components.securitySchemes.apiKey!.scheme).toBe('bearer');
    const track = doc.paths['/v1/track']!.post as unknown as { description: string; security: unknown[]; responses: Record<string, { content: Record<string, { schema: { properties: { error: { enum: string[] } } } }> }> };
    expect(track.description).toContain('pk_');
    expect(track.security).toEqual([{ apiKey: [] }]);
    expect(track.responses['403']!.content['application/json']!.schema.properties.error.enum).toEqual(['insufficient_scope', 'origin_not_allowed']);
    expect(track.responses['429']!.content['application/json']!.schema.properties.error.enum).toEqual(['rate_limited']);
  });
});

describe('the contract: real answers validate against the document (ajv)', () => {
  it('answers every route and status the document declares with a body its schema accepts', async () => {
    const seen = new Set<string>();
    const failures: string[] = [];
    for (const [method, path, status, send] of cases()) {
      if (status === 429) for (let i = 0; i < 3; i++) await send();
      const res = await send();
      const declared = doc.paths[path]?.[method]?.responses ?? {};
      const key = String(status);
      const expected = key === 'default' ? res.status >= 400 : res.status === status;
      if (!expected) failures.push(`${method} ${path}: expected ${key}, got ${res.status} ${JSON.stringify(res.body)}`);
      const response = declared[key] ?? declared[String(res.status)];
      if (!response) {
        failures.push(`${method} ${path} ${res.status}: not in the document`);
        continue;
      }
      seen.add(`${method} ${path} ${key}`);
      const schema = response.content?.['application/json']?.schema;
      if (!schema) continue;
      const validate = ajv.compile(schema);
      if (!validate(res.body)) failures.push(`${method} ${path} ${res.status}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(res.body).slice(0, 300)}`);
    }
    expect(failures).toEqual([]);
    const declared = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).flatMap(([method, op]) => Object.keys(op.responses).filter((s) => !NOT_REPRODUCIBLE(method, path, s)).map((s) => `${method} ${path} ${s}`)),
    );
    expect(declared.filter((d) => !seen.has(d))).toEqual([]);
  }, 120_000);
});

describe('GET /openapi.json on each app', () => {
  it.each([
    ['ingest-api', ['/v1/track', '/v1/batch', '/v1/identify', '/v1/forget']],
    ['read-api', ['/v1/query', '/v1/export', '/v1/stats', '/v1/sources', '/v1/insights', '/v1/properties', '/v1/funnel', '/v1/retention']],
  ])('%s documents its own routes only', (app, own) => {
    const paths = Object.keys((openApiDocument([app as 'ingest-api']) as Doc).paths);
    expect(paths).toEqual(expect.arrayContaining([...own, '/healthz', '/readyz', '/openapi.json']));
    expect(paths.filter((p) => p.startsWith('/v1/') || p.startsWith('/admin') || p === '/mcp').sort()).toEqual([...own].sort());
  });
});
