import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import request from 'supertest';
import type { Express } from 'express';
import { Accounts, PasswordHasher } from '@analytics/accounts';
import { ANNOTATION_LIMITS, API_ROUTES, type ApiApp, openApiDocument, routes } from '@analytics/schema';
import { reportMailingOf, reportPreviewOf } from '@analytics/runtime';
import { type SmtpCapture, openTestStores, silentLogger, smtpCapture } from '@analytics/testing';
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
// a broken store; a body's 408 request_timeout needs a client that stalls for BODY_READ_TIMEOUT_MS (slow-bodies.spec
// sends one on real sockets).
// Single sign-on answers 404 here (no provider is configured); its other answers need a real OpenID provider and are
// checked against the same declarations in apps/admin-api/src/sso.spec.ts (contractChecked, against oidc-provider).
const NOT_REPRODUCIBLE = (method: string, path: string, status: string) =>
  ['408', '500', '502', '503'].includes(status) || (status === '429' && (method === 'get' || ['/v1/insights', '/v1/funnel', '/v1/retention'].includes(path))) || (path.startsWith('/auth/oidc/') && status !== '404');

let stores: Stores;
let app: Express;
/** The same service where the browser SDK was not built: its /sdk paths answer 404. */
let unbuilt: Express;
const sdk = sdkBuildFixture();
const noBuild = mkdtempSync(join(tmpdir(), 'sdk-unbuilt-'));
let doc: Doc;
/** Where the reports' previews go (POST .../reports/{report_id}/send answers 202 once they are accepted). */
let smtp: SmtpCapture;
let keys: { pk: string; sk: string; rk: string; projectId: string };
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });

