import type { Router } from 'express';
import { type Accounts, sessionGuard } from '@analytics/accounts';
import type { KeyStore, ReportRecord } from '@analytics/auth';
import { type ReportPreview, nextSendAt, unsubscribePageHtml } from '@analytics/runtime';
import { ANSWERED, defineRoute, routerOf } from '@analytics/service-kit';
import { ApiError, type Caller, type ReportAnswer, routes } from '@analytics/schema';
import { auditProjectChange, creatorOf, found } from './saved.routes';

export interface ReportsRouterDeps {
  keyStore: KeyStore;
  accounts: Accounts;
  adminToken: string;
  /** Unset: the route answers 503 not_ready (admin-api alone without the event store or mail). */
  reportPreview?: ReportPreview;
  clock?: () => number;
}

/**
 * /admin/projects/:id/reports (docs/alerts-and-reports.md "Scheduled reports"): a project's admin (or ADMIN_TOKEN)
 * lists, schedules, changes, deletes and previews its email reports; the role guard answers an editor or viewer 403
 * insufficient_role and someone of another organization 404 before anything is read. /reports/unsubscribe/{token}:
 * the link of each mail, without signing in.
 */
export function createReportsRouter(deps: ReportsRouterDeps): Router {
  const reports = deps.keyStore.reports;
  const now = deps.clock ?? Date.now;
  const project = async (id: string) => found(await deps.keyStore.getProject(id));
  const answer = (r: ReportRecord, timezone: string): ReportAnswer => ({
    id: r.id,
    project_id: r.project_id,
    frequency: r.frequency,
    recipients: r.recipients,
    segment: r.segment,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
    next_send_at: nextSendAt(r.frequency, timezone, Date.parse(r.schedule_from), now()),
    last_sent_at: r.last_sent_at,
  });
  // A segment must be one of the project's saved segments when the report is saved (a later deletion: the report
  // covers the whole site and says so).
  const checkSegment = async (projectId: string, segment: string | null | undefined) => {
    if (segment && !(await deps.keyStore.saved.get(projectId, 'segment', segment))) {
      throw new ApiError('invalid_payload', { details: { segment: `no saved segment ${segment} in this project (GET /admin/projects/${projectId}/segments)` } });
    }
  };
  // Who scheduled, changed or deleted which report, in the project's organization's audit log (as alerts and saved
  // definitions are); a report has no name, so its target is named by its frequency. Recipients are not written.
  const audited = (change: 'created' | 'updated' | 'deleted', caller: Caller, projectId: string, record: { id: string; frequency: string }, details: Record<string, unknown> = {}) =>
    auditProjectChange(deps.accounts, caller, projectId, `report.${change}`, { type: 'report', id: record.id, name: `${record.frequency} report` }, details);
  const html = (res: Parameters<Parameters<typeof defineRoute>[1]>[2]['res'], page: string) => {
    res.status(200).type('html').set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'X-Robots-Tag': 'noindex' }).send(page);
    return ANSWERED;
  };
  return routerOf({ session: sessionGuard(deps.accounts, deps.adminToken) }, [
    defineRoute(routes.listReports, async ({ params }) => {
      const p = await project(params.id);
      return { reports: (await reports.list(p.id)).map((r) => answer(r, p.timezone ?? 'UTC')) };
    }),
    defineRoute(routes.createReport, async ({ body, params }, caller) => {
      const p = await project(params.id);
      await checkSegment(p.id, body.segment);
      const record = found(await reports.create(p.id, { frequency: body.frequency, recipients: body.recipients, segment: body.segment ?? null, created_by: creatorOf(caller) }));
      await audited('created', caller, p.id, record);
      return { report: answer(record, p.timezone ?? 'UTC') };
    }),
    defineRoute(routes.getReport, async ({ params }) => {
      const p = await project(params.id);
      return { report: answer(found(await reports.get(p.id, params.report_id)), p.timezone ?? 'UTC') };
    }),
    defineRoute(routes.updateReport, async ({ body, params }, caller) => {
      const p = await project(params.id);
      found(await reports.get(p.id, params.report_id));
      await checkSegment(p.id, body.segment);
      const record = found(await reports.update(p.id, params.report_id, { frequency: body.frequency, recipients: body.recipients, segment: body.segment }));
      await audited('updated', caller, p.id, record, { changed: Object.keys(body).sort() });
      return { report: answer(record, p.timezone ?? 'UTC') };
    }),
    defineRoute(routes.deleteReport, async ({ params }, caller) => {
      await project(params.id);
      const stored = found(await reports.get(params.id, params.report_id));
      if (!(await reports.delete(params.id, params.report_id))) throw new ApiError('not_found');
      await audited('deleted', caller, params.id, stored);
    }),
    defineRoute(routes.sendReport, async ({ params }) => {
      const p = await project(params.id);
      found(await reports.get(p.id, params.report_id));
      const preview = deps.reportPreview;
      if (!preview || 'missing' in preview) {
        throw new ApiError('not_ready', { details: { message: `report mail needs ${preview?.missing ?? 'the event store (CLICKHOUSE_URL)'} in this process (docs/alerts-and-reports.md)` } });
      }
      return found(await preview.send(p, params.report_id, now()));
    }),
    defineRoute(routes.reportUnsubscribePage, async ({ params }, _auth, { res }) => {
      const target = found(await reports.unsubscribeTarget(params.token));
      return html(res, unsubscribePageHtml(target.subscribed ? 'confirm' : 'done', target));
    }),
    defineRoute(routes.reportUnsubscribe, async ({ params }, _auth, { res }) => {
      const target = found(await reports.unsubscribe(params.token));
      return html(res, unsubscribePageHtml('done', target));
    }),
  ]);
}
