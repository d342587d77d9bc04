import request from 'supertest';
import { smtpMailer } from '@analytics/accounts';
import { KeyStore } from '@analytics/auth';
import { REPORT_LIMITS } from '@analytics/schema';
import { reportPreviewOf } from '@analytics/runtime';
import { type SmtpCapture, type ContractCheck, contractChecked, memoryPglitePort, openTestStores, silentLogger, smtpCapture } from '@analytics/testing';
import { ADMIN_TOKEN, type People, setUpPeople } from './test-people';

// The reports routes (issue 48, docs/alerts-and-reports.md "Scheduled reports"): saved and changed by a project's
// admin with every field checked, a preview mailed to a real SMTP server at once, and the unsubscribe link of a mail
// working without signing in (GET: a confirm page; POST: RFC 8058 one click). roles.spec.ts holds every role x route.

const PUBLIC_URL = 'https://analytics.example.com';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

let p: People;
let smtp: SmtpCapture;
let events: Awaited<ReturnType<typeof openTestStores>>;
let contract: ContractCheck;
let app: ContractCheck['app'];
const base = () => `/admin/projects/${p.projectId}/reports`;

beforeAll(async () => {
  smtp = await smtpCapture();
  events = await openTestStores();
  const db = await memoryPglitePort();
  const keyStore = new KeyStore(db);
  const mailer = smtpMailer(smtp.url, 'Reports <reports@example.com>');
  const preview = reportPreviewOf({ reports: keyStore.reports, events: events.events, saved: keyStore.saved, mailer, publicUrl: PUBLIC_URL, logger: silentLogger, staleMs: 60_000 });
  p = await setUpPeople(db, { reportPreview: preview });
  contract = contractChecked(p.app);
  app = contract.app;
}, 180_000);
afterAll(async () => {
  await smtp.close();
  await p.db.close();
  await events.close();
});

