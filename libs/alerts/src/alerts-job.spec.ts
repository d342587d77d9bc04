import { type Mailer, smtpMailer } from '@analytics/accounts';
import type { AlertChannel, AlertDefinition, EventRow } from '@analytics/schema';
import { toClickHouseTime } from '@analytics/schema';
import { envSchema, loadConfig } from '@analytics/runtime';
import { type SmtpSink, type WebhookReceiver, openTestStores, silentLogger, startSmtpSink, startWebhookReceiver } from '@analytics/testing';
import { alertsJob } from './alerts-job';
import { alertsJobOf } from './alerts-job-of';
import { signatureOf } from './channels';
import { RETRY_FOR_MS } from './deliveries';
import { WEEK_MS, insightsThrough } from './evaluate';

// The alerts job against real stores (embedded chDB and PGlite), a real local webhook receiver and a real SMTP server
// in-process; its clock is the test's (run(now) with chosen times). docs/alerts-and-reports.md, "Alerts".

const HOUR = 3_600_000;
const MINUTE = 60_000;
// A complete hour three days ago: its window and the same hour 1 to 4 weeks before are all in the past.
const T = Math.floor(Date.now() / HOUR) * HOUR - 3 * 24 * HOUR;
const SECRET = 'a-webhook-secret-of-some-length';

let seq = 0;
const row = (projectId: string, at: number, o: Partial<EventRow> = {}): EventRow => ({
  project_id: projectId, timestamp: toClickHouseTime(at), event_id: `alerts-${++seq}`, event_name: '$pageview', anonymous_id: `anon-${seq}`,
  user_id: null, session_id: `sess-${seq}`, source: 'google', medium: 'organic', campaign: null, source_confidence: 'high', source_rule_id: 'google', channel: 'organic_search',
  referrer: null, url: null, path: '/', country: 'GB', device_type: 'desktop', browser: 'Chrome', os: 'Linux', ip_hash_hex: 'ab'.repeat(16),
  properties: '{}', ...o,
});
/** `n` pageviews spread over the hour [start, start + 1 h). */
const hourOf = (projectId: string, start: number, n: number, o: Partial<EventRow> = {}) => Array.from({ length: n }, (_, i) => row(projectId, start + Math.floor(((i + 0.5) * HOUR) / n), o));

let stores: Awaited<ReturnType<typeof openTestStores>>;
let hooks: WebhookReceiver;
let smtp: SmtpSink;
let mailer: Mailer;
beforeAll(async () => {
  [stores, hooks, smtp] = await Promise.all([openTestStores(), startWebhookReceiver(), startSmtpSink()]);
  mailer = smtpMailer(smtp.url, 'Alerts <alerts@example.com>');
}, 120_000);
afterAll(async () => {
  mailer.close();
  await Promise.all([hooks.close(), smtp.close()]);
  await stores.close();
});

const jobOf = (channels: Partial<Parameters<typeof alertsJob>[0]['channels']> = {}) =>
  alertsJob({
    alerts: stores.keyStore.alerts,
    projects: stores.keyStore,
    insights: insightsThrough(stores.events, stores.keyStore.saved),
    channels: { mailer, allowPrivate: true, ...channels },
    everyMs: MINUTE,
    publicUrl: 'https://analytics.example.com',
  });
const newProject = async (name: string) => (await stores.keyStore.createProject({ name })).project.id;
const newAlert = async (projectId: string, definition: AlertDefinition, channels: AlertChannel[]) =>
  (await stores.keyStore.alerts.create(projectId, { name: `alert ${++seq}`, definition, channels }))!;
const deliveries = (projectId: string, alertId: string) => stores.keyStore.alerts.deliveries(projectId, alertId);
const bodies = (path: string) => hooks.received.filter((r) => r.path === path).map((r) => JSON.parse(r.body) as Record<string, unknown>);

