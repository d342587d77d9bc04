import type { Router } from 'express';
import { type Accounts, sessionGuard } from '@analytics/accounts';
import type { KeyStore } from '@analytics/auth';
import { ApiError, type Caller, routes } from '@analytics/schema';
import { defineRoute, routerOf } from '@analytics/service-kit';
import { auditProjectChange, creatorOf, found } from './saved.routes';

export interface AnnotationsRouterDeps {
  keyStore: KeyStore;
  accounts: Accounts;
  adminToken: string;
}

/**
 * /admin/projects/:id/annotations (issue 48, docs/alerts-and-reports.md): any member lists them (the dashboard with a
 * user session), an editor (or ADMIN_TOKEN) adds and deletes any of them; the role guard answers a viewer 403
 * insufficient_role and someone of another organization 404 not_found before anything is read. `created_by` is the
 * member's user id, null for the operator.
 */
export function createAnnotationsRouter(deps: AnnotationsRouterDeps): Router {
  const annotations = deps.keyStore.annotations;
  const project = async (id: string) => found(await deps.keyStore.getProject(id));
  // Who added or deleted which annotation, in the project's organization's audit log (best effort).
  const audited = (change: 'created' | 'deleted', caller: Caller, projectId: string, annotation: { id: string; kind: string; at: string }) =>
    auditProjectChange(deps.accounts, caller, projectId, `annotation.${change}`, { type: 'annotation', id: annotation.id, name: annotation.kind }, { at: annotation.at });
  return routerOf({ session: sessionGuard(deps.accounts, deps.adminToken) }, [
    defineRoute(routes.listProjectAnnotations, async ({ params, query }) => {
      await project(params.id);
      return annotations.list(params.id, query);
    }),
    defineRoute(routes.createProjectAnnotation, async ({ body, params }, caller) => {
      const annotation = found(await annotations.create(params.id, { at: body.at, text: body.text, kind: body.kind, created_by: creatorOf(caller) }));
      await audited('created', caller, params.id, annotation);
      return { annotation };
    }),
    defineRoute(routes.deleteProjectAnnotation, async ({ params }, caller) => {
      const stored = found(await annotations.get(params.id, params.annotation_id));
      if (!(await annotations.delete(params.id, params.annotation_id))) throw new ApiError('not_found');
      await audited('deleted', caller, params.id, stored);
    }),
  ]);
}
