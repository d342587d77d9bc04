import request from 'supertest';
import { keyStoreBackends } from '@analytics/auth/testing';
import { importEvents } from '@analytics/ingest';
import { openTestStores } from '@analytics/testing';
import { API_ROUTES, type ApiRoute, type RouteName, ROLES, type Role, roleAtLeast, routes } from '@analytics/schema';
import { ADMIN_TOKEN, PASSWORD, type People, setUpPeople, uniqueEmail } from './test-people';

/**
 * Every /admin and /auth route x every caller: the four roles of the organization, the operator (ADMIN_TOKEN), no
 * token, and a member of another organization. The expected status comes from the route's declared auth (libs/schema):
 * no credential 401, a role below the declared one 403, a caller outside the organization 404 (docs/accounts.md), the
 * rest the route's success status. Each route needs a row below saying how to call it; a route without one fails.
 */
type Who = Role | 'operator' | 'none' | 'outsider';
const CALLERS: readonly Who[] = [...ROLES, 'operator', 'none', 'outsider'];

interface Call {
  path: string;
  body?: object;
  query?: Record<string, string>;
}
interface Row {
  /** A request that succeeds for an allowed caller, made fresh for each cell (`token`: the caller's own user token). */
  call(p: People, who: Who, token: string | undefined): Promise<Call>;
  /** What an allowed caller gets when it is not the declared success status. */
  success?: number;
  /** Not served by admin-api (standalone only): every caller gets the catch-all's answer. */
  standaloneOnly?: true;
}

const project = async (p: People) => (await p.keyStore.createProject({ name: 'table', org_id: p.orgId })).project.id;
const key = async (p: People) => (await p.keyStore.createKey(p.projectId, 'rk'))!.prefix;
const invitation = async (p: People) => {
  const { rows } = await p.db.query<{ id: string }>(
    "INSERT INTO invitations (id, org_id, email, role, token_hash, created_at, expires_at) VALUES (gen_random_uuid(), $1, $2, 'viewer', md5(random()::text), now(), now() + interval '7 days') RETURNING id",
    [p.orgId, uniqueEmail('invited')],
  );
  return rows[0]!.id;
};
let imported = 0;
/** One row of an export (GET /v1/export), a new event_id each time. */
const importedRow = () => ({
  timestamp: '2026-03-02T10:00:00.000Z', event_name: '$pageview', event_id: `roles-${imported++}`, anonymous_id: 'a-1', user_id: null, session_id: 's-1',
  source: 'google', medium: 'organic', campaign: null, source_confidence: 'medium', channel: 'organic_search', referrer: 'https://www.google.com/',
  url: 'https://shop.example.com/', path: '/', country: 'GB', device_type: 'desktop', browser: 'Chrome', os: 'Linux', properties: '{}',
});
const share = async (p: People, input: { password?: string } = {}) => p.accounts.shares.create(p.projectId, input, { createdBy: null, baseUrl: 'http://localhost' });
let named = 0;
const uniqueName = (what: string) => `${what} ${++named}`;
const SAVED_BODY = { goal: { event: 'signup' }, funnel: { steps: [{ event: 'a' }, { event: 'b' }] }, segment: { filters: [['is', 'country', ['FR']]] } } as const;
const SAVED_DEFINITION = { goal: { event: 'signup', filters: [] }, funnel: { steps: [{ event: 'a', filters: [] }, { event: 'b', filters: [] }], window_s: 86400, count_by: 'visitor', filters: [] }, segment: { filters: [['is', 'country', ['FR']]] } };
/** A saved definition of the table's project, fresh for each cell (an update or delete spends one). */
const savedOf = async (p: People, kind: 'goal' | 'funnel' | 'segment') => (await p.keyStore.saved.create(p.projectId, kind, { name: uniqueName(kind), definition: SAVED_DEFINITION[kind] }))!.id;
const savedRows = (kind: 'goal' | 'funnel' | 'segment', plural: string): Record<string, Row> => {
  const cap = kind[0]!.toUpperCase() + kind.slice(1);
  return {
    [`list${cap}s`]: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/${plural}` }) },
    [`create${cap}`]: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/${plural}`, body: { name: uniqueName(kind), ...SAVED_BODY[kind] } }) },
    [`update${cap}`]: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/${plural}/${await savedOf(p, kind)}`, body: { name: uniqueName(kind) } }) },
    [`delete${cap}`]: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/${plural}/${await savedOf(p, kind)}` }) },
  };
};
const ALERT_DEFINITION = { metric: 'pageviews', window: '1h', condition: { below: 1 } } as const;
const ALERT_CHANNELS = [{ email: ['ops@example.com'] }];
/** An alert of the table's project: fresh for a change or a deletion, else one per setup (50 per project at most). */
const alertOf = async (p: People) => (await p.keyStore.alerts.create(p.projectId, { name: uniqueName('alert'), definition: ALERT_DEFINITION, channels: ALERT_CHANNELS }))!.id;
const sharedAlerts = new WeakMap<People, Promise<string>>();
const sharedAlert = (p: People) => sharedAlerts.get(p) ?? (sharedAlerts.set(p, alertOf(p)), sharedAlerts.get(p)!);
/** A scheduled report in a new project of the organization, fresh for each cell (a project holds at most 20). */
const reportOf = async (p: People) => (await p.keyStore.reports.create(await project(p), { frequency: 'weekly', recipients: [uniqueEmail('report')] }))!;
const reportPath = async (p: People) => {
  const r = await reportOf(p);
  return `/admin/projects/${r.project_id}/reports/${r.id}`;
};
/** An unsubscribe link's token of a fresh report's recipient (the link is the credential: every caller alike). */
const unsubscribeToken = async (p: People) => {
  const report = await reportOf(p);
  return p.keyStore.reports.mintUnsubscribeToken(report.id, report.recipients[0]!);
};
/** An annotation of the table's project, fresh for each cell (a delete spends one). */
const annotationOf = async (p: People) => (await p.keyStore.annotations.create(p.projectId, { at: Date.UTC(2026, 2, 4), text: uniqueName('annotation'), kind: 'note', created_by: null }))!.id;
const userIdOfToken = async (p: People, token: string) => (await p.accounts.sessions.authenticate(token)).user.id;