describe('the alerts job', () => {
  it('fires once when pageviews drop to zero against four usual weeks, stays silent while it lasts, recovers once; webhook signed, mail and Slack sent', async () => {
    const projectId = await newProject('drop');
    // The same hour of the week, 1 to 4 weeks before: 20 pageviews each; the hour ending at T: none (the snippet broke).
    await stores.events.write([1, 2, 3, 4].flatMap((k) => hourOf(projectId, T - HOUR - k * WEEK_MS, 20)));
    const alert = await newAlert(projectId, { metric: 'pageviews', window: '1h', condition: { anomaly: { sensitivity: 'medium' } } }, [
      { webhook: { url: `${hooks.url}/drop`, secret: SECRET } },
      { email: ['owner@example.com'] },
      { slack: { webhook_url: `${hooks.url}/slack-drop` } },
    ]);
    const job = jobOf();
    await job.run(new Date(T + 5_000));

    const [fired] = await hooks.waitFor(1, '/drop');
    expect(fired!.headers['x-signature']).toBe(signatureOf(fired!.body, SECRET));
    expect(fired!.headers['content-type']).toBe('application/json');
    const body = JSON.parse(fired!.body);
    expect(body).toMatchObject({ alert: { id: alert.id, name: alert.name }, project: { id: projectId, name: 'drop' }, state: 'firing', metric: 'pageviews', value: 0, expected: 20, window: '1h', at: new Date(T).toISOString() });
    expect(body.threshold).toBeGreaterThan(0);
    expect(body.threshold).toBeLessThan(20);
    expect(body.dashboard_url).toMatch(/^https:\/\/analytics\.example\.com\/\?from=/);
    // Every source, page and country fell with it: the largest contributors name them.
    expect(body.contributors).toContainEqual({ dimension: 'source', value: 'google', current: 0, expected: 20, change: -20, share: 1 });
    expect(body.text).toBe('pageviews -100%: 0 in the last hour (expected 20, alert beyond ' + new Intl.NumberFormat('en', { maximumFractionDigits: 1 }).format(body.threshold) + '); google (source) brought 100% of the decrease');
    const mail = await smtp.mailTo('owner@example.com');
    expect(mail).toContain('pageviews -100%');
    expect(mail).toContain('google (source) brought 100% of the decrease');
    const [slack] = await hooks.waitFor(1, '/slack-drop');
    expect(JSON.parse(slack!.body).text).toContain('pageviews -100%');

    // Still nothing for the next minutes: firing, no new message.
    await job.run(new Date(T + MINUTE + 5_000));
    await job.run(new Date(T + 2 * MINUTE + 5_000));
    expect(bodies('/drop')).toHaveLength(1);
    expect(await stores.keyStore.alerts.get(projectId, alert.id)).toMatchObject({ state: 'firing', state_since: new Date(T).toISOString(), last_value: 0 });

    // Traffic is back: the hour ending at T + 1 h as usual (and the same hours of the weeks before).
    await stores.events.write([0, 1, 2, 3, 4].flatMap((k) => hourOf(projectId, T - k * WEEK_MS, 20)));
    await job.run(new Date(T + HOUR + 5_000));
    const recovered = (await hooks.waitFor(2, '/drop'))[1]!;
    expect(recovered.headers['x-signature']).toBe(signatureOf(recovered.body, SECRET));
    expect(JSON.parse(recovered.body)).toMatchObject({ state: 'recovered', value: 20, expected: 20 });
    await job.run(new Date(T + HOUR + MINUTE + 5_000));
    expect(bodies('/drop')).toHaveLength(2);
    const listed = await deliveries(projectId, alert.id);
    expect(listed.map((d) => [d.kind, d.channel, d.status])).toEqual(
      expect.arrayContaining([['fired', 'webhook', 'sent'], ['fired', 'email', 'sent'], ['fired', 'slack', 'sent'], ['recovered', 'webhook', 'sent'], ['recovered', 'email', 'sent'], ['recovered', 'slack', 'sent']]),
    );
    expect(listed).toHaveLength(6);
  }, 120_000);

  it('a threshold alert says what moved: the value, the threshold, and the source that brought the increase', async () => {
    const projectId = await newProject('spike');
    await stores.events.write([
      ...hourOf(projectId, T - HOUR - WEEK_MS, 10),
      ...hourOf(projectId, T - HOUR, 10),
      ...hourOf(projectId, T - HOUR, 40, { source: 'news.ycombinator.com', medium: 'referral', channel: 'referral', path: '/launch', country: 'US' }),
    ]);
    await newAlert(projectId, { metric: 'pageviews', window: '1h', condition: { above: 30 } }, [{ webhook: { url: `${hooks.url}/spike`, secret: SECRET } }]);
    await jobOf().run(new Date(T + 1_000));
    const body = bodies('/spike')[0] ?? JSON.parse((await hooks.waitFor(1, '/spike'))[0]!.body);
    expect(body).toMatchObject({ state: 'firing', value: 50, threshold: 30, expected: 10 });
    expect(body.text).toBe('pageviews +400%: 50 in the last hour (above threshold 30); news.ycombinator.com (source) brought 100% of the increase');
    expect(body.contributors.slice(0, 3).map((c: { dimension: string; value: string }) => `${c.dimension}:${c.value}`).sort()).toEqual(['country:US', 'path:/launch', 'source:news.ycombinator.com']);
  }, 120_000);

  it('retries a webhook on 5xx and on a timeout with backoff, then sends it; the restart-safe queue keeps it', async () => {
    const projectId = await newProject('retry');
    const alert = await newAlert(projectId, { metric: 'pageviews', window: '1h', condition: { below: 1 } }, [{ webhook: { url: `${hooks.url}/retry`, secret: SECRET } }]);
    hooks.answers.push(503, 502);
    await jobOf().run(new Date(T + 1_000));
    await hooks.waitFor(1, '/retry');
    expect((await deliveries(projectId, alert.id))[0]).toMatchObject({ kind: 'fired', status: 'pending', attempts: 1, last_error: expect.stringContaining('503') });
    // Not due again within 30 s; a new job (a restart) takes it up from the table.
    await jobOf().run(new Date(T + 20_000));
    expect(hooks.received.filter((r) => r.path === '/retry')).toHaveLength(1);
    await jobOf().run(new Date(T + 32_000));
    await hooks.waitFor(2, '/retry');
    expect((await deliveries(projectId, alert.id))[0]).toMatchObject({ status: 'pending', attempts: 2 });
    // Then a receiver that does not answer: a timeout, retried.
    hooks.answers.push('hang');
    await jobOf({ timeoutMs: 300 }).run(new Date(T + 93_000));
    expect((await deliveries(projectId, alert.id))[0]).toMatchObject({ status: 'pending', attempts: 3, last_error: expect.stringContaining('no answer') });
    await jobOf().run(new Date(T + 214_000));
    const all = await hooks.waitFor(4, '/retry');
    expect(new Set(all.map((r) => r.body)).size).toBe(1);
    expect((await deliveries(projectId, alert.id))[0]).toMatchObject({ status: 'sent', attempts: 4 });
  }, 120_000);

  it('gives up an hour after a message was made, and at once on a 4xx', async () => {
    const projectId = await newProject('give up');
    const alert = await newAlert(projectId, { metric: 'pageviews', window: '1h', condition: { below: 1 } }, [{ webhook: { url: `${hooks.url}/gone`, secret: SECRET } }, { webhook: { url: `${hooks.url}/down`, secret: SECRET } }]);
    hooks.statusOf['/gone'] = 410;
    hooks.statusOf['/down'] = 500;
    await jobOf().run(new Date(T + 1_000));
    await hooks.waitFor(1, '/gone');
    await hooks.waitFor(1, '/down');
    await jobOf().run(new Date(T + RETRY_FOR_MS - 10_000));
    await hooks.waitFor(2, '/down');
    expect(hooks.received.filter((r) => r.path === '/gone')).toHaveLength(1);
    const settled = await deliveries(projectId, alert.id);
    expect(settled.map((d) => [JSON.parse(JSON.stringify(d.message)).webhook.url.split('/').pop(), d.status, d.attempts]).sort()).toEqual([['down', 'failed', 2], ['gone', 'failed', 1]]);
  }, 120_000);

  it('refuses at send time a name that now resolves to a private address, connecting nowhere', async () => {
    const projectId = await newProject('guard');
    const alert = await newAlert(projectId, { metric: 'pageviews', window: '1h', condition: { below: 1 } }, [{ webhook: { url: 'http://hooks.example.test:9/x', secret: SECRET } }]);
    const before = hooks.received.length;
    await jobOf({ allowPrivate: false, resolve: async () => [{ address: '10.1.2.3', family: 4 }] }).run(new Date(T + 1_000));
    const [d] = await deliveries(projectId, alert.id);
    expect(d).toMatchObject({ status: 'failed', attempts: 1, last_error: expect.stringContaining('10.1.2.3, a private address') });
    expect(hooks.received.length).toBe(before);
  }, 120_000);

  it('two jobs evaluating at once (two replicas, a run overlapping the next) send one message per transition', async () => {
    const projectId = await newProject('twice');
    const alert = await newAlert(projectId, { metric: 'pageviews', window: '1h', condition: { below: 1 } }, [{ webhook: { url: `${hooks.url}/twice`, secret: SECRET } }]);
    await Promise.all([jobOf().run(new Date(T + 1_000)), jobOf().run(new Date(T + 2_000)), jobOf().run(new Date(T + 3_000))]);
    await hooks.waitFor(1, '/twice');
    await new Promise((r) => setTimeout(r, 200));
    expect(hooks.received.filter((r) => r.path === '/twice')).toHaveLength(1);
    expect((await deliveries(projectId, alert.id)).map((d) => [d.kind, d.status, d.attempts])).toEqual([['fired', 'sent', 1]]);
  }, 120_000);

  it('runs every ALERT_EVAL_INTERVAL_S (default 60) as the runtime config declares it; ALERTS_ALLOW_PRIVATE_URLS is off unless "true"', () => {
    const defaults = loadConfig(envSchema, {});
    expect([defaults.ALERT_EVAL_INTERVAL_S, defaults.ALERTS_ALLOW_PRIVATE_URLS]).toEqual([60, false]);
    expect(alertsJobOf(stores, defaults, silentLogger)).toMatchObject({ name: 'alerts', everyMs: 60_000 });
    const set = loadConfig(envSchema, { ALERT_EVAL_INTERVAL_S: '300', ALERTS_ALLOW_PRIVATE_URLS: 'true' });
    expect([alertsJobOf(stores, set, silentLogger).everyMs, set.ALERTS_ALLOW_PRIVATE_URLS]).toEqual([300_000, true]);
    expect(() => loadConfig(envSchema, { ALERT_EVAL_INTERVAL_S: '1' })).toThrow(/ALERT_EVAL_INTERVAL_S/);
    expect(() => loadConfig(envSchema, { ALERTS_ALLOW_PRIVATE_URLS: 'yes' })).toThrow(/ALERTS_ALLOW_PRIVATE_URLS/);
  });
});
