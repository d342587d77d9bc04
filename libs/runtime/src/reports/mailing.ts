import { randomUUID } from 'node:crypto';
import type { Mailer } from '@analytics/accounts';
import { type DueReportRecord, type ReportStore, sendKey } from '@analytics/auth';
import type { Logger } from '@analytics/service-kit';
import { ApiError } from '@analytics/schema';
import { type ReportContent, type ReportContentDeps, reportContent } from './content';
import { reportHtml, reportSubject, reportText } from './render';
import { latestSlot, periodSoFar } from './schedule';

/** What mails reports: the stores, the mailer and PUBLIC_URL (the unsubscribe links and the dashboard link). */
export interface ReportMailingDeps extends ReportContentDeps {
  reports: ReportStore;
  mailer: Mailer;
  publicUrl: string;
  logger: Logger;
  /** A claim unsent for this long is a dead worker's: retried, with its Message-ID (REPORTS_CLAIM_STALE_S). */
  staleMs: number;
  /** Called after the SMTP server accepted a scheduled mail and before it is marked sent (tests kill a process here). */
  onAccepted?: (to: string) => Promise<void> | void;
}

/** The address a recipient's unsubscribe token is used at (GET shows a confirm page; POST unsubscribes, RFC 8058). */
export const unsubscribeUrlOf = (publicUrl: string, token: string) => `${publicUrl.replace(/\/+$/, '')}/reports/unsubscribe/${token}`;

const messageIdOf = (publicUrl: string) => `<report-${randomUUID()}@${new URL(publicUrl).hostname}>`;

/** One report mail to one recipient, with a new unsubscribe token of theirs. */
async function mailTo(deps: ReportMailingDeps, reportId: string, to: string, content: ReportContent, options: { messageId: string; preview: boolean }): Promise<void> {
  const url = unsubscribeUrlOf(deps.publicUrl, await deps.reports.mintUnsubscribeToken(reportId, to));
  await deps.mailer.send({
    to,
    subject: reportSubject(content, options.preview),
    text: reportText(content, url),
    html: reportHtml(content, url),
    messageId: options.messageId,
    headers: { 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  });
}

/**
 * One pass of the scheduled reports (the scheduler's `reports` job): each report owes the latest send slot at or
 * before `now` (Monday or the 1st, 08:00 in its project's zone) to each recipient added before that slot, when the
 * slot is not before the report's schedule began. A slot missed while the scheduler was down is sent when it runs
 * again; an older one never is (only the latest period). Each send is claimed in the send log first (once per report,
 * recipient and period, whichever replica), then mailed, then marked sent. A failure is logged: an unsent claim is
 * retried after `staleMs` with the same Message-ID.
 */
export async function runScheduledReports(deps: ReportMailingDeps, now: Date): Promise<{ sent: number }> {
  let sent = 0;
  // The sends already made of every period a pass can owe (the latest slot is at most a month back, and its sends are
  // claimed after it): skipped without a claim. A send not in it is claimed, which settles any race.
  const done = await deps.reports.sentSince(now.getTime() - 35 * 86_400_000);
  for (const report of await deps.reports.all()) {
    try {
      sent += await sendDue(deps, report, now.getTime(), done);
    } catch (e) {
      deps.logger.error({ err: e, report: report.id, project: report.project.id }, 'scheduled report failed; retried at a later pass');
    }
  }
  return { sent };
}

async function sendDue(deps: ReportMailingDeps, report: DueReportRecord, now: number, done: Set<string>): Promise<number> {
  const slot = latestSlot(report.frequency, report.project.timezone, now);
  if (slot.at < Date.parse(report.schedule_from)) return 0;
  let content: ReportContent | undefined;
  let sent = 0;
  for (const recipient of report.recipients) {
    if (Date.parse(recipient.added_at) > slot.at || done.has(sendKey(report.id, recipient.email, slot.period.key))) continue;
    const claim = await deps.reports.claim(report.id, recipient.email, slot.period.key, deps.staleMs, () => messageIdOf(deps.publicUrl));
    if (!claim.send) continue;
    content ??= await reportContent(deps, report.project, report, slot.period, slot.previous, now);
    await mailTo(deps, report.id, recipient.email, content, { messageId: claim.messageId, preview: false });
    await deps.onAccepted?.(recipient.email);
    await deps.reports.markSent(report.id, recipient.email, slot.period.key);
    sent += 1;
  }
  return sent;
}

/**
 * POST /admin/projects/{id}/reports/{report_id}/send: the current period's report (the one the next scheduled send
 * covers, as far as it has gone, against the period before cut at the same point: periodSoFar) to every recipient now,
 * marked [Preview], outside the send log: it does not count as the period's send, which still goes out on schedule.
 * Undefined when the project has no such report.
 */
export async function sendReportPreview(deps: ReportMailingDeps, project: { id: string; name: string; timezone?: string }, reportId: string, now: number) {
  const report = await deps.reports.get(project.id, reportId);
  if (!report) return undefined;
  if (report.recipients.length === 0) throw new ApiError('invalid_payload', { details: { recipients: 'the report has no recipients left (they unsubscribed): add one first' } });
  const { period, previous } = periodSoFar(report.frequency, project.timezone ?? 'UTC', now);
  const content = await reportContent(deps, project, report, period, previous, now);
  for (const to of report.recipients) await mailTo(deps, report.id, to, content, { messageId: messageIdOf(deps.publicUrl), preview: true });
  return { ok: true as const, period: content.period, recipients: report.recipients.length };
}

/** What POST .../reports/{report_id}/send calls: a preview mailer, or why this process has none (503 not_ready). */
export type ReportPreview =
  | { send(project: { id: string; name: string; timezone?: string }, reportId: string, now: number): Promise<{ ok: true; period: { from: string; to: string }; recipients: number } | undefined> }
  | { missing: string };

/** The preview of a process whose reports' mailing is set up (or why it is not). */
export const reportPreviewOf = (mailing: ReportMailingDeps | { missing: string }): ReportPreview =>
  'missing' in mailing ? mailing : { send: (project, reportId, now) => sendReportPreview(mailing, project, reportId, now) };
