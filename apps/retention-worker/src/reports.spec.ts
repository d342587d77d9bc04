import { randomBytes } from 'node:crypto';
import { KeyStore, type SqlPort, createPgPort, migrateKeyStore } from '@analytics/auth';
import { createEnricher } from '@analytics/enrichment';
import { type ReportMailingDeps, annotationsOf, latestSlot, periodSoFar, sendReportPreview, nextSendAt, nextSlot, reportContent, runScheduledReports } from '@analytics/runtime';
import { smtpMailer } from '@analytics/accounts';
import { wallClock } from '@analytics/schema';
import { type SmtpCapture, openTestStores, silentLogger, smtpCapture } from '@analytics/testing';
import { spawnReportWorker } from './test-support/spawn-report-worker';

// Scheduled reports as the scheduler runs them (issue 48, docs/alerts-and-reports.md "Scheduled reports"): the slots
// across daylight-saving changes, the figures against plain TypeScript answers from the raw events, and exactly one
// mail per recipient and period under two replicas, a worker killed mid-send and a scheduler that was down.

const PG = process.env.TEST_DATABASE_URL;
const PUBLIC_URL = 'https://analytics.example.com';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const at = (iso: string) => Date.parse(iso);

describe('the schedule in the project\'s time zone', () => {
  it.each([
    // Europe/Berlin springs forward on Sunday 2026-03-29: the week before it is 167 hours, 08:00 moves from 07:00Z to 06:00Z.
    ['Europe/Berlin', '2026-03-30T06:00:00Z', '2026-03-23', '2026-03-30', '2026-03-22T23:00:00Z', '2026-03-29T22:00:00Z', 167],
    // ...and falls back on Sunday 2026-10-25: 169 hours, 08:00 is 07:00Z again.
    ['Europe/Berlin', '2026-10-26T07:00:00Z', '2026-10-19', '2026-10-26', '2026-10-18T22:00:00Z', '2026-10-25T23:00:00Z', 169],
    // America/Los_Angeles springs forward on Sunday 2026-03-08, falls back on Sunday 2026-11-01.
    ['America/Los_Angeles', '2026-03-09T15:00:00Z', '2026-03-02', '2026-03-09', '2026-03-02T08:00:00Z', '2026-03-09T07:00:00Z', 167],
    ['America/Los_Angeles', '2026-11-02T16:00:00Z', '2026-10-26', '2026-11-02', '2026-10-26T07:00:00Z', '2026-11-02T08:00:00Z', 169],
  ])('weekly in %s: Monday 08:00 local (%s), covering Monday to Sunday', (tz, slot, from, to, fromIso, toIso, hours) => {
    const s = latestSlot('weekly', tz, at(slot));
    expect(new Date(s.at).toISOString()).toBe(new Date(at(slot)).toISOString());
    expect(s.period).toEqual({ key: `weekly:${from}`, from, to, fromMs: at(fromIso), toMs: at(toIso) });
    expect((s.period.toMs - s.period.fromMs) / HOUR).toBe(hours);
    // One ms before the slot, the slot before it is the latest; the next after it is this one.
    const before = latestSlot('weekly', tz, at(slot) - 1);
    expect(before.period.to).toBe(from);
    expect(nextSlot('weekly', tz, at(slot) - 1).at).toBe(at(slot));
    expect(s.previous.to).toBe(from);
  });

  it.each([
    ['Europe/Berlin', '2026-04-01T06:00:00Z', '2026-03-01T07:00:00Z', 'monthly:2026-03', '2026-03-01', '2026-04-01'],
    ['Europe/Berlin', '2026-11-01T07:00:00Z', '2026-10-01T06:00:00Z', 'monthly:2026-10', '2026-10-01', '2026-11-01'],
    ['America/Los_Angeles', '2026-11-01T16:00:00Z', '2026-10-01T15:00:00Z', 'monthly:2026-10', '2026-10-01', '2026-11-01'],
    ['America/Los_Angeles', '2026-04-01T15:00:00Z', '2026-03-01T16:00:00Z', 'monthly:2026-03', '2026-03-01', '2026-04-01'],
  ])('monthly in %s: the 1st 08:00 local (%s), covering the previous calendar month', (tz, slot, previousSlot, key, from, to) => {
    const s = latestSlot('monthly', tz, at(slot) + 1);
    expect(s.at).toBe(at(slot));
    expect(s.period).toMatchObject({ key, from, to });
    expect(latestSlot('monthly', tz, at(slot) - 1).at).toBe(at(previousSlot));
  });

  it.each(['Europe/Berlin', 'America/Los_Angeles', 'UTC', 'Australia/Lord_Howe'])('puts every slot of two years at 08:00 local in %s (Mondays, 1sts)', (tz) => {
    let t = at('2026-01-01T00:00:00Z');
    for (let i = 0; i < 105; i++) {
      const s = nextSlot('weekly', tz, t);
      const w = wallClock(s.at, tz);
      expect([w.h, w.mi, new Date(Date.UTC(w.y, w.m - 1, w.d)).getUTCDay()]).toEqual([8, 0, 1]);
      expect(s.at - t).toBeLessThanOrEqual(7 * DAY + HOUR);
      t = s.at;
    }
    t = at('2026-01-01T00:00:00Z');
    for (let i = 0; i < 24; i++) {
      const s = nextSlot('monthly', tz, t);
      const w = wallClock(s.at, tz);
      expect([w.d, w.h, w.mi]).toEqual([1, 8, 0]);
      t = s.at;
    }
  });

  it("cuts a preview's period at now and the period before at the same elapsed time; whole between the period's end and its send", () => {
    const mid = periodSoFar('weekly', 'Europe/Berlin', at('2026-03-25T13:05:00Z'));
    expect([mid.partial, mid.period.from, mid.period.to, mid.previous.from, mid.previous.to]).toEqual([true, '2026-03-23', '2026-03-25T13:05:00.000Z', '2026-03-16', '2026-03-18T13:05:00.000Z']);
    // Monday 07:00 local: the week just ended is whole (its report goes out at 08:00).
    const early = periodSoFar('weekly', 'Europe/Berlin', at('2026-03-30T05:00:00Z'));
    expect([early.partial, early.period.from, early.period.to, early.previous.from, early.previous.to]).toEqual([false, '2026-03-23', '2026-03-30', '2026-03-16', '2026-03-23']);
    // March 31 against February: never past February's end.
    const month = periodSoFar('monthly', 'UTC', at('2026-03-31T12:00:00Z'));
    expect([month.period.from, month.period.to, month.previous.from, month.previous.to]).toEqual(['2026-03-01', '2026-03-31T12:00:00.000Z', '2026-02-01', '2026-03-01T00:00:00.000Z']);
  });

  it('owes a report created on a Tuesday its first send on the next Monday, not the last one', () => {
    const created = at('2026-03-03T10:00:00Z'); // a Tuesday
    expect(nextSendAt('weekly', 'Europe/Berlin', created, created)).toBe('2026-03-09T07:00:00.000Z');
    expect(nextSendAt('monthly', 'America/Los_Angeles', created, created)).toBe('2026-04-01T15:00:00.000Z');
  });
});

