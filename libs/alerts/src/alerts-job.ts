import type { AlertRecord, AlertStore } from '@analytics/auth';
import type { ScheduledJob } from '@analytics/runtime';
import { ALERT_WINDOW_MS, type AlertDefinition } from '@analytics/schema';
import { type ChannelOptions, channelOf } from './channels';
import { AlertSender, RETRY_FOR_MS } from './deliveries';
import { type AlertProject, type Contributor, type InsightsRead, contributorsOf, evaluate } from './evaluate';
import { type AlertFacts, channelMessages, dashboardUrlOf } from './messages';

/** A job of the scheduler (libs/runtime scheduler.ts): run every `everyMs` with its clock. */
export type { ScheduledJob };

interface Log {
  warn(obj: object, msg: string): void;
}

export interface AlertsJobDeps {
  /** The key store's alerts (keyStore.alerts). */
  alerts: AlertStore;
  /** The projects (the key store): an alert reads in its project's time zone and names it. */
  projects: { getProject(id: string): Promise<AlertProject | null | undefined> };
  /** The insights capability (insightsThrough(eventStore, keyStore.saved)). */
  insights: InsightsRead;
  /** Mail, and whether private addresses may be reached (ALERTS_ALLOW_PRIVATE_URLS). */
  channels: ChannelOptions;
  /** ALERT_EVAL_INTERVAL_S x 1000. */
  everyMs: number;
  /** PUBLIC_URL: the messages link to the dashboard. */
  publicUrl?: string;
  logger?: Log;
}

/** The facts of a message of `alert` at the window ending at `point`. */
export function factsOf(alert: AlertRecord, project: AlertProject, kind: 'fired' | 'recovered' | 'test', point: number, publicUrl: string | undefined, measured?: { value: number; expected: number | null; threshold: number | null; contributors: Contributor[] }): AlertFacts {
  const def: AlertDefinition = alert.definition;
  return {
    alert: { id: alert.id, name: alert.name },
    project: { id: project.id, name: project.name },
    definition: def,
    kind,
    value: measured?.value ?? null,
    expected: measured?.expected ?? null,
    threshold: measured?.threshold ?? null,
    at: new Date(point).toISOString(),
    contributors: measured?.contributors ?? [],
    dashboardUrl: dashboardUrlOf(publicUrl, point - ALERT_WINDOW_MS[def.window], point),
  };
}

/**
 * The alerts job (docs/alerts-and-reports.md, "Alerts"): each run evaluates every alert on the window ending at the
 * last complete evaluation point (`now` floored to `everyMs`; a point already evaluated is skipped, so a restart or a
 * second run does not evaluate twice), queues one "fired" message per channel when the condition starts to hold and
 * one "recovered" when it stops (the state is stored on the alert: nothing in between), then works through the
 * deliveries due (retries included).
 */
export function alertsJob(deps: AlertsJobDeps): ScheduledJob {
  const sender = new AlertSender(deps.alerts, deps.channels, deps.logger);
  const evaluateOne = async (alert: AlertRecord, point: number, now: Date) => {
    const project = await deps.projects.getProject(alert.project_id);
    if (!project) return;
    const { value, verdict } = await evaluate(deps.insights, project, alert.definition, point, alert.state === 'firing', now.getTime());
    const to = verdict.holds ? 'firing' : 'ok';
    let deliveries: Array<{ channel: ReturnType<typeof channelOf>; kind: 'fired' | 'recovered'; message: Record<string, unknown> }> = [];
    if (to !== alert.state) {
      const kind = to === 'firing' ? 'fired' : 'recovered';
      // The contributors are worth a few reads only when a message goes out; a failed read leaves them out, not the message.
      const found = await contributorsOf(deps.insights, project, alert.definition, point, value, now.getTime()).catch((e: unknown) => {
        deps.logger?.warn({ alert_id: alert.id, err: (e as Error).message }, 'alert contributors not read');
        return { contributors: [], reference: null };
      });
      const expected = verdict.expected ?? found.reference;
      const facts = factsOf(alert, project, kind, point, deps.publicUrl, { value, expected, threshold: verdict.threshold, contributors: found.contributors });
      deliveries = channelMessages(alert.channels, facts).map((message) => ({ channel: channelOf(message), kind, message: message as unknown as Record<string, unknown> }));
    }
    await deps.alerts.evaluated(alert, { from: alert.state, to, point: new Date(point), value }, deliveries, now, new Date(now.getTime() + RETRY_FOR_MS));
  };
  return {
    name: 'alerts',
    everyMs: deps.everyMs,
    async run(now: Date) {
      const point = Math.floor(now.getTime() / deps.everyMs) * deps.everyMs;
      for (const alert of await deps.alerts.all()) {
        if (alert.last_evaluated_at !== null && new Date(alert.last_evaluated_at).getTime() >= point) continue;
        // One alert's failure (a deleted saved goal, a read refused) does not stop the others.
        await evaluateOne(alert, point, now).catch((e: unknown) => deps.logger?.warn({ alert_id: alert.id, err: (e as Error).message }, 'alert not evaluated'));
      }
      await sender.deliverDue(now);
    },
  };
}