describe('saving reports', () => {
  it('creates one (201) with its next send in the project\'s zone, lists it, reads it, changes it and deletes it', async () => {
    await request(app).patch(`/admin/projects/${p.projectId}`).set(admin).send({ timezone: 'America/Los_Angeles' }).expect(200);
    const created = await request(app).post(base()).set(admin).send({ frequency: 'weekly', recipients: ['Owner@Example.com', 'owner@example.com', 'team@example.com'] });
    expect(created.status).toBe(201);
    const report = created.body.report;
    expect(report).toMatchObject({ frequency: 'weekly', recipients: ['owner@example.com', 'team@example.com'], segment: null, last_sent_at: null, project_id: p.projectId });
    // The next Monday 08:00 in Los Angeles, after now.
    const next = Date.parse(report.next_send_at);
    expect(next).toBeGreaterThan(Date.now());
    expect(next - Date.now()).toBeLessThanOrEqual(7 * 86_400_000 + 3_600_000);
    expect(new Intl.DateTimeFormat('en-US', { timeZone: 'America/Los_Angeles', weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(next)).toBe('Mon 08:00');

    expect((await request(app).get(base()).set(admin)).body.reports.map((r: { id: string }) => r.id)).toContain(report.id);
    expect((await request(app).get(`${base()}/${report.id}`).set(admin)).body.report).toEqual(report);

    const segment = (await p.keyStore.saved.create(p.projectId, 'segment', { name: 'France', definition: { filters: [['is', 'country', ['FR']]] } }))!;
    const changed = await request(app).patch(`${base()}/${report.id}`).set(admin).send({ frequency: 'monthly', recipients: ['team@example.com'], segment: segment.id });
    expect(changed.status).toBe(200);
    expect(changed.body.report).toMatchObject({ frequency: 'monthly', recipients: ['team@example.com'], segment: segment.id });
    expect(new Intl.DateTimeFormat('en-US', { timeZone: 'America/Los_Angeles', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(Date.parse(changed.body.report.next_send_at))).toBe('1, 08:00');
    expect((await request(app).patch(`${base()}/${report.id}`).set(admin).send({ segment: null })).body.report.segment).toBeNull();

    expect((await request(app).delete(`${base()}/${report.id}`).set(admin)).status).toBe(204);
    expect((await request(app).get(`${base()}/${report.id}`).set(admin)).status).toBe(404);
    expect((await request(app).delete(`${base()}/${report.id}`).set(admin)).status).toBe(404);

    // Each change is in the organization's audit log (the operator's token: actor operator), no recipient in it.
    const entries = (await p.accounts.audit.list(p.orgId, { limit: 100 })).filter((e) => e.target.id === report.id);
    expect(entries.map((e) => [e.action, e.actor.type, e.target.name])).toEqual([
      ['report.deleted', 'operator', 'monthly report'],
      ['report.updated', 'operator', 'monthly report'],
      ['report.updated', 'operator', 'monthly report'],
      ['report.created', 'operator', 'weekly report'],
    ]);
    expect(entries[2]!.details).toEqual({ project_id: p.projectId, changed: ['frequency', 'recipients', 'segment'] });
    expect(JSON.stringify(entries)).not.toContain('team@example.com');
  });

  it.each([
    ['no frequency', { recipients: ['a@example.com'] }, ['frequency']],
    ['a frequency of its own', { frequency: 'daily', recipients: ['a@example.com'] }, ['frequency']],
    ['no recipients', { frequency: 'weekly', recipients: [] }, ['recipients']],
    ['a recipient that is no address', { frequency: 'weekly', recipients: ['a@example.com', 'nope'] }, ['recipients.1']],
    ['too many recipients', { frequency: 'weekly', recipients: Array.from({ length: REPORT_LIMITS.recipients + 1 }, (_, i) => `r${i}@example.com`) }, ['recipients']],
    ['a segment that is no id', { frequency: 'weekly', recipients: ['a@example.com'], segment: 'france' }, ['segment']],
    ['an unknown field', { frequency: 'weekly', recipients: ['a@example.com'], cc: ['b@example.com'] }, ['']],
  ])('refuses %s with 400 invalid_payload naming the field', async (_what, body, fields) => {
    const res = await request(app).post(base()).set(admin).send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_payload');
    for (const field of fields) expect(JSON.stringify(res.body.details)).toContain(field === '' ? 'cc' : field);
  });

  it('refuses a segment the project has not saved, an empty change, and an unknown report (404)', async () => {
    const unknown = await request(app).post(base()).set(admin).send({ frequency: 'weekly', recipients: ['a@example.com'], segment: '00000000-0000-4000-8000-000000000000' });
    expect([unknown.status, unknown.body.error, Object.keys(unknown.body.details)]).toEqual([400, 'invalid_payload', ['segment']]);
    const report = (await request(app).post(base()).set(admin).send({ frequency: 'weekly', recipients: ['a@example.com'] })).body.report;
    expect((await request(app).patch(`${base()}/${report.id}`).set(admin).send({})).status).toBe(400);
    expect((await request(app).patch(`${base()}/00000000-0000-4000-8000-000000000000`).set(admin).send({ frequency: 'weekly' })).status).toBe(404);
    expect((await request(app).get(`${base()}/not-an-id`).set(admin)).status).toBe(404);
    await request(app).delete(`${base()}/${report.id}`).set(admin).expect(204);
  });

  it(`holds at most ${REPORT_LIMITS.perProject} reports per project (409 limit_reached)`, async () => {
    const project = (await p.keyStore.createProject({ name: 'many', org_id: p.orgId })).project.id;
    for (let i = 0; i < REPORT_LIMITS.perProject; i++) await p.keyStore.reports.create(project, { frequency: 'weekly', recipients: ['a@example.com'] });
    const res = await request(app).post(`/admin/projects/${project}/reports`).set(admin).send({ frequency: 'weekly', recipients: ['a@example.com'] });
    expect([res.status, res.body.error]).toEqual([409, 'limit_reached']);
  });
});

describe('the preview and the unsubscribe link', () => {
  it('mails the current period so far to every recipient now (202), marked as a preview and outside the send log', async () => {
    const report = (await request(app).post(base()).set(admin).send({ frequency: 'monthly', recipients: ['p1@example.com', 'p2@example.com'] })).body.report;
    const res = await request(app).post(`${base()}/${report.id}/send`).set(admin);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ ok: true, recipients: 2 });
    expect(res.body.period.from.slice(8)).toBe('01');
    const mails = await smtp.until(2, (m) => m.to[0] === 'p1@example.com' || m.to[0] === 'p2@example.com');
    expect(mails.map((m) => m.header('subject'))).toEqual([expect.stringMatching(/^\[Preview\] Monthly report for /), expect.stringMatching(/^\[Preview\] Monthly report for /)]);
    expect(mails[0]!.messageId).not.toBe(mails[1]!.messageId);
    expect(await p.keyStore.reports.sends(report.id)).toEqual([]);
    expect((await request(app).get(`${base()}/${report.id}`).set(admin)).body.report.last_sent_at).toBeNull();
  });

  it('unsubscribes the link\'s recipient with one POST without signing in; GET shows a confirm page first', async () => {
    const report = (await request(app).post(base()).set(admin).send({ frequency: 'weekly', recipients: ['stay@example.com', 'leave@example.com'] })).body.report;
    await request(app).post(`${base()}/${report.id}/send`).set(admin).expect(202);
    const [mail] = await smtp.until(1, (m) => m.to[0] === 'leave@example.com' && m.header('subject')!.includes('Weekly'));
    const link = mail!.header('list-unsubscribe')!.slice(1, -1);
    expect(mail!.decoded).toContain(link);
    const path = new URL(link).pathname;

    const page = await request(app).get(path);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('leave@example.com');
    expect(page.text).toContain('<form method="post">');
    // Looking is not unsubscribing.
    expect((await p.keyStore.reports.get(p.projectId, report.id))!.recipients).toEqual(['leave@example.com', 'stay@example.com']);

    // What a mail client sends (RFC 8058): a form body, no credential.
    const one = await request(app).post(path).type('form').send('List-Unsubscribe=One-Click');
    expect(one.status).toBe(200);
    expect(one.text).toContain('no longer receives');
    expect((await p.keyStore.reports.get(p.projectId, report.id))!.recipients).toEqual(['stay@example.com']);
    // Again: still fine; the page then says so.
    expect((await request(app).post(path)).status).toBe(200);
    expect((await request(app).get(path)).text).toContain('no longer receives');
    // A token that is not one, or of a deleted report: 404.
    expect((await request(app).post('/reports/unsubscribe/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).status).toBe(404);
    expect((await request(app).get('/reports/unsubscribe/short')).status).toBe(404);
    await request(app).delete(`${base()}/${report.id}`).set(admin).expect(204);
    expect((await request(app).post(path)).status).toBe(404);
  });

  it('answers 503 not_ready naming what is missing where this process cannot mail', async () => {
    const bare = await setUpPeople(await memoryPglitePort(), { reportPreview: reportPreviewOf({ missing: 'SMTP_URL, PUBLIC_URL' }) });
    const report = (await request(bare.app).post(`/admin/projects/${bare.projectId}/reports`).set(admin).send({ frequency: 'weekly', recipients: ['a@example.com'] })).body.report;
    const refused = await request(bare.app).post(`/admin/projects/${bare.projectId}/reports/${report.id}/send`).set(admin);
    expect([refused.status, refused.body.error, refused.body.details.message]).toEqual([503, 'not_ready', expect.stringContaining('SMTP_URL, PUBLIC_URL')]);
    await bare.db.close();
  });
});

describe('the contract (libs/schema API_ROUTES)', () => {
  it("parses every answer of this suite with its route's response schema, with only the error codes the route declares", () => {
    expect(contract.violations).toEqual([]);
  });
});