type TestStores = Awaited<ReturnType<typeof openTestStores>>;

/** Deps of one replica over a key store. */
const mailingOf = (stores: Pick<TestStores, 'events'>, keyStore: KeyStore, smtp: SmtpCapture, staleMs = 60_000): ReportMailingDeps => ({
  reports: keyStore.reports,
  events: stores.events,
  saved: keyStore.saved,
  mailer: smtpMailer(smtp.url, 'Reports <reports@example.com>'),
  publicUrl: PUBLIC_URL,
  logger: silentLogger,
  staleMs,
});

/** A report whose schedule (and recipients) began at `since`, as if it had been saved then. */
async function reportSince(db: SqlPort, keyStore: KeyStore, projectId: string, recipients: string[], since: string, frequency: 'weekly' | 'monthly' = 'weekly') {
  const report = (await keyStore.reports.create(projectId, { frequency, recipients }))!;
  await db.query('UPDATE reports SET schedule_from = $2 WHERE id = $1', [report.id, since]);
  await db.query('UPDATE report_recipients SET added_at = $2 WHERE report_id = $1', [report.id, since]);
  return report;
}

describe('a report\'s figures (embedded stores), against the raw events', () => {
  let stores: TestStores;
  let smtp: SmtpCapture;
  let projectId: string;
  // The week reported: Monday 2026-03-23 to Sunday 2026-03-29 in Berlin (its last day is the spring-forward day).
  const NOW = at('2026-03-30T06:00:00Z');
  type Raw = { visitor: string; visit: string; event: string; t: string; url: string; referrer?: string };
  const RAW: Raw[] = [
    // Inside the week (local): Monday 00:30 CET is Sunday 23:30Z.
    { visitor: 'a', visit: 'a1', event: '$pageview', t: '2026-03-22T23:30:00Z', url: 'https://x.example/?utm_source=newsletter' },
    { visitor: 'a', visit: 'a1', event: '$pageview', t: '2026-03-22T23:32:00Z', url: 'https://x.example/pricing' },
    { visitor: 'a', visit: 'a1', event: 'signup', t: '2026-03-22T23:35:00Z', url: 'https://x.example/pricing' },
    { visitor: 'b', visit: 'b1', event: '$pageview', t: '2026-03-25T12:00:00Z', url: 'https://x.example/', referrer: 'https://www.google.com/' },
    { visitor: 'c', visit: 'c1', event: '$pageview', t: '2026-03-27T09:00:00Z', url: 'https://x.example/blog', referrer: 'https://www.google.com/' },
    { visitor: 'c', visit: 'c1', event: '$pageview', t: '2026-03-27T09:10:00Z', url: 'https://x.example/pricing' },
    // Sunday 23:30 CEST (after the change) is 21:30Z: still inside.
    { visitor: 'd', visit: 'd1', event: '$pageview', t: '2026-03-29T21:30:00Z', url: 'https://x.example/' },
    // Outside: Monday 2026-03-30 00:30 CEST (22:30Z Sunday), and Sunday 2026-03-22 23:30 CET (22:30Z).
    { visitor: 'e', visit: 'e1', event: '$pageview', t: '2026-03-29T22:30:00Z', url: 'https://x.example/late' },
    // The week before (the comparison): two visitors, one bounce each.
    { visitor: 'f', visit: 'f1', event: '$pageview', t: '2026-03-22T22:30:00Z', url: 'https://x.example/' },
    { visitor: 'g', visit: 'g1', event: '$pageview', t: '2026-03-18T10:00:00Z', url: 'https://x.example/' },
  ];

  beforeAll(async () => {
    stores = await openTestStores();
    smtp = await smtpCapture();
    const created = await stores.keyStore.createProject({ name: 'Shop', timezone: 'Europe/Berlin' });
    projectId = created.project.id;
    await stores.keyStore.saved.create(projectId, 'goal', { name: 'Signup', definition: { event: 'signup', filters: [] } });
    await stores.keyStore.saved.create(projectId, 'goal', { name: 'Never', definition: { event: 'never', filters: [] } });
    const rows = RAW.map((r) =>
      createEnricher({ projectId, ip: '203.0.113.1', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36', host: 'x.example', nowMs: at(r.t), ipHashSecret: 's' })({
        event: r.event, anonymous_id: r.visitor, session_id: r.visit, timestamp: at(r.t), url: r.url, referrer: r.referrer,
      }),
    );
    await stores.events.write(rows);
  }, 180_000);
  afterAll(async () => {
    await smtp.close();
    await stores.close();
  });

  /** The figures of [from, to) computed from RAW in plain TypeScript. */
  function expected(fromIso: string, toIso: string) {
    const rows = RAW.filter((r) => at(r.t) >= at(fromIso) && at(r.t) < at(toIso));
    const visits = new Map<string, Raw[]>();
    for (const r of rows) visits.set(r.visit, [...(visits.get(r.visit) ?? []), r]);
    const list = [...visits.values()];
    const bounces = list.filter((v) => v.length === 1 && v[0]!.event === '$pageview').length;
    const durations = list.map((v) => (Math.max(...v.map((r) => at(r.t))) - Math.min(...v.map((r) => at(r.t)))) / 1000);
    return {
      visitors: new Set(rows.map((r) => r.visitor)).size,
      visits: list.length,
      pageviews: rows.filter((r) => r.event === '$pageview').length,
      bounce_rate: list.length ? bounces / list.length : 0,
      visit_duration: list.length ? durations.reduce((a, b) => a + b, 0) / list.length : 0,
    };
  }

  it('holds each figure and its change, the top sources, pages and goals of the Berlin week, across the DST change', async () => {
    const slot = latestSlot('weekly', 'Europe/Berlin', NOW);
    const c = await reportContent({ events: stores.events, saved: stores.keyStore.saved, publicUrl: PUBLIC_URL }, { id: projectId, name: 'Shop', timezone: 'Europe/Berlin' }, { frequency: 'weekly', segment: null }, slot.period, slot.previous, NOW);
    const now = expected('2026-03-22T23:00:00Z', '2026-03-29T22:00:00Z');
    const before = expected('2026-03-15T23:00:00Z', '2026-03-22T23:00:00Z');
    expect(now).toEqual({ visitors: 4, visits: 4, pageviews: 6, bounce_rate: 0.5, visit_duration: (300 + 0 + 600 + 0) / 4 });
    for (const f of c.figures) {
      const key = f.key as keyof typeof now;
      expect([f.key, f.value, f.previous]).toEqual([f.key, expect.closeTo(now[key], 6), expect.closeTo(before[key], 6)]);
      expect(f.change).toEqual(before[key] === 0 ? null : expect.closeTo((now[key] - before[key]) / before[key], 6));
    }
    expect(c.sources).toEqual([{ name: 'google', visitors: 2 }, { name: 'direct', visitors: 1 }, { name: 'newsletter', visitors: 1 }]);
    // Pages: the $pageviews of the week by path, from RAW.
    const inWeek = RAW.filter((r) => r.event === '$pageview' && at(r.t) >= at('2026-03-22T23:00:00Z') && at(r.t) < at('2026-03-29T22:00:00Z'));
    const byPath = new Map<string, number>();
    for (const r of inWeek) byPath.set(new URL(r.url).pathname, (byPath.get(new URL(r.url).pathname) ?? 0) + 1);
    const pages = [...byPath].map(([path, pageviews]) => ({ path, pageviews })).sort((a, b) => b.pageviews - a.pageviews || (a.path < b.path ? -1 : 1));
    expect(pages).toEqual([{ path: '/', pageviews: 3 }, { path: '/pricing', pageviews: 2 }, { path: '/blog', pageviews: 1 }]);
    expect(c.pages).toEqual(pages);
    expect(c.goals).toEqual([{ name: 'Signup', conversions: 1 }]);
    expect(c.dashboardUrl).toBe(`${PUBLIC_URL}/?from=2026-03-23&to=2026-03-30&compare=1`);
    expect(c.annotations).toBeUndefined();
  });

  it('previews the current period so far against the period before cut at the same point (Wednesday 13:00 in Berlin), outside the send log', async () => {
    const wednesday = at('2026-03-25T12:00:00Z'); // 13:00 CET: visitor b's pageview at 12:00Z is in, c's Friday visit not
    const report = (await stores.keyStore.reports.create(projectId, { frequency: 'weekly', recipients: ['preview@example.com'] }))!;
    const answer = await sendReportPreview(mailingOf(stores, stores.keyStore, smtp), { id: projectId, name: 'Shop', timezone: 'Europe/Berlin' }, report.id, wednesday + 60_000);
    expect(answer?.period).toEqual({ from: '2026-03-23', to: '2026-03-25T12:01:00.000Z' });
    const [mail] = await smtp.until(1, (m) => m.to.includes('preview@example.com'));
    expect(mail!.header('subject')).toBe('[Preview] Weekly report for Shop: 2026-03-23 to 2026-03-25 13:01 (so far)');
    // Against the raw events: [Monday 00:00 local, now) and the week before as far (the same 60 h 1 min).
    const now = expected('2026-03-22T23:00:00Z', '2026-03-25T12:01:00Z');
    const before = expected('2026-03-15T23:00:00Z', '2026-03-18T12:01:00Z');
    expect([now.visitors, now.pageviews, before.visitors]).toEqual([2, 3, 1]);
    expect(mail!.decoded).toContain(`Visitors: ${now.visitors} (+${Math.round(((now.visitors - before.visitors) / before.visitors) * 100)}%)`);
    expect(mail!.decoded).toContain(`Pageviews: ${now.pageviews} (`);
    expect(mail!.decoded).toContain('compared with 2026-03-16 to 2026-03-18 13:01');
    expect(await stores.keyStore.reports.sends(report.id)).toEqual([]);
  });

  it('holds the figures to a saved segment, and covers the whole site once that segment is deleted', async () => {
    const slot = latestSlot('weekly', 'Europe/Berlin', NOW);
    const segment = (await stores.keyStore.saved.create(projectId, 'segment', { name: 'From Google', definition: { filters: [['is', 'source', ['google']]] } }))!;
    const content = () => reportContent({ events: stores.events, saved: stores.keyStore.saved }, { id: projectId, name: 'Shop', timezone: 'Europe/Berlin' }, { frequency: 'weekly', segment: segment.id }, slot.period, slot.previous, NOW);
    const held = await content();
    expect(held.segment).toEqual({ id: segment.id, name: 'From Google' });
    // b and c came from Google: 2 visitors, 2 visits, 3 pageviews.
    expect(held.figures.slice(0, 3).map((f) => f.value)).toEqual([2, 2, 3]);
    expect(held.sources).toEqual([{ name: 'google', visitors: 2 }]);
    await stores.keyStore.saved.delete(projectId, 'segment', segment.id);
    const whole = await content();
    expect([whole.segment, whole.figures[0]!.value]).toEqual([null, 4]);
  });

  it('mails it once with the key numbers in both parts, List-Unsubscribe headers (RFC 8058) and no remote image', async () => {
    const report = await reportSince(stores.keyDb, stores.keyStore, projectId, ['owner@example.com'], '2026-03-01T00:00:00Z');
    // The period's annotations from the key store (what npm start and the retention worker wire): one in the local
    // week, one just after it (Monday 00:30 in Berlin).
    await stores.keyStore.annotations.create(projectId, { at: Date.parse('2026-03-25T10:00:00Z'), text: 'Launched <pricing>', kind: 'deploy', created_by: null });
    await stores.keyStore.annotations.create(projectId, { at: Date.parse('2026-03-29T22:30:00Z'), text: 'The next week', kind: 'note', created_by: null });
    const deps = { ...mailingOf(stores, stores.keyStore, smtp), annotations: annotationsOf(stores.keyStore) };
    expect(await runScheduledReports(deps, new Date(NOW))).toEqual({ sent: 1 });
    expect(await runScheduledReports(deps, new Date(NOW + HOUR))).toEqual({ sent: 0 });
    const [mail] = await smtp.until(1, (m) => m.to.includes('owner@example.com'));
    expect(mail!.header('subject')).toBe('Weekly report for Shop: 2026-03-23 to 2026-03-29');
    const unsubscribe = mail!.header('list-unsubscribe')!;
    expect(unsubscribe).toMatch(/^<https:\/\/analytics\.example\.com\/reports\/unsubscribe\/[A-Za-z0-9_-]{43}>$/);
    expect(mail!.header('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    expect(mail!.decoded).toContain('Visitors: 4 (+100%)');
    expect(mail!.decoded).toContain('Bounce rate: 50% (-50%)');
    expect(mail!.decoded).toContain('google: 2 visitors');
    expect(mail!.decoded).toContain('Signup: 1 conversions');
    expect(mail!.decoded).toContain('Launched &lt;pricing&gt;');
    expect(mail!.decoded).not.toContain('The next week');
    expect(mail!.decoded).not.toMatch(/<img|url\(|<link|<script/i);
    expect((await stores.keyStore.reports.sends(report.id)).map((s) => [s.recipient, s.period, s.sent])).toEqual([['owner@example.com', 'weekly:2026-03-23', true]]);
  });
});

(PG ? describe : describe.skip)('exactly once per recipient and period (PostgreSQL, two replicas, kills)', () => {
  let stores: TestStores;
  let other: { db: SqlPort; keyStore: KeyStore };
  let smtp: SmtpCapture;
  let url: string;
  let schema: string;
  let projectId: string;
  let held: string[] = [];
  const holdOnce = new Set<string>();
  const NOW = at('2026-06-01T07:00:00Z'); // Monday 09:00 Berlin

  beforeAll(async () => {
    schema = `t_${randomBytes(6).toString('hex')}`;
    const admin = await createPgPort(PG!);
    await admin.exec(`CREATE SCHEMA ${schema}`);
    await admin.close();
    const u = new URL(PG!);
    u.searchParams.set('options', `-c search_path=${schema}`);
    url = u.toString();
    stores = await openTestStores({ DATABASE_URL: url });
    const db = await createPgPort(url);
    await migrateKeyStore(db);
    other = { db, keyStore: new KeyStore(db) };
    smtp = await smtpCapture({ hold: (to) => to.some((t) => holdOnce.has(t)), onHeld: (to) => void (held = to) });
    projectId = (await stores.keyStore.createProject({ name: 'Replicas', timezone: 'Europe/Berlin' })).project.id;
  }, 180_000);
  afterAll(async () => {
    await smtp.close();
    await other.db.close();
    await stores.keyDb.exec(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
    await stores.close();
  });

  const to = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}-${i}@example.com`);
  const mailsTo = (list: string[]) => smtp.received.filter((m) => m.to.some((t) => list.includes(t)));

  it('two replicas running passes at once send one mail to each recipient', async () => {
    const recipients = to('pair', 8);
    await reportSince(stores.keyDb, stores.keyStore, projectId, recipients, '2026-05-01T00:00:00Z');
    const a = mailingOf(stores, stores.keyStore, smtp);
    const b = mailingOf(stores, other.keyStore, smtp);
    const results = await Promise.all([runScheduledReports(a, new Date(NOW)), runScheduledReports(b, new Date(NOW)), runScheduledReports(a, new Date(NOW + 1000)), runScheduledReports(b, new Date(NOW + 2000))]);
    expect(results.reduce((n, r) => n + r.sent, 0)).toBe(8);
    await smtp.until(8, (m) => m.to.some((t) => recipients.includes(t)));
    expect(mailsTo(recipients).map((m) => m.to[0]).sort()).toEqual([...recipients].sort());
  });

  it('a worker killed mid-send: the others go out, the killed send is retried after the stale time with its Message-ID, none twice', async () => {
    const recipients = to('kill', 3);
    const report = await reportSince(stores.keyDb, stores.keyStore, projectId, recipients, '2026-05-01T00:00:00Z');
    holdOnce.add(recipients[1]!);
    const child = spawnReportWorker({ DATABASE_URL: url, SMTP_URL: smtp.url, PUBLIC_URL, now: NOW });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const deadline = Date.now() + 90_000;
    while (!held.includes(recipients[1]!)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the worker never reached the held send: ${stderr}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    child.kill('SIGKILL');
    await exited;
    holdOnce.clear();
    // The send log: the first sent, the second claimed and unsent, the third not reached.
    const log = await stores.keyStore.reports.sends(report.id);
    expect(log.map((s) => [s.recipient, s.sent])).toEqual([[recipients[0], true], [recipients[1], false]]);
    // Another replica's pass within the stale time sends the third and leaves the live-looking claim alone...
    expect(await runScheduledReports(mailingOf(stores, stores.keyStore, smtp, 60_000), new Date(NOW + 60_000))).toEqual({ sent: 1 });
    // ...and once the claim is stale, retries it with the same Message-ID.
    await new Promise((r) => setTimeout(r, 50));
    expect(await runScheduledReports(mailingOf(stores, other.keyStore, smtp, 10), new Date(NOW + 120_000))).toEqual({ sent: 1 });
    expect(await runScheduledReports(mailingOf(stores, other.keyStore, smtp, 10), new Date(NOW + 180_000))).toEqual({ sent: 0 });
    const mails = await smtp.until(3, (m) => m.to.some((t) => recipients.includes(t)));
    expect(mails.map((m) => m.to[0]).sort()).toEqual([...recipients].sort());
    const after = await stores.keyStore.reports.sends(report.id);
    expect(after.every((s) => s.sent)).toBe(true);
    const retried = after.find((s) => s.recipient === recipients[1])!;
    expect([retried.attempts, mails.find((m) => m.to[0] === recipients[1])!.messageId]).toEqual([2, retried.message_id]);
  }, 180_000);

  it('the window left: a worker killed after the SMTP server accepted and before the mark sends that one twice, with one Message-ID', async () => {
    const recipients = to('window', 1);
    const report = await reportSince(stores.keyDb, stores.keyStore, projectId, recipients, '2026-05-01T00:00:00Z');
    const child = spawnReportWorker({ DATABASE_URL: url, SMTP_URL: smtp.url, PUBLIC_URL, now: NOW, dieAfterAccepted: true });
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, s) => resolve(s)));
    expect(signal).toBe('SIGKILL');
    expect((await stores.keyStore.reports.sends(report.id)).map((s) => s.sent)).toEqual([false]);
    expect(await runScheduledReports(mailingOf(stores, stores.keyStore, smtp, 10), new Date(NOW + 60_000))).toEqual({ sent: 1 });
    const mails = await smtp.until(2, (m) => m.to[0] === recipients[0]);
    expect(mails).toHaveLength(2);
    expect(mails[1]!.messageId).toBe(mails[0]!.messageId);
  }, 180_000);

  it('a report due while the scheduler was down goes out when it is back, for the latest period only', async () => {
    const recipients = to('down', 2);
    const report = await reportSince(stores.keyDb, stores.keyStore, projectId, recipients, '2026-04-01T00:00:00Z');
    // Down from before the 2026-06-01 slot for three weeks: the pass on Wednesday 2026-06-24 sends the week of 06-15 once
    // (the other reports of this schema are due too: only this one's log and mail are looked at).
    const back = at('2026-06-24T12:00:00Z');
    const pass = async (ms: number) => runScheduledReports(mailingOf(stores, stores.keyStore, smtp), new Date(ms));
    await pass(back);
    await pass(back + DAY);
    expect((await stores.keyStore.reports.sends(report.id)).map((s) => [s.recipient, s.period, s.sent])).toEqual(recipients.map((r) => [r, 'weekly:2026-06-15', true]));
    await smtp.until(2, (m) => m.to.some((t) => recipients.includes(t)));
    expect(mailsTo(recipients).map((m) => m.header('subject'))).toEqual(['Weekly report for Replicas: 2026-06-15 to 2026-06-21', 'Weekly report for Replicas: 2026-06-15 to 2026-06-21']);
    // A recipient added after the slot waits for the next one.
    await stores.keyStore.reports.update(projectId, report.id, { recipients: [...recipients, 'late@example.com'] });
    await pass(back + 2 * DAY);
    expect((await stores.keyStore.reports.sends(report.id)).map((s) => s.recipient)).not.toContain('late@example.com');
  });
});