const TABLE: Record<string, Row> = {
  createProject: { call: async (p) => ({ path: '/admin/projects', body: { name: 'table', org_id: p.orgId } }) },
  listProjects: { call: async () => ({ path: '/admin/projects' }) },
  getProject: { call: async (p) => ({ path: `/admin/projects/${p.projectId}` }) },
  updateProject: { call: async (p) => ({ path: `/admin/projects/${p.projectId}`, body: { retention_days: 30 } }) },
  createKey: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/keys`, body: { kind: 'rk' } }) },
  revokeKey: { call: async (p) => ({ path: `/admin/keys/${await key(p)}` }) },
  listKeys: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/keys` }) },
  deleteProject: { call: async (p) => ({ path: `/admin/projects/${await project(p)}` }) },
  importEvents: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/import`, body: { events: [importedRow()] } }) },
  backup: { call: async () => ({ path: '/admin/backup', body: { dir: '/tmp/x' } }), standaloneOnly: true },
  // Setup is done: the operator gets 409 already_set_up.
  authSetup: { call: async () => ({ path: '/auth/setup', body: { email: uniqueEmail('setup'), password: PASSWORD } }), success: 409 },
  authLogin: { call: async (p) => ({ path: '/auth/login', body: { email: p.users.viewer.email, password: PASSWORD } }) },
  authMe: { call: async () => ({ path: '/auth/me' }) },
  authLogout: { call: async () => ({ path: '/auth/logout' }) },
  authSessions: { call: async () => ({ path: '/auth/sessions' }) },
  authDeleteSession: {
    call: async (p, _who, token) => {
      if (!token?.startsWith('ses_')) return { path: '/auth/sessions/none' };
      const own = await p.accounts.sessions.create((await p.accounts.sessions.authenticate(token)).user, 'tests');
      return { path: `/auth/sessions/${own.token.split('_')[1]}` };
    },
  },
  authPassword: { call: async () => ({ path: '/auth/password', body: { current_password: PASSWORD, new_password: PASSWORD } }) },
  authPasswordReset: { call: async () => ({ path: '/auth/password-reset', body: { email: uniqueEmail('reset') } }) },
  authPasswordResetConfirm: {
    call: async (p) => {
      const user = await p.addMember(p.orgId, 'viewer');
      const link = await p.accounts.signIn.resetLink(user.email, 'http://localhost');
      return { path: '/auth/password-reset/confirm', body: { token: link!.reset_url.split('#reset=')[1], password: PASSWORD } };
    },
  },
  authAcceptInvitation: {
    call: async (p) => {
      const invited = await p.accounts.orgs.invite({ kind: 'operator', org: { id: p.orgId, role: null } }, { email: uniqueEmail('accept'), role: 'viewer' }, 'http://localhost');
      return { path: '/auth/invitations/accept', body: { token: invited.token, password: PASSWORD } };
    },
  },
  authReadKey: { call: async (p) => ({ path: '/auth/read-key', body: { project_id: p.projectId } }) },
  authConfig: { call: async () => ({ path: '/auth/config' }) },
  // Single sign-on is not configured here (sso.spec.ts runs it against a real provider): each of its routes answers
  // 404 not_found to every caller alike, the credential included.
  authOidcStart: { call: async () => ({ path: '/auth/oidc/start', body: { binding: 'n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg' } }), success: 404 },
  authOidcCallback: { call: async () => ({ path: '/auth/oidc/callback', query: { code: 'c', state: 's' } }), success: 404 },
  authOidcComplete: { call: async () => ({ path: '/auth/oidc/complete', body: { code: 'sso_x', secret: 'a secret of at least thirty-two characters' } }), success: 404 },
  listOrgs: { call: async () => ({ path: '/admin/orgs' }) },
  createOrg: { call: async () => ({ path: '/admin/orgs', body: { name: 'table' } }) },
  updateOrg: { call: async (p) => ({ path: `/admin/orgs/${p.orgId}`, body: { name: 'Default' } }) },
  deleteOrg: { call: async (p) => ({ path: `/admin/orgs/${await p.orgWithRoles()}` }) },
  createInvitation: { call: async (p) => ({ path: `/admin/orgs/${p.orgId}/invitations`, body: { email: uniqueEmail('invite'), role: 'viewer' } }) },
  listInvitations: { call: async (p) => ({ path: `/admin/orgs/${p.orgId}/invitations` }) },
  deleteInvitation: { call: async (p) => ({ path: `/admin/orgs/${p.orgId}/invitations/${await invitation(p)}` }) },
  listMembers: { call: async (p) => ({ path: `/admin/orgs/${p.orgId}/members` }) },
  updateMember: { call: async (p) => ({ path: `/admin/orgs/${p.orgId}/members/${(await p.addMember(p.orgId, 'viewer')).id}`, body: { role: 'editor' } }) },
  removeMember: { call: async (p) => ({ path: `/admin/orgs/${p.orgId}/members/${(await p.addMember(p.orgId, 'viewer')).id}` }) },
  orgAudit: { call: async (p) => ({ path: `/admin/orgs/${p.orgId}/audit`, query: { limit: '5' } }) },
  listUsers: { call: async () => ({ path: '/admin/users' }) },
  createPasswordReset: { call: async (p) => ({ path: '/admin/password-resets', body: { email: p.users.viewer.email } }) },
  createShare: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/shares`, body: { name: 'table' } }) },
  listShares: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/shares` }) },
  deleteShare: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/shares/${(await share(p)).share.id}` }) },
  // No credential: the link's token is the body's (any bearer token sent is ignored).
  shareFrameAncestors: { call: async (p) => ({ path: '/v1/share/frame-ancestors', query: { token: (await share(p)).url.split('/share/')[1]!, embed: '1' } }) },
  shareUnlock: { call: async (p) => ({ path: '/v1/share/unlock', body: { token: (await share(p)).url.split('/share/')[1] } }) },
  // Saved definitions (docs/saved-and-shared.md): any member lists, an editor saves, changes and deletes.
  ...savedRows('goal', 'goals'),
  ...savedRows('funnel', 'funnels'),
  ...savedRows('segment', 'segments'),
  // Alerts (docs/alerts-and-reports.md): admins only, every route.
  listAlerts: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/alerts` }) },
  createAlert: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/alerts`, body: { name: uniqueName('alert'), ...ALERT_DEFINITION, channels: ALERT_CHANNELS } }) },
  getAlert: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/alerts/${await sharedAlert(p)}` }) },
  updateAlert: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/alerts/${await alertOf(p)}`, body: { name: uniqueName('alert') } }) },
  deleteAlert: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/alerts/${await alertOf(p)}` }) },
  alertDeliveries: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/alerts/${await sharedAlert(p)}/deliveries` }) },
  testAlert: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/alerts/${await sharedAlert(p)}/test` }) },
  // Scheduled reports (docs/alerts-and-reports.md): the project's admin; the unsubscribe link without a credential.
  listReports: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/reports` }) },
  createReport: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/reports`, body: { frequency: 'monthly', recipients: [uniqueEmail('report')] } }) },
  getReport: { call: async (p) => ({ path: await reportPath(p) }) },
  updateReport: { call: async (p) => ({ path: await reportPath(p), body: { frequency: 'monthly' } }) },
  deleteReport: { call: async (p) => ({ path: await reportPath(p) }) },
  // No mail here (reports.spec.ts sends previews to a real SMTP server): an allowed caller gets 503 not_ready.
  sendReport: { call: async (p) => ({ path: `${await reportPath(p)}/send` }), success: 503 },
  reportUnsubscribePage: { call: async (p) => ({ path: `/reports/unsubscribe/${await unsubscribeToken(p)}` }) },
  reportUnsubscribe: { call: async (p) => ({ path: `/reports/unsubscribe/${await unsubscribeToken(p)}` }) },
  // Annotations (issue 48): any member lists, an editor adds and deletes.
  listProjectAnnotations: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/annotations`, query: { from: '2026-03-01', to: '2026-04-01' } }) },
  createProjectAnnotation: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/annotations`, body: { at: '2026-03-04T09:30:00Z', text: uniqueName('note'), kind: 'deploy' } }) },
  deleteProjectAnnotation: { call: async (p) => ({ path: `/admin/projects/${p.projectId}/annotations/${await annotationOf(p)}` }) },
};

// Every route admin-api serves: /admin, /auth, and the share links' unlock (/v1/share/unlock).
const PEOPLE_ROUTES = Object.entries(routes as Record<RouteName, ApiRoute>).filter(([, r]) => r.path.startsWith('/admin') || r.path.startsWith('/auth') || r.app === 'admin-api');

/** The status the declaration promises `who`. */
function expected(route: ApiRoute, row: Row, who: Who): number {
  const success = row.success ?? Number(Object.keys(route.responses)[0]);
  // admin-api's catch-all: any credential, then 404 (the route is not served here).
  if (row.standaloneOnly) return who === 'none' ? 401 : 404;
  const auth = route.auth;
  if (auth === 'none') return success;
  if (auth === 'admin_token') return who === 'operator' ? success : 401;
  if (typeof auth !== 'object' || !('session' in auth)) throw new Error(`${route.path}: an /admin or /auth route without a user or operator credential`);
  if (who === 'none') return auth.session === 'optional' ? success : 401;
  if (who === 'operator') return auth.session === 'any' ? success : 401;
  if (!auth.role) return success;
  if (who === 'outsider') return 404;
  return roleAtLeast(who, auth.role) ? success : 403;
}

describe('the people routes in the table', () => {
  it('has a row for every /admin and /auth route (a new route needs one)', () => {
    expect(PEOPLE_ROUTES.map(([name]) => name).filter((name) => !(name in TABLE))).toEqual([]);
    expect(Object.keys(TABLE).filter((name) => !PEOPLE_ROUTES.some(([n]) => n === name))).toEqual([]);
    // Every route admin-api serves is an /admin or /auth one, and so is the backup route `npm start` serves beside them.
    expect(API_ROUTES.filter((r) => r.app === 'admin-api' || (r.app === 'standalone' && r.path.startsWith('/admin'))).length).toBe(PEOPLE_ROUTES.length);
  });
});

// The event store POST /admin/projects/{id}/import writes into (embedded chDB, as npm start's).
let events: Awaited<ReturnType<typeof openTestStores>>;
beforeAll(async () => {
  events = await openTestStores();
}, 120_000);
afterAll(() => events.close());

describe.each(keyStoreBackends())('every /admin and /auth route x every caller on %s', (_name, open) => {
  let p: People;
  beforeAll(async () => {
    p = await setUpPeople(await open(), { importEvents: (id, rows) => importEvents(events.events, id, rows) });
  }, 120_000);
  afterAll(() => p.db.close());

  it.each(PEOPLE_ROUTES)('%s answers each caller as its declared auth says', async (name, route) => {
    const row = TABLE[name]!;
    const got: Record<string, number> = {};
    const want: Record<string, number> = {};
    for (const who of CALLERS) {
      const token = who === 'none' ? undefined : who === 'operator' ? ADMIN_TOKEN : await p.tokenOf(who);
      const call = await row.call(p, who, token);
      const req = request(p.app)[route.method](call.path).set('user-agent', 'tests');
      if (token) req.set('authorization', `Bearer ${token}`);
      if (call.query) req.query(call.query);
      const res = await (call.body ? req.send(call.body) : req);
      got[who] = res.status;
      want[who] = expected(route, row, who);
      if (res.status === 403) expect(res.body).toEqual({ error: 'insufficient_role', details: { required: (route.auth as { role: Role }).role, role: who } });
      if (res.status === 404 && who === 'outsider') expect(res.body).toEqual({ error: 'not_found' });
      if (res.status === 401 && !row.standaloneOnly) expect(res.body).toEqual({ error: route.auth === 'none' ? 'invalid_credentials' : 'invalid_session' });
    }
    expect(got).toEqual(want);
  }, 120_000);

  it("the project's admin imports rows as exported, audited as project.imported (a batch sent again: skipped, no entry)", async () => {
    const token = await p.tokenOf('admin');
    const since = new Date(p.clock.now - 1000).toISOString();
    const rows = [importedRow(), { ...importedRow(), device_type: 'bot', browser: 'Googlebot', country: 'JP' }];
    const first = await request(p.app).post(`/admin/projects/${p.projectId}/import`).set('authorization', `Bearer ${token}`).send({ events: rows });
    expect(first.body).toEqual({ ok: true, count: 2, skipped: 0 });
    const again = await request(p.app).post(`/admin/projects/${p.projectId}/import`).set('authorization', `Bearer ${token}`).send({ events: rows });
    expect(again.body).toEqual({ ok: true, count: 0, skipped: 2 });
    const audit = await request(p.app).get(`/admin/orgs/${p.orgId}/audit`).query({ from: since, limit: 50 }).set('authorization', `Bearer ${await p.tokenOf('owner')}`);
    const imports = audit.body.entries.filter((e: { action: string }) => e.action === 'project.imported');
    expect(imports).toEqual([expect.objectContaining({ actor: expect.objectContaining({ type: 'user', id: p.users.admin.id }), target: expect.objectContaining({ type: 'project', id: p.projectId }), details: { count: 2, skipped: 0 } })]);
  });

  it('an ended session is refused with 401 invalid_session on every route that takes a user token', async () => {
    const token = await p.tokenOf('owner');
    await p.accounts.sessions.end(await userIdOfToken(p, token), { only: [token.split('_')[1]!] });
    for (const [name, route] of PEOPLE_ROUTES) {
      const auth = route.auth;
      if (typeof auth !== 'object' || !('session' in auth)) continue;
      const call = await TABLE[name]!.call(p, 'owner', undefined);
      const req = request(p.app)[route.method](call.path).set('authorization', `Bearer ${token}`);
      const res = await (call.body ? req.send(call.body) : req);
      expect({ name, status: res.status, body: res.body }).toEqual({ name, status: 401, body: { error: 'invalid_session' } });
    }
  }, 120_000);
});
