import request from 'supertest';
import { type Mailer, smtpMailer } from '@analytics/accounts';
import { signatureOf } from '@analytics/alerts';
import { memoryPglitePort } from '@analytics/auth/testing';
import { ALERT_LIMITS } from '@analytics/schema';
import { type SmtpSink, type WebhookReceiver, startSmtpSink, startWebhookReceiver } from '@analytics/testing';
import { ADMIN_TOKEN, type People, setUpPeople } from './test-people';

// The alerts of a project through the admin routes (docs/alerts-and-reports.md, "Alerts"). Who may call each route
// is roles.spec.ts's table; the job that evaluates them is libs/alerts alerts-job.spec.ts. Here: what they answer,
// the address guard at save time, and test messages to a real local receiver and a real SMTP server.

const SECRET = 'a-webhook-secret-of-some-length';

describe('alerts (admin routes)', () => {
  let p: People;
  let guarded: People;
  let admin: string;
  let hooks: WebhookReceiver;
  let smtp: SmtpSink;
  let mailer: Mailer;
  beforeAll(async () => {
    [hooks, smtp] = await Promise.all([startWebhookReceiver(), startSmtpSink()]);
    mailer = smtpMailer(smtp.url, 'Alerts <alerts@example.com>');
    // As the tests run it (ALERTS_ALLOW_PRIVATE_URLS=true: the receiver is on 127.0.0.1), and as production does.
    p = await setUpPeople(await memoryPglitePort(), { alertChannels: { mailer, allowPrivate: true } });
    guarded = await setUpPeople(await memoryPglitePort(), { alertChannels: { allowPrivate: false, resolve: async (host) => [{ address: host === 'inside.example.test' ? '192.168.1.10' : '93.184.216.34', family: 4 }] } });
    admin = `Bearer ${await p.tokenOf('admin')}`;
  }, 120_000);
  afterAll(async () => {
    mailer.close();
    await Promise.all([hooks.close(), smtp.close(), p.db.close(), guarded.db.close()]);
  });

  const base = (of: People = p) => `/admin/projects/${of.projectId}/alerts`;
  const post = (body: object, of: People = p, as = admin) => request(of.app).post(base(of)).set('authorization', as).send(body);
  const valid = (o: object = {}) => ({ name: `alert ${Math.random()}`, metric: 'pageviews', window: '1h', condition: { anomaly: { sensitivity: 'medium' } }, channels: [{ email: ['ops@example.com'] }], ...o });

  it('creates an alert, answers its channels without secrets, and lists and gets it', async () => {
    const res = await post(valid({ name: 'Snippet broke', channels: [{ email: ['Ops@Example.com'] }, { webhook: { url: `${hooks.url}/a`, secret: SECRET } }, { slack: { webhook_url: 'https://hooks.slack.com/services/T0/B0/xyz' } }] }));
    expect(res.status).toBe(201);
    const alert = res.body.alert;
    expect(alert).toEqual({
      id: expect.any(String), name: 'Snippet broke', metric: 'pageviews', window: '1h', condition: { anomaly: { sensitivity: 'medium' } },
      channels: [{ email: ['ops@example.com'] }, { webhook: { url: `${hooks.url}/a`, has_secret: true } }, { slack: { host: 'hooks.slack.com', has_secret: true } }],
      state: 'ok', state_since: null, last_evaluated_at: null, last_value: null, created_at: expect.any(String), updated_at: alert.created_at,
    });
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
    expect(JSON.stringify(res.body)).not.toContain('xyz');
    expect((await request(p.app).get(base()).set('authorization', admin)).body.alerts).toContainEqual(alert);
    expect((await request(p.app).get(`${base()}/${alert.id}`).set('authorization', admin)).body).toEqual({ alert });
  });

  it('takes conversions of an inline or saved goal, events of one name, and the three conditions', async () => {
    const goal = (await p.keyStore.saved.create(p.projectId, 'goal', { name: 'Signup', definition: { event: 'signup', filters: [] } }))!;
    expect((await post(valid({ metric: 'conversions', goal: { id: goal.id }, window: '1d', condition: { below: 3 } }))).body.alert).toMatchObject({ goal: { id: goal.id }, window: '1d', condition: { below: 3 } });
    expect((await post(valid({ metric: 'conversions', goal: { path: '/thanks*' }, condition: { above: 100 } }))).body.alert).toMatchObject({ goal: { path: '/thanks*', filters: [] } });
    expect((await post(valid({ metric: 'events', event: 'signup' }))).body.alert).toMatchObject({ metric: 'events', event: 'signup' });
    expect((await post(valid({ metric: 'visitors', condition: { anomaly: {} } }))).body.alert).toMatchObject({ condition: { anomaly: { sensitivity: 'medium' } } });
  });

  it('answers 400 invalid_payload naming each wrong field', async () => {
    const issues = async (body: object) => {
      const res = await post(body);
      expect([res.status, res.body.error]).toEqual([400, 'invalid_payload']);
      return (res.body.details.issues as Array<{ path: string }>).map((i) => i.path);
    };
    expect(await issues(valid({ metric: 'bounce_rate' }))).toEqual(['metric']);
    expect(await issues(valid({ window: '5m' }))).toEqual(['window']);
    expect(await issues(valid({ condition: { above: -1 } }))).toEqual(['condition.above']);
    expect(await issues(valid({ condition: { anomaly: { sensitivity: 'extreme' } } }))).toEqual(['condition.anomaly.sensitivity']);
    expect(await issues(valid({ condition: { near: 3 } }))).toEqual(['condition']);
    expect(await issues(valid({ metric: 'conversions' }))).toEqual(['goal']);
    expect(await issues(valid({ goal: { event: 'x' } }))).toEqual(['goal']);
    expect(await issues(valid({ event: 'signup' }))).toEqual(['event']);
    expect(await issues(valid({ channels: [] }))).toEqual(['channels']);
    expect(await issues(valid({ channels: [{ sms: ['+33'] }] }))).toEqual(['channels.0']);
    expect(await issues(valid({ channels: [{ email: ['not an address'] }] }))).toEqual(['channels.0.email.0']);
    expect(await issues(valid({ channels: [{ webhook: { url: 'ftp://x.example.com', secret: SECRET } }] }))).toEqual(['channels.0.webhook.url']);
    expect(await issues(valid({ channels: [{ webhook: { url: 'https://x.example.com', secret: 'short' } }] }))).toEqual(['channels.0.webhook.secret']);
    expect(await issues(valid({ channels: [{ slack: { webhook_url: 'ftp://hooks.slack.com/x' } }] }))).toEqual(['channels.0.slack.webhook_url']);
    expect(await issues(valid({ channels: Array.from({ length: ALERT_LIMITS.channels + 1 }, () => ({ email: ['a@example.com'] })) }))).toEqual(['channels']);
    expect(await issues(valid({ nonsense: 1 }))).toEqual(['']);
  });

  it('refuses at save a webhook or Slack URL whose address, or whose name, is loopback, private, link-local, unique-local or unspecified', async () => {
    const guardedAdmin = `Bearer ${ADMIN_TOKEN}`;
    const refused = async (url: string, kind: 'webhook' | 'slack' = 'webhook') => {
      const channel = kind === 'webhook' ? { webhook: { url, secret: SECRET } } : { slack: { webhook_url: url } };
      const res = await post(valid({ channels: [{ email: ['a@example.com'] }, channel] }), guarded, guardedAdmin);
      expect([url, res.status, res.body.error]).toEqual([url, 400, 'invalid_payload']);
      expect(res.body.details.issues[0].path).toBe(kind === 'webhook' ? 'channels.1.webhook.url' : 'channels.1.slack.webhook_url');
      return res.body.details.issues[0].message as string;
    };
    expect(await refused('http://127.0.0.1:8080/hook')).toContain('loopback');
    expect(await refused('http://[::1]/hook')).toContain('loopback');
    expect(await refused('http://10.0.0.8/hook')).toContain('private');
    expect(await refused('http://169.254.169.254/latest/meta-data')).toContain('linkLocal');
    expect(await refused('http://[fd00::1]/hook')).toContain('uniqueLocal');
    expect(await refused('http://0.0.0.0/hook')).toContain('unspecified');
    expect(await refused('http://[::ffff:127.0.0.1]/hook')).toContain('loopback');
    expect(await refused('https://inside.example.test/hook', 'slack')).toContain('192.168.1.10');
    expect((await post(valid({ channels: [{ webhook: { url: 'https://hooks.example.com/x', secret: SECRET } }] }), guarded, guardedAdmin)).status).toBe(201);
    expect((await post(valid({ channels: [{ webhook: { url: 'http://93.184.216.34/x', secret: SECRET } }] }), guarded, guardedAdmin)).status).toBe(201);
    // A PATCH of the channels is checked the same way.
    const saved = (await post(valid(), guarded, guardedAdmin)).body.alert;
    const patched = await request(guarded.app).patch(`${base(guarded)}/${saved.id}`).set('authorization', guardedAdmin).send({ channels: [{ webhook: { url: 'http://inside.example.test:9/x', secret: SECRET } }] });
    expect([patched.status, patched.body.details?.issues?.[0]?.path]).toEqual([400, 'channels.0.webhook.url']);
  });

  it('PATCH changes any subset, checks the whole, keeps secrets out of answers; a changed condition starts over; DELETE removes it', async () => {
    const alert = (await post(valid({ name: 'To change', channels: [{ webhook: { url: `${hooks.url}/b`, secret: SECRET } }] }))).body.alert;
    await p.keyStore.alerts.evaluated({ id: alert.id, project_id: p.projectId }, { from: 'ok', to: 'firing', point: new Date(), value: 0 }, [], new Date(), new Date());
    const renamed = await request(p.app).patch(`${base()}/${alert.id}`).set('authorization', admin).send({ name: 'Changed' });
    expect(renamed.body.alert).toMatchObject({ name: 'Changed', state: 'firing', channels: [{ webhook: { url: `${hooks.url}/b`, has_secret: true } }] });
    const changed = await request(p.app).patch(`${base()}/${alert.id}`).set('authorization', admin).send({ condition: { below: 10 } });
    expect(changed.body.alert).toMatchObject({ condition: { below: 10 }, state: 'ok', state_since: null, last_value: null });
    expect((await request(p.app).patch(`${base()}/${alert.id}`).set('authorization', admin).send({ metric: 'conversions' })).status).toBe(400);
    expect((await request(p.app).patch(`${base()}/${alert.id}`).set('authorization', admin).send({ channels: [{ webhook: { url: `${hooks.url}/b` } }] })).status).toBe(400);
    expect((await request(p.app).delete(`${base()}/${alert.id}`).set('authorization', admin)).status).toBe(204);
    expect((await request(p.app).get(`${base()}/${alert.id}`).set('authorization', admin)).status).toBe(404);
    expect((await request(p.app).delete(`${base()}/${alert.id}`).set('authorization', admin)).status).toBe(404);
  });

  it('answers 409 name_taken for a name the project has, and 409 limit_reached past the cap', async () => {
    await post(valid({ name: 'Twice' }));
    expect((await post(valid({ name: 'Twice' }))).body).toMatchObject({ error: 'name_taken', details: { kind: 'alert', name: 'Twice' } });
    const { project } = await p.keyStore.createProject({ name: 'full', org_id: p.orgId });
    for (let i = 0; i < ALERT_LIMITS.perProject; i++) await p.keyStore.alerts.create(project.id, { name: `a${i}`, definition: { metric: 'pageviews', window: '1h', condition: { above: 1 } }, channels: [{ email: ['a@example.com'] }] });
    const res = await request(p.app).post(`/admin/projects/${project.id}/alerts`).set('authorization', admin).send(valid());
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'limit_reached', details: { kind: 'alert', limit: ALERT_LIMITS.perProject } });
  });

  it('POST .../test sends a test message to every channel (webhook signed, Slack, mail) and lists it in the deliveries', async () => {
    const alert = (await post(valid({ name: 'Tested', channels: [{ webhook: { url: `${hooks.url}/test`, secret: SECRET } }, { slack: { webhook_url: `${hooks.url}/test-slack` } }, { email: ['tested@example.com'] }] }))).body.alert;
    const res = await request(p.app).post(`${base()}/${alert.id}/test`).set('authorization', admin);
    expect(res.status).toBe(202);
    expect(res.body.deliveries.map((d: { channel: string; kind: string; status: string }) => [d.channel, d.kind, d.status])).toEqual([['webhook', 'test', 'pending'], ['slack', 'test', 'pending'], ['email', 'test', 'pending']]);
    const [hook] = await hooks.waitFor(1, '/test');
    expect(hook!.headers['x-signature']).toBe(signatureOf(hook!.body, SECRET));
    expect(JSON.parse(hook!.body)).toMatchObject({ alert: { id: alert.id, name: 'Tested' }, project: { id: p.projectId }, state: 'test', value: null, window: '1h', contributors: [] });
    expect(JSON.parse((await hooks.waitFor(1, '/test-slack'))[0]!.body).text).toContain('Test message of the alert "Tested"');
    expect(await smtp.mailTo('tested@example.com')).toContain('Test message of the alert "Tested"');
    let listed: Array<{ status: string }> = [];
    for (let i = 0; i < 100 && !(listed.length === 3 && listed.every((d) => d.status === 'sent')); i++) {
      listed = (await request(p.app).get(`${base()}/${alert.id}/deliveries`).set('authorization', admin)).body.deliveries;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(listed).toEqual(expect.arrayContaining([expect.objectContaining({ at: expect.any(String), channel: 'webhook', kind: 'test', status: 'sent', attempts: 1 })]));
    expect(listed.every((d) => d.status === 'sent')).toBe(true);
  });

  it('an unknown alert, or one of another project, is 404 on every alert route', async () => {
    const alert = (await post(valid())).body.alert;
    const { project } = await p.keyStore.createProject({ name: 'other', org_id: p.orgId });
    for (const [method, suffix] of [['get', ''], ['patch', ''], ['delete', ''], ['get', '/deliveries'], ['post', '/test']] as const) {
      expect((await request(p.app)[method](`/admin/projects/${project.id}/alerts/${alert.id}${suffix}`).set('authorization', admin).send({ name: 'x' })).status).toBe(404);
      expect((await request(p.app)[method](`${base()}/not-an-id${suffix}`).set('authorization', admin).send({ name: 'x' })).status).toBe(404);
    }
  });
});
