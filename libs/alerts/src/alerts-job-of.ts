import { type Env, type Stores, mailerOf, scheduledJobs } from '@analytics/runtime';
import type { Logger } from '@analytics/service-kit';
import { type ScheduledJob, alertsJob } from './alerts-job';
import { insightsThrough } from './evaluate';

/**
 * The alerts job of this process's stores and settings (docs/alerts-and-reports.md, "Alerts"): every
 * ALERT_EVAL_INTERVAL_S, through the insights capability over the event store and the key store's saved goals, mail
 * through SMTP_URL, links to PUBLIC_URL, the address guard unless ALERTS_ALLOW_PRIVATE_URLS. For the scheduler.
 */
export function alertsJobOf(
  stores: Pick<Stores, 'keyStore' | 'events'>,
  env: Pick<Env, 'ALERT_EVAL_INTERVAL_S' | 'ALERTS_ALLOW_PRIVATE_URLS' | 'PUBLIC_URL' | 'SMTP_URL' | 'MAIL_FROM'>,
  logger: Logger,
): ScheduledJob {
  return alertsJob({
    alerts: stores.keyStore.alerts,
    projects: stores.keyStore,
    insights: insightsThrough(stores.events, stores.keyStore.saved),
    channels: { mailer: mailerOf(env, logger), allowPrivate: env.ALERTS_ALLOW_PRIVATE_URLS },
    everyMs: env.ALERT_EVAL_INTERVAL_S * 1000,
    publicUrl: env.PUBLIC_URL,
    logger,
  });
}

/**
 * Every job the deployment's active scheduler runs (npm start, the retention worker's served mode): the runtime's
 * (scheduled reports) and the alerts' evaluation, which lives here because it depends on the runtime.
 */
export const deploymentJobs = (stores: Stores, env: Env, logger: Logger): ScheduledJob[] => [...scheduledJobs(stores, env, logger), alertsJobOf(stores, env, logger)];
