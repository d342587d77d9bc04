import type { Logger } from '@analytics/service-kit';
import { mailerOf } from './accounts';
import type { Env } from './config';
import { type AnnotationsOf, type ReportMailingDeps, runScheduledReports } from './reports';
import type { ScheduledJob } from './scheduler';
import type { Stores } from './stores';

/** What the reports need beside the stores: mail (SMTP_URL, MAIL_FROM) and PUBLIC_URL (the links in them). */
export type ReportMailSettings = Pick<Env, 'SMTP_URL' | 'MAIL_FROM' | 'PUBLIC_URL' | 'REPORTS_CLAIM_STALE_S'>;

/** The period's annotations from the key store (migration 013), as a report lists them: oldest first, at most the store's list cap. */
export const annotationsOf =
  (keyStore: Pick<Stores['keyStore'], 'annotations'>): AnnotationsOf =>
  async (projectId, from, to) =>
    (await keyStore.annotations.list(projectId, { from: Date.parse(from), to: Date.parse(to) })).annotations.map(({ at, text, kind }) => ({ at, text, kind }));

/**
 * The reports' mailing over opened stores, or why there is none: SMTP_URL, MAIL_FROM and PUBLIC_URL are all needed
 * (the unsubscribe link every report carries is an absolute URL).
 */
export function reportMailingOf(
  stores: Pick<Stores, 'keyStore' | 'events'>,
  env: ReportMailSettings,
  logger: Logger,
  annotations?: AnnotationsOf,
): ReportMailingDeps | { missing: string } {
  const missing = (['SMTP_URL', 'MAIL_FROM', 'PUBLIC_URL'] as const).filter((k) => !env[k]);
  if (missing.length > 0) return { missing: missing.join(', ') };
  return {
    reports: stores.keyStore.reports,
    events: stores.events,
    saved: stores.keyStore.saved,
    annotations: annotations ?? annotationsOf(stores.keyStore),
    mailer: mailerOf(env, logger)!,
    publicUrl: env.PUBLIC_URL!,
    logger,
    staleMs: env.REPORTS_CLAIM_STALE_S * 1000,
  };
}

/**
 * The deployment's scheduled jobs, run by the active scheduler (`npm start` in-process, the retention worker's served
 * mode): the scheduled email reports (every REPORTS_CHECK_INTERVAL_S; off, with a warning, without SMTP_URL, MAIL_FROM
 * and PUBLIC_URL). The alerts' evaluation (libs/alerts alertsJobOf, which depends on this library) is added beside
 * these by the apps that run the scheduler.
 */
export function scheduledJobs(stores: Stores, env: Env, logger: Logger, options: { annotations?: AnnotationsOf } = {}): ScheduledJob[] {
  const jobs: ScheduledJob[] = [];
  const mailing = reportMailingOf(stores, env, logger, options.annotations);
  if ('missing' in mailing) logger.info(`scheduled reports are off: ${mailing.missing} not set (docs/alerts-and-reports.md)`);
  else jobs.push({ name: 'reports', everyMs: env.REPORTS_CHECK_INTERVAL_S * 1000, run: async (now) => void (await runScheduledReports(mailing, now)) });
  return jobs;
}