beforeAll(async () => {
  stores = await openTestStores();
  // Track and batch buckets of 3 so that 429 is reachable in a few requests.
  // Scrypt at test cost (the parameters travel with each hash; production uses OWASP's, libs/accounts/src/password.ts).
  const accounts = new Accounts({ db: stores.keyDb, keyStore: stores.keyStore, throttleSecret: 'contract', hasher: new PasswordHasher({ params: { N: 1024, r: 8, p: 1 } }), onKeysRevoked: (p) => stores.bus.keyRevoked(p) });
  smtp = await smtpCapture();
  const reportPreview = reportPreviewOf(reportMailingOf(stores, { SMTP_URL: smtp.url, MAIL_FROM: 'reports@example.com', PUBLIC_URL: 'https://analytics.example.com', REPORTS_CLAIM_STALE_S: 900 }, silentLogger));
  app = buildApp({ stores, secrets: SECRETS, logger: silentLogger, trustProxy: ['loopback'], metricsToken: METRICS_TOKEN, rateRules: { track: { ratePerS: 0.001, burst: 3 }, batch: { ratePerS: 0.001, burst: 3 } }, accounts, sdkDir: sdk.dir, reportPreview });
  unbuilt = buildApp({ stores, secrets: SECRETS, logger: silentLogger, sdkDir: noBuild, accounts });
  doc = (await request(app).get('/openapi.json')).body as Doc;
  const created = await request(app).post('/admin/projects').set('authorization', `Bearer ${SECRETS.ADMIN_TOKEN}`).send({ name: 'contract', allowed_origins: [ORIGIN] });
  keys = { ...created.body.keys, projectId: created.body.project.id };
});
afterAll(async () => {
  await smtp.close();
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
type Case = [method: string, path: string, status: number, send: () => PromiseLike<request.Response>];
const get = (url: string, headers: Record<string, string> = {}, query: object = {}) => request(app).get(url).set(headers).query(query);
/** GET /v1/live's event stream, read until its first message (then the connection is closed: the stream never ends). */
const firstMessage = (res: request.Response & NodeJS.ReadableStream & { destroy(): void }, done: (err: Error | null, body: unknown) => void) => {
  let text = '';
  res.on('data', (c: Buffer) => {
    text += c.toString();
    if (!/^data: /m.test(text)) return;
    done(null, text);
    res.destroy();
  });
};
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
  ['get', '/v1/live', 200, () => get('/v1/live', bearer(keys.rk)).buffer(true).parse(firstMessage as never)],
  ['get', '/v1/live', 401, () => get('/v1/live')],
  ['get', '/v1/live', 403, () => get('/v1/live', bearer(keys.sk))],
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
  ['get', '/v1/project', 200, () => get('/v1/project', bearer(keys.rk))],
  ['get', '/v1/project', 401, () => get('/v1/project')],
  ['get', '/v1/project', 403, () => get('/v1/project', bearer(keys.sk))],
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
  ...peopleCases(),
  ...savedCases(),
  ...shareCases(),
  ...alertCases(),
  ...reportCases(),
  ...annotationCases(),
];

/** Alerts (docs/alerts-and-reports.md): each route and status, after the people cases (the owner; an editor is refused). */
function alertCases(): Case[] {
  const BODY = { metric: 'pageviews', window: '1h', condition: { below: 1 }, channels: [{ email: ['ops@example.com'] }] };
  const state = { id: '', editor: '' };
  const list = '/admin/projects/{id}/alerts';
  const one = `${list}/{alert_id}`;
  const base = () => `/admin/projects/${keys.projectId}/alerts`;
  const owner = () => bearer(people.owner);
  const editor = () => bearer(state.editor);
  const at = (suffix = '') => `${base()}/${state.id}${suffix}`;
  const cases: Case[] = [
    ['post', list, 201, async () => {
      state.editor = (await post('/auth/invitations/accept', {}, { token: (await invite('alerts-editor@example.com', 'editor')).token, password: PASSWORD })).body.token;
      const res = await post(base(), owner(), { name: 'alert one', ...BODY });
      state.id = res.body.alert.id;
      await post(base(), owner(), { name: 'alert two', ...BODY });
      return res;
    }],
    ['post', list, 400, () => post(base(), owner(), { name: 'bad', ...BODY, window: '5m' })],
    ['post', list, 401, () => post(base(), {}, { name: 'x', ...BODY })],
    ['post', list, 403, () => post(base(), editor(), { name: 'x', ...BODY })],
    ['post', list, 404, () => post(`/admin/projects/${NO_ORG}/alerts`, owner(), { name: 'x', ...BODY })],
    ['post', list, 409, () => post(base(), owner(), { name: 'alert one', ...BODY })],
    ['post', list, 413, () => tooLarge('post', base(), owner())],
    ['post', list, 415, () => badEncoding('post', base(), owner())],
    ['get', list, 200, () => get(base(), owner())],
    ['get', list, 401, () => get(base())],
    ['get', list, 403, () => get(base(), editor())],
    ['get', list, 404, () => get(`/admin/projects/${NO_ORG}/alerts`, owner())],
    ['patch', one, 200, () => send('patch', at(), owner(), { name: 'alert renamed' })],
    ['patch', one, 400, () => send('patch', at(), owner(), { condition: { above: -1 } })],
    ['patch', one, 401, () => send('patch', at(), {}, { name: 'x' })],
    ['patch', one, 403, () => send('patch', at(), editor(), { name: 'x' })],
    ['patch', one, 404, () => send('patch', `${base()}/${NO_ORG}`, owner(), { name: 'x' })],
    ['patch', one, 409, () => send('patch', at(), owner(), { name: 'alert two' })],
    ['patch', one, 413, () => tooLarge('patch', at(), owner())],
    ['patch', one, 415, () => badEncoding('patch', at(), owner())],
  ];
  for (const [path, suffix, success] of [[one, '', 200], [`${one}/deliveries`, '/deliveries', 200]] as const) {
    cases.push(['get', path, success, () => get(at(suffix), owner())], ['get', path, 401, () => get(at(suffix))], ['get', path, 403, () => get(at(suffix), editor())], ['get', path, 404, () => get(`${base()}/${NO_ORG}${suffix}`, owner())]);
  }
  cases.push(
    ['post', `${one}/test`, 202, () => post(at('/test'), owner())],
    ['post', `${one}/test`, 401, () => post(at('/test'), {})],
    ['post', `${one}/test`, 403, () => post(at('/test'), editor())],
    ['post', `${one}/test`, 404, () => post(`${base()}/${NO_ORG}/test`, owner())],
    ['delete', one, 401, () => send('delete', at())],
    ['delete', one, 403, () => send('delete', at(), editor())],
    ['delete', one, 204, () => send('delete', at(), owner())],
    ['delete', one, 404, () => send('delete', at(), owner())],
  );
  return cases;
}

/** The saved goals, funnels and segments (docs/saved-and-shared.md): each route and status, after the people cases (owner, viewer). */
function savedCases(): Case[] {
  const BODIES = { goals: { event: 'signup' }, funnels: { steps: [{ event: '$pageview' }, { event: 'signup' }] }, segments: { filters: [['is', 'country', ['FR']]] } };
  const ids: Record<string, string> = {};
  // The people cases signed the viewer out and revoked keys.rk: a new viewer and a new rk_ key, made by the first case.
  const fresh = { viewer: '', rk: '' };
  const viewer = () => bearer(fresh.viewer);
  return (['goals', 'funnels', 'segments'] as const).flatMap((plural): Case[] => {
    const kind = plural.slice(0, -1);
    const list = `/admin/projects/{id}/${plural}`;
    const one = `/admin/projects/{id}/${plural}/{${kind}_id}`;
    const base = () => `/admin/projects/${keys.projectId}/${plural}`;
    const owner = () => bearer(people.owner);
    return [
      ['post', list, 201, async () => {
        if (!fresh.viewer) {
          fresh.viewer = (await post('/auth/invitations/accept', {}, { token: (await invite('saved-viewer@example.com')).token, password: PASSWORD })).body.token;
          fresh.rk = (await post(`/admin/projects/${keys.projectId}/keys`, admin, { kind: 'rk' })).body.key;
        }
        const res = await post(base(), owner(), { name: `${kind} one`, ...BODIES[plural] });
        ids[kind] = res.body[kind].id;
        await post(base(), owner(), { name: `${kind} two`, ...BODIES[plural] });
        return res;
      }],
      ['post', list, 400, () => post(base(), owner(), { name: '', ...BODIES[plural] })],
      ['post', list, 401, () => post(base(), {}, { name: 'x' })],
      ['post', list, 403, () => post(base(), viewer(), { name: 'x', ...BODIES[plural] })],
      ['post', list, 404, () => post(`/admin/projects/${NO_ORG}/${plural}`, owner(), { name: 'x', ...BODIES[plural] })],
      ['post', list, 409, () => post(base(), owner(), { name: `${kind} one`, ...BODIES[plural] })],
      ['post', list, 413, () => tooLarge('post', base(), owner())],
      ['post', list, 415, () => badEncoding('post', base(), owner())],
      ['get', list, 200, () => get(base(), viewer())],
      ['get', list, 401, () => get(base())],
      ['get', list, 404, () => get(`/admin/projects/${NO_ORG}/${plural}`, owner())],
      ['get', `/v1/${plural}`, 200, () => get(`/v1/${plural}`, bearer(fresh.rk))],
      ['get', `/v1/${plural}`, 401, () => get(`/v1/${plural}`)],
      ['get', `/v1/${plural}`, 403, () => get(`/v1/${plural}`, bearer(keys.sk))],
      ['patch', one, 200, () => send('patch', `${base()}/${ids[kind]}`, owner(), { name: `${kind} renamed` })],
      ['patch', one, 400, () => send('patch', `${base()}/${ids[kind]}`, owner(), { name: 'x'.repeat(101) })],
      ['patch', one, 401, () => send('patch', `${base()}/${ids[kind]}`, {}, { name: 'x' })],
      ['patch', one, 403, () => send('patch', `${base()}/${ids[kind]}`, viewer(), { name: 'x' })],
      ['patch', one, 404, () => send('patch', `${base()}/${NO_ORG}`, owner(), { name: 'x' })],
      ['patch', one, 409, () => send('patch', `${base()}/${ids[kind]}`, owner(), { name: `${kind} two` })],
      ['patch', one, 413, () => tooLarge('patch', `${base()}/${ids[kind]}`, owner())],
      ['patch', one, 415, () => badEncoding('patch', `${base()}/${ids[kind]}`, owner())],
      ['delete', one, 401, () => send('delete', `${base()}/${ids[kind]}`)],
      ['delete', one, 403, () => send('delete', `${base()}/${ids[kind]}`, viewer())],
      ['delete', one, 204, () => send('delete', `${base()}/${ids[kind]}`, owner())],
      ['delete', one, 404, () => send('delete', `${base()}/${ids[kind]}`, owner())],
    ];
  });
}

/** What the people cases learn as they run (in order): tokens and ids. */
const people = { owner: '', viewer: '', orgId: '', spare: '', spareUser: '', invitationId: '', readKeyProject: '' };
const NO_ORG = '00000000-0000-4000-8000-000000000000';
const PASSWORD = 'contract passphrase';
// Each throttled case from its own address (loopback is the trusted proxy here): their counts never meet.
const from = (address: string) => ({ 'x-forwarded-for': address });
const send = (method: 'post' | 'patch' | 'delete', url: string, headers: Record<string, string> = {}, body?: unknown) => {
  const r = request(app)[method](url).set(headers);
  return body === undefined ? r : r.send(body as object);
};
const tooLarge = (method: 'post' | 'patch', url: string, headers: Record<string, string>) => send(method, url, { ...headers, 'content-type': 'application/json' }, 'x'.repeat(16 * 1024 * 1024 + 1));
const badEncoding = (method: 'post' | 'patch', url: string, headers: Record<string, string>) => send(method, url, { ...headers, 'content-type': 'application/json', 'content-encoding': 'snappy' }, '{}');
/** `n` requests that fail, then the one the case checks. */
const after = async (n: number, fail: () => PromiseLike<request.Response>, last: () => PromiseLike<request.Response>) => {
  for (let i = 0; i < n; i++) await fail();
  return last();
};
const invite = async (email: string, role = 'viewer') => (await send('post', `/admin/orgs/${people.orgId}/invitations`, bearer(people.owner), { email, role })).body;

function peopleCases(): Case[] {
  const owner = () => bearer(people.owner);
  const viewer = () => bearer(people.viewer);
  const org = (rest = '') => `/admin/orgs/${people.orgId}${rest}`;
  const bodies: Array<[method: 'post' | 'patch', path: string, url: () => string, headers: () => Record<string, string>]> = [
    ['post', '/auth/setup', () => '/auth/setup', () => admin],
    ['post', '/auth/login', () => '/auth/login', () => ({})],
    ['post', '/auth/password', () => '/auth/password', owner],
    ['post', '/auth/password-reset', () => '/auth/password-reset', () => ({})],
    ['post', '/auth/password-reset/confirm', () => '/auth/password-reset/confirm', () => ({})],
    ['post', '/auth/invitations/accept', () => '/auth/invitations/accept', () => ({})],
    ['post', '/auth/read-key', () => '/auth/read-key', owner],
    ['post', '/admin/orgs', () => '/admin/orgs', owner],
    ['patch', '/admin/orgs/{id}', () => org(), owner],
    ['post', '/admin/orgs/{id}/invitations', () => org('/invitations'), owner],
    ['patch', '/admin/orgs/{id}/members/{user_id}', () => org(`/members/${people.spareUser}`), owner],
    ['post', '/admin/password-resets', () => '/admin/password-resets', () => admin],
  ];
  return [
    ['post', '/auth/setup', 401, () => post('/auth/setup', {}, { email: 'owner@example.com', password: PASSWORD })],
    ['post', '/auth/setup', 400, () => post('/auth/setup', admin, { email: 'owner@example.com', password: 'short' })],
    [
      'post', '/auth/setup', 201,
      async () => {
        const res = await post('/auth/setup', admin, { email: 'owner@example.com', password: PASSWORD, name: 'Owner' });
        people.owner = res.body.token;
        people.orgId = (await get('/auth/me', owner())).body.organizations[0].id;
        const accepted = await post('/auth/invitations/accept', {}, { token: (await invite('viewer@example.com')).token, password: PASSWORD });
        people.viewer = accepted.body.token;
        people.spareUser = (await post('/auth/invitations/accept', {}, { token: (await invite('spare@example.com')).token, password: PASSWORD })).body.user.id;
        return res;
      },
    ],
    ['post', '/auth/setup', 409, () => post('/auth/setup', admin, { email: 'again@example.com', password: PASSWORD })],
    ['post', '/auth/login', 200, () => post('/auth/login', from('198.51.100.1'), { email: 'owner@example.com', password: PASSWORD })],
    ['post', '/auth/login', 400, () => post('/auth/login', {}, { email: 'not an email', password: PASSWORD })],
    ['post', '/auth/login', 401, () => post('/auth/login', from('198.51.100.2'), { email: 'nobody@example.com', password: PASSWORD })],
    ['post', '/auth/login', 429, () => after(10, () => post('/auth/login', from('198.51.100.3'), { email: 'viewer@example.com', password: 'wrong password' }), () => post('/auth/login', from('198.51.100.4'), { email: 'viewer@example.com', password: PASSWORD }))],
    ['get', '/auth/config', 200, () => get('/auth/config')],
    ['post', '/auth/oidc/start', 404, () => post('/auth/oidc/start', {}, { binding: 'b'.repeat(43) })],
    ['get', '/auth/oidc/callback', 404, () => get('/auth/oidc/callback?code=c&state=s')],
    ['post', '/auth/oidc/complete', 404, () => post('/auth/oidc/complete', {}, { code: 'c', secret: 's'.repeat(43) })],
    ['get', '/auth/me', 200, () => get('/auth/me', owner())],
    ['get', '/auth/me', 401, () => get('/auth/me')],
    ['get', '/auth/sessions', 200, () => get('/auth/sessions', owner())],
    ['get', '/auth/sessions', 401, () => get('/auth/sessions', bearer('ses_nope'))],
    [
      'delete', '/auth/sessions/{id}', 204,
      async () => {
        const other = (await post('/auth/login', from('198.51.100.5'), { email: 'owner@example.com', password: PASSWORD })).body.token as string;
        return send('delete', `/auth/sessions/${other.split('_')[1]}`, owner());
      },
    ],
    ['delete', '/auth/sessions/{id}', 401, () => send('delete', '/auth/sessions/x')],
    ['delete', '/auth/sessions/{id}', 404, () => send('delete', '/auth/sessions/x', owner())],
    ['post', '/auth/password', 400, () => post('/auth/password', owner(), { current_password: PASSWORD, new_password: 'short' })],
    ['post', '/auth/password', 401, () => post('/auth/password', { ...owner(), ...from('198.51.100.6') }, { current_password: 'wrong password', new_password: PASSWORD })],
    ['post', '/auth/password', 204, () => post('/auth/password', { ...owner(), ...from('198.51.100.7') }, { current_password: PASSWORD, new_password: PASSWORD })],
    ['post', '/auth/password', 429, () => after(10, () => post('/auth/password', { ...viewer(), ...from('198.51.100.8') }, { current_password: 'wrong password', new_password: PASSWORD }), () => post('/auth/password', { ...viewer(), ...from('198.51.100.9') }, { current_password: PASSWORD, new_password: PASSWORD }))],
    ['post', '/auth/password-reset', 202, () => post('/auth/password-reset', from('198.51.100.10'), { email: 'owner@example.com' })],
    ['post', '/auth/password-reset', 400, () => post('/auth/password-reset', {}, { email: 5 })],
    ['post', '/auth/password-reset', 429, () => after(10, () => post('/auth/password-reset', from('198.51.100.11'), { email: 'nobody@example.com' }), () => post('/auth/password-reset', from('198.51.100.11'), { email: 'nobody@example.com' }))],
    [
      'post', '/auth/password-reset/confirm', 200,
      async () => {
        const link = (await post('/admin/password-resets', admin, { email: 'spare@example.com' })).body.reset_url as string;
        return post('/auth/password-reset/confirm', {}, { token: link.split('#reset=')[1], password: PASSWORD });
      },
    ],
    ['post', '/auth/password-reset/confirm', 400, () => post('/auth/password-reset/confirm', {}, { token: 'rst_unknown', password: PASSWORD })],
    ['post', '/auth/invitations/accept', 200, async () => post('/auth/invitations/accept', bearer(people.viewer), { token: (await invite('third@example.com')).token, password: PASSWORD })],
    ['post', '/auth/invitations/accept', 400, () => post('/auth/invitations/accept', {}, { token: 'inv_unknown', password: PASSWORD })],
    ['post', '/auth/invitations/accept', 401, () => post('/auth/invitations/accept', bearer('ses_nope'), { token: 'inv_unknown' })],
    ['post', '/auth/invitations/accept', 429, async () => {
      const other = (await send('post', '/admin/orgs', owner(), { name: 'Throttled' })).body.org.id as string;
      const token = (await send('post', `/admin/orgs/${other}/invitations`, owner(), { email: 'viewer@example.com', role: 'viewer' })).body.token as string;
      return after(10, () => post('/auth/invitations/accept', from('198.51.100.12'), { token, password: 'wrong password' }), () => post('/auth/invitations/accept', from('198.51.100.12'), { token, password: PASSWORD }));
    }],
    ['post', '/auth/read-key', 201, () => post('/auth/read-key', viewer(), { project_id: keys.projectId })],
    ['post', '/auth/read-key', 400, () => post('/auth/read-key', viewer(), { project_id: 'nope' })],
    ['post', '/auth/read-key', 401, () => post('/auth/read-key', admin, { project_id: keys.projectId })],
    ['post', '/auth/read-key', 404, () => post('/auth/read-key', viewer(), { project_id: NO_ORG })],
    ['get', '/admin/orgs', 200, () => get('/admin/orgs', viewer())],
    ['get', '/admin/orgs', 401, () => get('/admin/orgs')],
    ['post', '/admin/orgs', 201, async () => {
      const res = await send('post', '/admin/orgs', owner(), { name: 'Spare' });
      people.spare = res.body.org.id;
      return res;
    }],
    ['post', '/admin/orgs', 400, () => send('post', '/admin/orgs', owner(), { name: '' })],
    ['post', '/admin/orgs', 401, () => send('post', '/admin/orgs', {}, { name: 'x' })],
    ['patch', '/admin/orgs/{id}', 200, () => send('patch', org(), owner(), { name: 'Default' })],
    ['patch', '/admin/orgs/{id}', 400, () => send('patch', org(), owner(), { name: '' })],
    ['patch', '/admin/orgs/{id}', 401, () => send('patch', org(), {}, { name: 'x' })],
    ['patch', '/admin/orgs/{id}', 403, () => send('patch', org(), viewer(), { name: 'x' })],
    ['patch', '/admin/orgs/{id}', 404, () => send('patch', `/admin/orgs/${NO_ORG}`, owner(), { name: 'x' })],
    ['delete', '/admin/orgs/{id}', 409, () => send('delete', org(), owner())],
    ['delete', '/admin/orgs/{id}', 401, () => send('delete', org())],
    ['delete', '/admin/orgs/{id}', 403, () => send('delete', org(), viewer())],
    ['delete', '/admin/orgs/{id}', 404, () => send('delete', `/admin/orgs/${NO_ORG}`, owner())],
    ['delete', '/admin/orgs/{id}', 204, () => send('delete', `/admin/orgs/${people.spare}`, owner())],
    ['post', '/admin/orgs/{id}/invitations', 201, async () => {
      const res = await send('post', org('/invitations'), owner(), { email: 'later@example.com', role: 'editor' });
      people.invitationId = res.body.invitation.id;
      return res;
    }],
    ['post', '/admin/orgs/{id}/invitations', 400, () => send('post', org('/invitations'), owner(), { email: 'later@example.com', role: 'boss' })],
    ['post', '/admin/orgs/{id}/invitations', 401, () => send('post', org('/invitations'), {}, {})],
    ['post', '/admin/orgs/{id}/invitations', 403, () => send('post', org('/invitations'), viewer(), { email: 'x@example.com', role: 'viewer' })],
    ['post', '/admin/orgs/{id}/invitations', 404, () => send('post', `/admin/orgs/${NO_ORG}/invitations`, owner(), { email: 'x@example.com', role: 'viewer' })],
    ['post', '/admin/orgs/{id}/invitations', 409, () => send('post', org('/invitations'), owner(), { email: 'viewer@example.com', role: 'viewer' })],
    ['get', '/admin/orgs/{id}/invitations', 200, () => get(org('/invitations'), owner())],
    ['get', '/admin/orgs/{id}/invitations', 401, () => get(org('/invitations'))],
    ['get', '/admin/orgs/{id}/invitations', 403, () => get(org('/invitations'), viewer())],
    ['get', '/admin/orgs/{id}/invitations', 404, () => get(`/admin/orgs/${NO_ORG}/invitations`, owner())],
    ['delete', '/admin/orgs/{id}/invitations/{invitation_id}', 204, () => send('delete', org(`/invitations/${people.invitationId}`), owner())],
    ['delete', '/admin/orgs/{id}/invitations/{invitation_id}', 401, () => send('delete', org(`/invitations/${people.invitationId}`))],
    ['delete', '/admin/orgs/{id}/invitations/{invitation_id}', 403, () => send('delete', org(`/invitations/${people.invitationId}`), viewer())],
    ['delete', '/admin/orgs/{id}/invitations/{invitation_id}', 404, () => send('delete', org(`/invitations/${people.invitationId}`), owner())],
    ['get', '/admin/orgs/{id}/members', 200, () => get(org('/members'), owner())],
    ['get', '/admin/orgs/{id}/members', 401, () => get(org('/members'))],
    ['get', '/admin/orgs/{id}/members', 403, () => get(org('/members'), viewer())],
    ['get', '/admin/orgs/{id}/members', 404, () => get(`/admin/orgs/${NO_ORG}/members`, owner())],
    ['patch', '/admin/orgs/{id}/members/{user_id}', 200, () => send('patch', org(`/members/${people.spareUser}`), owner(), { role: 'editor' })],
    ['patch', '/admin/orgs/{id}/members/{user_id}', 400, () => send('patch', org(`/members/${people.spareUser}`), owner(), { role: 'boss' })],
    ['patch', '/admin/orgs/{id}/members/{user_id}', 401, () => send('patch', org(`/members/${people.spareUser}`), {}, {})],
    ['patch', '/admin/orgs/{id}/members/{user_id}', 403, () => send('patch', org(`/members/${people.spareUser}`), viewer(), { role: 'viewer' })],
    ['patch', '/admin/orgs/{id}/members/{user_id}', 404, () => send('patch', org(`/members/${NO_ORG}`), owner(), { role: 'viewer' })],
    ['patch', '/admin/orgs/{id}/members/{user_id}', 409, async () => send('patch', org(`/members/${(await get('/auth/me', owner())).body.user.id}`), owner(), { role: 'viewer' })],
    ['delete', '/admin/orgs/{id}/members/{user_id}', 401, () => send('delete', org(`/members/${people.spareUser}`))],
    ['delete', '/admin/orgs/{id}/members/{user_id}', 403, () => send('delete', org(`/members/${people.spareUser}`), viewer())],
    ['delete', '/admin/orgs/{id}/members/{user_id}', 409, async () => send('delete', org(`/members/${(await get('/auth/me', owner())).body.user.id}`), owner())],
    ['delete', '/admin/orgs/{id}/members/{user_id}', 204, () => send('delete', org(`/members/${people.spareUser}`), owner())],
    ['delete', '/admin/orgs/{id}/members/{user_id}', 404, () => send('delete', org(`/members/${people.spareUser}`), owner())],
    ['get', '/admin/orgs/{id}/audit', 200, () => get(org('/audit'), owner(), { limit: 10 })],
    ['get', '/admin/orgs/{id}/audit', 400, () => get(org('/audit'), owner(), { limit: 0 })],
    ['get', '/admin/orgs/{id}/audit', 401, () => get(org('/audit'))],
    ['get', '/admin/orgs/{id}/audit', 403, () => get(org('/audit'), viewer())],
    ['get', '/admin/orgs/{id}/audit', 404, () => get(`/admin/orgs/${NO_ORG}/audit`, owner())],
    ['get', '/admin/projects/{id}/keys', 200, () => get(`/admin/projects/${keys.projectId}/keys`, owner())],
    ['get', '/admin/projects/{id}/keys', 401, () => get(`/admin/projects/${keys.projectId}/keys`)],
    ['get', '/admin/projects/{id}/keys', 403, () => get(`/admin/projects/${keys.projectId}/keys`, viewer())],
    ['get', '/admin/projects/{id}/keys', 404, () => get(`/admin/projects/${NO_ORG}/keys`, owner())],
    ['post', '/admin/projects', 403, () => post('/admin/projects', viewer(), { name: 'x', org_id: people.orgId })],
    ['post', '/admin/projects', 404, () => post('/admin/projects', owner(), { name: 'x', org_id: NO_ORG })],
    ['patch', '/admin/projects/{id}', 403, () => send('patch', `/admin/projects/${keys.projectId}`, viewer(), { retention_days: 30 })],
    ['post', '/admin/projects/{id}/keys', 403, () => post(`/admin/projects/${keys.projectId}/keys`, viewer(), { kind: 'rk' })],
    ['delete', '/admin/keys/{prefix}', 403, () => send('delete', `/admin/keys/${keys.sk}`, viewer())],
    ['post', '/admin/projects/{id}/import', 200, () => post(`/admin/projects/${keys.projectId}/import`, owner(), routes.importEvents.example)],
    ['post', '/admin/projects/{id}/import', 400, () => post(`/admin/projects/${keys.projectId}/import`, owner(), { events: [] })],
    ['post', '/admin/projects/{id}/import', 401, () => post(`/admin/projects/${keys.projectId}/import`, {}, routes.importEvents.example)],
    ['post', '/admin/projects/{id}/import', 403, () => post(`/admin/projects/${keys.projectId}/import`, viewer(), routes.importEvents.example)],
    ['post', '/admin/projects/{id}/import', 404, () => post(`/admin/projects/${NO_ORG}/import`, owner(), routes.importEvents.example)],
    ['post', '/admin/projects/{id}/import', 413, () => post(`/admin/projects/${keys.projectId}/import`, { ...owner(), 'content-type': 'application/json' }, 'x'.repeat(16 * 1024 * 1024 + 1))],
    ['post', '/admin/projects/{id}/import', 415, () => post(`/admin/projects/${keys.projectId}/import`, { ...owner(), 'content-type': 'application/json', 'content-encoding': 'snappy' }, '{}')],
    ['delete', '/admin/projects/{id}', 401, () => send('delete', `/admin/projects/${keys.projectId}`)],
    ['delete', '/admin/projects/{id}', 403, () => send('delete', `/admin/projects/${keys.projectId}`, viewer())],
    ['delete', '/admin/projects/{id}', 404, () => send('delete', `/admin/projects/${NO_ORG}`, owner())],
    ['delete', '/admin/projects/{id}', 204, async () => send('delete', `/admin/projects/${(await post('/admin/projects', owner(), { name: 'doomed', org_id: people.orgId })).body.project.id}`, owner())],
    ['get', '/admin/users', 200, () => get('/admin/users', admin)],
    ['get', '/admin/users', 401, () => get('/admin/users', owner())],
    ['post', '/admin/password-resets', 201, () => post('/admin/password-resets', admin, { email: 'owner@example.com' })],
    ['post', '/admin/password-resets', 400, () => post('/admin/password-resets', admin, {})],
    ['post', '/admin/password-resets', 401, () => post('/admin/password-resets', {}, { email: 'owner@example.com' })],
    ['post', '/admin/password-resets', 404, () => post('/admin/password-resets', admin, { email: 'nobody@example.com' })],
    ['post', '/auth/logout', 401, () => post('/auth/logout')],
    ['post', '/auth/logout', 204, () => post('/auth/logout', viewer())],
    ...bodies.flatMap(([method, path, url, headers]): Case[] => [
      [method, path, 413, () => tooLarge(method, url(), headers())],
      [method, path, 415, () => badEncoding(method, url(), headers())],
    ]),
  ];
}

/** Share links (docs/saved-and-shared.md): after the people cases (the owner and a viewer of the project's organization). */
function shareCases(): Case[] {
  const shares = (id = keys.projectId) => `/admin/projects/${id}/shares`;
  const owner = () => bearer(people.owner);
  const share = { id: '', token: '', locked: '', viewer: '' };
  const viewer = async () => {
    // A viewer of the organization signed in afresh (the people cases signed the first one out).
    share.viewer ||= (await post('/auth/login', from('198.51.100.40'), { email: 'third@example.com', password: PASSWORD })).body.token;
    return bearer(share.viewer);
  };
  return [
    ['post', '/admin/projects/{id}/shares', 201, async () => {
      const res = await post(shares(), owner(), { name: 'contract', embed_origins: ['https://agency.example.com'] });
      share.id = res.body.share.id;
      share.token = res.body.url.split('/share/')[1];
      share.locked = (await post(shares(), owner(), { password: PASSWORD })).body.url.split('/share/')[1];
      return res;
    }],
    ['post', '/admin/projects/{id}/shares', 400, () => post(shares(), owner(), { expires_at: '2000-01-01T00:00:00Z' })],
    ['post', '/admin/projects/{id}/shares', 401, () => post(shares(), {}, {})],
    ['post', '/admin/projects/{id}/shares', 403, async () => post(shares(), await viewer(), {})],
    ['post', '/admin/projects/{id}/shares', 404, () => post(shares(NO_ORG), owner(), {})],
    ['post', '/admin/projects/{id}/shares', 409, async () => {
      const full = (await post('/admin/projects', owner(), { name: 'full of links', org_id: people.orgId })).body.project.id as string;
      for (let i = 0; i < 200; i++) await post(shares(full), owner(), {});
      return post(shares(full), owner(), {});
    }],
    ['post', '/admin/projects/{id}/shares', 413, () => tooLarge('post', shares(), owner())],
    ['post', '/admin/projects/{id}/shares', 415, () => badEncoding('post', shares(), owner())],
    ['get', '/admin/projects/{id}/shares', 200, () => get(shares(), owner())],
    ['get', '/admin/projects/{id}/shares', 401, () => get(shares())],
    ['get', '/admin/projects/{id}/shares', 403, async () => get(shares(), await viewer())],
    ['get', '/admin/projects/{id}/shares', 404, () => get(shares(NO_ORG), owner())],
    ['post', '/v1/share/unlock', 200, () => post('/v1/share/unlock', {}, { token: share.token })],
    ['post', '/v1/share/unlock', 400, () => post('/v1/share/unlock', {}, {})],
    ['post', '/v1/share/unlock', 401, () => post('/v1/share/unlock', from('198.51.100.41'), { token: share.locked })],
    ['post', '/v1/share/unlock', 404, () => post('/v1/share/unlock', {}, { token: 'shr_unknown_unknown' })],
    ['post', '/v1/share/unlock', 429, () => after(10, () => post('/v1/share/unlock', from('198.51.100.42'), { token: share.locked, password: 'wrong password' }), () => post('/v1/share/unlock', from('198.51.100.43'), { token: share.locked, password: PASSWORD }))],
    ['post', '/v1/share/unlock', 413, () => tooLarge('post', '/v1/share/unlock', {})],
    ['post', '/v1/share/unlock', 415, () => badEncoding('post', '/v1/share/unlock', {})],
    ['get', '/v1/share/frame-ancestors', 200, () => get('/v1/share/frame-ancestors', {}, { token: share.token, embed: '1' })],
    ['get', '/v1/share/frame-ancestors', 400, () => get('/v1/share/frame-ancestors')],
    ['delete', '/admin/projects/{id}/shares/{share_id}', 401, () => send('delete', `${shares()}/${share.id}`)],
    ['delete', '/admin/projects/{id}/shares/{share_id}', 403, async () => send('delete', `${shares()}/${share.id}`, await viewer())],
    ['delete', '/admin/projects/{id}/shares/{share_id}', 204, () => send('delete', `${shares()}/${share.id}`, owner())],
    ['delete', '/admin/projects/{id}/shares/{share_id}', 404, () => send('delete', `${shares()}/${share.id}`, owner())],
  ];
}

/** The scheduled reports (docs/alerts-and-reports.md): each route and status, after the share cases (a viewer signed in). */
function reportCases(): Case[] {
  const list = '/admin/projects/{id}/reports';
  const one = '/admin/projects/{id}/reports/{report_id}';
  const reports = (id = keys.projectId) => `/admin/projects/${id}/reports`;
  const owner = () => bearer(people.owner);
  const ids = { report: '', emptied: '', token: '', viewer: '' };
  const viewer = async () => {
    ids.viewer ||= (await post('/auth/login', from('198.51.100.50'), { email: 'third@example.com', password: PASSWORD })).body.token;
    return bearer(ids.viewer);
  };
  const BODY = { frequency: 'weekly', recipients: ['owner@example.com'] };
  return [
    ['post', list, 201, async () => {
      const res = await post(reports(), owner(), BODY);
      ids.report = res.body.report.id;
      // A report whose only recipient unsubscribed: its preview has nobody to go to (400).
      const emptied = (await post(reports(), owner(), { frequency: 'monthly', recipients: ['gone@example.com'] })).body.report.id as string;
      ids.emptied = emptied;
      await stores.keyStore.reports.unsubscribe(await stores.keyStore.reports.mintUnsubscribeToken(emptied, 'gone@example.com'));
      ids.token = await stores.keyStore.reports.mintUnsubscribeToken(emptied, 'gone@example.com');
      return res;
    }],
    ['post', list, 400, () => post(reports(), owner(), { frequency: 'daily', recipients: ['owner@example.com'] })],
    ['post', list, 401, () => post(reports(), {}, BODY)],
    ['post', list, 403, async () => post(reports(), await viewer(), BODY)],
    ['post', list, 404, () => post(reports(NO_ORG), owner(), BODY)],
    ['post', list, 409, async () => {
      const full = (await post('/admin/projects', owner(), { name: 'full of reports', org_id: people.orgId })).body.project.id as string;
      for (let i = 0; i < 20; i++) await post(reports(full), owner(), BODY);
      return post(reports(full), owner(), BODY);
    }],
    ['post', list, 413, () => tooLarge('post', reports(), owner())],
    ['post', list, 415, () => badEncoding('post', reports(), owner())],
    ['get', list, 200, () => get(reports(), owner())],
    ['get', list, 401, () => get(reports())],
    ['get', list, 403, async () => get(reports(), await viewer())],
    ['get', list, 404, () => get(reports(NO_ORG), owner())],
    ['get', one, 200, () => get(`${reports()}/${ids.report}`, owner())],
    ['get', one, 401, () => get(`${reports()}/${ids.report}`)],
    ['get', one, 403, async () => get(`${reports()}/${ids.report}`, await viewer())],
    ['get', one, 404, () => get(`${reports()}/${NO_ORG}`, owner())],
    ['patch', one, 200, () => send('patch', `${reports()}/${ids.report}`, owner(), { frequency: 'monthly' })],
    ['patch', one, 400, () => send('patch', `${reports()}/${ids.report}`, owner(), { recipients: [] })],
    ['patch', one, 401, () => send('patch', `${reports()}/${ids.report}`, {}, { frequency: 'monthly' })],
    ['patch', one, 403, async () => send('patch', `${reports()}/${ids.report}`, await viewer(), { frequency: 'monthly' })],
    ['patch', one, 404, () => send('patch', `${reports()}/${NO_ORG}`, owner(), { frequency: 'monthly' })],
    ['patch', one, 413, () => tooLarge('patch', `${reports()}/${ids.report}`, owner())],
    ['patch', one, 415, () => badEncoding('patch', `${reports()}/${ids.report}`, owner())],
    ['post', `${one}/send`, 202, () => post(`${reports()}/${ids.report}/send`, owner())],
    ['post', `${one}/send`, 400, () => post(`${reports()}/${ids.emptied}/send`, owner())],
    ['post', `${one}/send`, 401, () => post(`${reports()}/${ids.report}/send`)],
    ['post', `${one}/send`, 403, async () => post(`${reports()}/${ids.report}/send`, await viewer())],
    ['post', `${one}/send`, 404, () => post(`${reports()}/${NO_ORG}/send`, owner())],
    ['get', '/reports/unsubscribe/{token}', 200, () => get(`/reports/unsubscribe/${ids.token}`)],
    ['get', '/reports/unsubscribe/{token}', 404, () => get('/reports/unsubscribe/unknown')],
    ['post', '/reports/unsubscribe/{token}', 200, () => post(`/reports/unsubscribe/${ids.token}`)],
    ['post', '/reports/unsubscribe/{token}', 404, () => post('/reports/unsubscribe/unknown')],
    ['delete', one, 401, () => send('delete', `${reports()}/${ids.report}`)],
    ['delete', one, 403, async () => send('delete', `${reports()}/${ids.report}`, await viewer())],
    ['delete', one, 204, () => send('delete', `${reports()}/${ids.report}`, owner())],
    ['delete', one, 404, () => send('delete', `${reports()}/${ids.report}`, owner())],
  ];
}

/** Annotations (issue 48, docs/alerts-and-reports.md): the sk_ writes, the rk_ list, the members' routes; after the people cases. */
function annotationCases(): Case[] {
  const owner = () => bearer(people.owner);
  const base = (id = keys.projectId) => `/admin/projects/${id}/annotations`;
  const BODY = { at: '2026-03-04T09:30:00Z', text: 'Deployed v2', kind: 'deploy' };
  const state = { byKey: '', byMember: '', viewer: '', rk: '', full: { id: '', sk: '' } };
  // The people cases revoked keys.rk: a new rk_ key of the project.
  const rk = async () => bearer((state.rk ||= (await post(`/admin/projects/${keys.projectId}/keys`, admin, { kind: 'rk' })).body.key));
  const viewer = async () => {
    state.viewer ||= (await post('/auth/login', from('198.51.100.50'), { email: 'third@example.com', password: PASSWORD })).body.token;
    return bearer(state.viewer);
  };
  // A project of the owner's organization holding the most annotations a project may: the next is 409.
  const full = async () => {
    if (!state.full.id) {
      const created = (await post('/admin/projects', owner(), { name: 'full of annotations', org_id: people.orgId })).body;
      state.full = { id: created.project.id, sk: created.keys.sk };
      await stores.keyDb.query(`INSERT INTO annotations (id, project_id, at, text, kind) SELECT gen_random_uuid()::text, $1, now(), 'n' || i, 'note' FROM generate_series(1, $2::int) AS i`, [state.full.id, ANNOTATION_LIMITS.perProject]);
    }
    return state.full;
  };
  return [
    ['post', '/v1/annotations', 201, async () => {
      const res = await post('/v1/annotations', bearer(keys.sk), BODY);
      state.byKey = res.body.annotation.id;
      return res;
    }],
    ['post', '/v1/annotations', 400, () => post('/v1/annotations', bearer(keys.sk), { text: 'no time' })],
    ['post', '/v1/annotations', 401, () => post('/v1/annotations', {}, BODY)],
    ['post', '/v1/annotations', 403, () => post('/v1/annotations', { ...bearer(keys.pk), origin: ORIGIN }, BODY)],
    ['post', '/v1/annotations', 409, async () => post('/v1/annotations', bearer((await full()).sk), BODY)],
    ['post', '/v1/annotations', 413, () => tooLarge('post', '/v1/annotations', bearer(keys.sk))],
    ['post', '/v1/annotations', 415, () => badEncoding('post', '/v1/annotations', bearer(keys.sk))],
    ['get', '/v1/annotations', 200, async () => get('/v1/annotations', await rk(), RANGE)],
    ['get', '/v1/annotations', 400, async () => get('/v1/annotations', await rk(), { from: 'yesterday', to: RANGE.to })],
    ['get', '/v1/annotations', 401, () => get('/v1/annotations', {}, RANGE)],
    ['get', '/v1/annotations', 403, () => get('/v1/annotations', bearer(keys.sk), RANGE)],
    ['delete', '/v1/annotations/{annotation_id}', 401, () => send('delete', `/v1/annotations/${state.byKey}`)],
    ['delete', '/v1/annotations/{annotation_id}', 403, async () => send('delete', `/v1/annotations/${state.byKey}`, await rk())],
    ['delete', '/v1/annotations/{annotation_id}', 204, () => send('delete', `/v1/annotations/${state.byKey}`, bearer(keys.sk))],
    ['delete', '/v1/annotations/{annotation_id}', 404, () => send('delete', `/v1/annotations/${state.byKey}`, bearer(keys.sk))],
    ['post', '/admin/projects/{id}/annotations', 201, async () => {
      const res = await post(base(), owner(), BODY);
      state.byMember = res.body.annotation.id;
      return res;
    }],
    ['post', '/admin/projects/{id}/annotations', 400, () => post(base(), owner(), { ...BODY, kind: 'party' })],
    ['post', '/admin/projects/{id}/annotations', 401, () => post(base(), {}, BODY)],
    ['post', '/admin/projects/{id}/annotations', 403, async () => post(base(), await viewer(), BODY)],
    ['post', '/admin/projects/{id}/annotations', 404, () => post(base(NO_ORG), owner(), BODY)],
    ['post', '/admin/projects/{id}/annotations', 409, async () => post(base((await full()).id), owner(), BODY)],
    ['post', '/admin/projects/{id}/annotations', 413, () => tooLarge('post', base(), owner())],
    ['post', '/admin/projects/{id}/annotations', 415, () => badEncoding('post', base(), owner())],
    ['get', '/admin/projects/{id}/annotations', 200, async () => get(base(), await viewer(), RANGE)],
    ['get', '/admin/projects/{id}/annotations', 400, () => get(base(), owner(), { from: RANGE.from })],
    ['get', '/admin/projects/{id}/annotations', 401, () => get(base(), {}, RANGE)],
    ['get', '/admin/projects/{id}/annotations', 404, () => get(base(NO_ORG), owner(), RANGE)],
    ['delete', '/admin/projects/{id}/annotations/{annotation_id}', 401, () => send('delete', `${base()}/${state.byMember}`)],
    ['delete', '/admin/projects/{id}/annotations/{annotation_id}', 403, async () => send('delete', `${base()}/${state.byMember}`, await viewer())],
    ['delete', '/admin/projects/{id}/annotations/{annotation_id}', 204, () => send('delete', `${base()}/${state.byMember}`, owner())],
    ['delete', '/admin/projects/{id}/annotations/{annotation_id}', 404, () => send('delete', `${base()}/${state.byMember}`, owner())],
  ];
}

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

// An app's /v1 routes, from the declarations.
// A path declared for several methods (GET and POST /v1/annotations) is one path of the document.
const pathsOf = (app: ApiApp) => [...new Set(API_ROUTES.filter((r) => r.app === app && r.path.startsWith('/v1/')).map((r) => r.path))];

describe('GET /openapi.json on each app', () => {
  it.each([
    ['ingest-api', pathsOf('ingest-api')],
    ['read-api', pathsOf('read-api')],
  ])('%s documents its own routes only', (app, own) => {
    const paths = Object.keys((openApiDocument([app as 'ingest-api']) as Doc).paths);
    expect(paths).toEqual(expect.arrayContaining([...own, '/healthz', '/readyz', '/openapi.json']));
    expect(paths.filter((p) => p.startsWith('/v1/') || p.startsWith('/admin') || p === '/mcp').sort()).toEqual([...own].sort());
  });
});
