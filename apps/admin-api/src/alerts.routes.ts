import type { Router } from 'express';
import { sessionGuard } from '@analytics/accounts';
import type { AlertRecord } from '@analytics/auth';
import { AlertSender, type ChannelOptions, OutboundRefused, RETRY_FOR_MS, UnresolvedHost, channelMessages, channelOf, checkedAddress, factsOf } from '@analytics/alerts';
import { type AlertChannel, ApiError, type Caller, alertInputSchema, alertPatched, detailsOf, parseOrThrow, redactedChannel, routes } from '@analytics/schema';
import { defineRoute, routerOf } from '@analytics/service-kit';
import type { AdminRouterDeps } from './admin.routes';
import { auditProjectChange, creatorOf, found } from './saved.routes';

/** The alerts' outbound settings: mail (SMTP_URL) and ALERTS_ALLOW_PRIVATE_URLS. Unset: no mail, the guard on. */
export type AlertsRouterDeps = Pick<AdminRouterDeps, 'keyStore' | 'accounts' | 'adminToken' | 'publicUrl'> & { alertChannels?: ChannelOptions };

/** An alert as answered: its definition's fields, its channels without secrets, its state. */
const answer = (a: AlertRecord) =>
  ({
    id: a.id,
    name: a.name,
    ...a.definition,
    channels: a.channels.map(redactedChannel),
    state: a.state,
    state_since: a.state_since,
    last_evaluated_at: a.last_evaluated_at,
    last_value: a.last_value,
    created_at: a.created_at,
    updated_at: a.updated_at,
  }) as never;

const deliveryAnswer = (d: { created_at: string; channel: string; kind: string; status: string; attempts: number; last_error: string | null }) => ({
  at: d.created_at,
  channel: d.channel,
  kind: d.kind,
  status: d.status,
  attempts: d.attempts,
  ...(d.last_error ? { error: d.last_error } : {}),
});

/**
 * The address guard at save time: every webhook and Slack URL whose literal address, or a name that resolves (now)
 * to one, is loopback, private, link-local, unique-local or unspecified is 400 invalid_payload naming the channel's
 * field. A name that does not resolve now passes (checked again at each send).
 */
async function guardChannels(channels: readonly AlertChannel[], options: ChannelOptions): Promise<void> {
  const issues: Array<{ path: Array<string | number>; message: string }> = [];
  await Promise.all(
    channels.map(async (c, i) => {
      const target = 'webhook' in c ? { url: c.webhook.url, path: ['channels', i, 'webhook', 'url'] } : 'slack' in c ? { url: c.slack.webhook_url, path: ['channels', i, 'slack', 'webhook_url'] } : undefined;
      if (!target) return;
      try {
        await checkedAddress(target.url, options);
      } catch (e) {
        if (e instanceof UnresolvedHost) return;
        if (e instanceof OutboundRefused) issues.push({ path: target.path, message: e.message });
        else throw e;
      }
    }),
  );
  if (issues.length > 0) throw new ApiError('invalid_payload', { details: detailsOf(issues) });
}

/**
 * /admin/projects/:id/alerts (docs/alerts-and-reports.md, "Alerts"): an admin of the project's organization (or
 * ADMIN_TOKEN) lists, creates, changes, deletes and tests alerts and reads their deliveries; the role guard answers
 * an editor or viewer 403 insufficient_role and someone of another organization 404 before anything is read.
 */
export function createAlertsRouter(deps: AlertsRouterDeps): Router {
  const alerts = deps.keyStore.alerts;
  const channelOptions: ChannelOptions = deps.alertChannels ?? { allowPrivate: false };
  const sender = new AlertSender(alerts, channelOptions);
  const project = async (id: string) => found(await deps.keyStore.getProject(id));
  const audited = (change: 'created' | 'updated' | 'deleted', caller: Caller, projectId: string, record: { id: string; name: string }, details: Record<string, unknown> = {}) =>
    auditProjectChange(deps.accounts, caller, projectId, `alert.${change}`, { type: 'alert', id: record.id, name: record.name }, details);
  const alertId = (params: unknown) => (params as { alert_id: string }).alert_id;

  return routerOf({ session: sessionGuard(deps.accounts, deps.adminToken) }, [
    defineRoute(routes.listAlerts, async ({ params }) => {
      await project(params.id);
      return { alerts: (await alerts.list(params.id)).map(answer) };
    }),
    defineRoute(routes.createAlert, async ({ body, params }, caller) => {
      await guardChannels(body.channels, channelOptions);
      const record = found(await alerts.create(params.id, { ...body, created_by: creatorOf(caller) }));
      await audited('created', caller, params.id, record);
      return { alert: answer(record) };
    }),
    defineRoute(routes.getAlert, async ({ params }) => ({ alert: answer(found(await alerts.get(params.id, alertId(params)))) })),
    defineRoute(routes.updateAlert, async ({ body, params }, caller) => {
      const stored = found(await alerts.get(params.id, alertId(params)));
      const next = parseOrThrow(alertInputSchema, alertPatched(stored, body as Record<string, unknown>));
      if (Object.hasOwn(body, 'channels')) await guardChannels(next.channels, channelOptions);
      const record = found(await alerts.update(params.id, stored.id, next));
      await audited('updated', caller, params.id, record, { changed: Object.keys(body).sort() });
      return { alert: answer(record) };
    }),
    defineRoute(routes.deleteAlert, async ({ params }, caller) => {
      const stored = found(await alerts.get(params.id, alertId(params)));
      if (!(await alerts.delete(params.id, stored.id))) throw new ApiError('not_found');
      await audited('deleted', caller, params.id, stored);
    }),
    defineRoute(routes.alertDeliveries, async ({ params }) => {
      const stored = found(await alerts.get(params.id, alertId(params)));
      return { deliveries: (await alerts.deliveries(params.id, stored.id)).map(deliveryAnswer) as never };
    }),
    defineRoute(routes.testAlert, async ({ params }) => {
      const stored = found(await alerts.get(params.id, alertId(params)));
      const now = new Date();
      const facts = factsOf(stored, await project(params.id), 'test', now.getTime(), deps.publicUrl);
      const queued = await alerts.enqueue(stored, channelMessages(stored.channels, facts).map((m) => ({ channel: channelOf(m), kind: 'test' as const, message: m as unknown as Record<string, unknown> })), now, new Date(now.getTime() + RETRY_FOR_MS));
      // Sent now, off the request: a slow receiver (5 s at most) does not hold the answer; failures retry through the job.
      void sender.deliverDue(now, queued.map((d) => d.id)).catch(() => {});
      return { deliveries: queued.map(deliveryAnswer) as never };
    }),
  ]);
}
