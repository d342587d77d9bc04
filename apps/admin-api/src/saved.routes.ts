import type { Router } from 'express';
import { type Accounts, actorOf, sessionGuard } from '@analytics/accounts';
import type { KeyStore, SavedRecord } from '@analytics/auth';
import { ApiError, type AuditAction, type AuditTarget, type Caller, type SavedKind, parseOrThrow, routes, savedAnswer, savedDefinitionSchemas } from '@analytics/schema';
import { type RouteDefinition, defineRoute, routerOf } from '@analytics/service-kit';

export interface SavedRouterDeps {
  keyStore: KeyStore;
  accounts: Accounts;
  adminToken: string;
}

/** Each kind's routes, by the kind (libs/schema api-routes.ts) and its answers' keys. */
const KINDS = {
  goal: { list: routes.listGoals, create: routes.createGoal, update: routes.updateGoal, remove: routes.deleteGoal, one: 'goal', many: 'goals', idParam: 'goal_id' },
  funnel: { list: routes.listFunnels, create: routes.createFunnel, update: routes.updateFunnel, remove: routes.deleteFunnel, one: 'funnel', many: 'funnels', idParam: 'funnel_id' },
  segment: { list: routes.listSegments, create: routes.createSegment, update: routes.updateSegment, remove: routes.deleteSegment, one: 'segment', many: 'segments', idParam: 'segment_id' },
} as const;

const answer = (record: SavedRecord) => savedAnswer(record) as never;

/**
 * A PATCH's fields over the stored definition (null removes an optional field: a goal's event or path), checked as a
 * whole by the kind's schema (what a create checks): 400 invalid_payload naming the field otherwise.
 */
function patched(kind: SavedKind, stored: Record<string, unknown>, body: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(body)) {
    if (key === 'name') continue;
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return parseOrThrow(savedDefinitionSchemas[kind], merged) as unknown as Record<string, unknown>;
}

/** A value a route found, or its 404 not_found. */
export function found<T>(value: T | null | undefined): T {
  if (value === null || value === undefined) throw new ApiError('not_found');
  return value;
}

/** Who made a definition, an annotation, an alert or a report: the member's user id, null for the operator (ADMIN_TOKEN). */
export const creatorOf = (caller: Caller): string | null => (caller.kind === 'user' ? caller.user.id : null);

/**
 * A change to something a project holds (a saved definition, an annotation, an alert, a report) in the project's
 * organization's audit log, `details.project_id` naming the project.
 */
export const auditProjectChange = (accounts: Accounts, caller: Caller, projectId: string, action: AuditAction, target: AuditTarget, details: Record<string, unknown> = {}) =>
  accounts.audit.record({ orgOfProject: projectId }, { action, actor: actorOf(caller), target, details: { project_id: projectId, ...details } });

/**
 * /admin/projects/:id/goals, funnels and segments (docs/saved-and-shared.md): any member lists them, an editor (or
 * ADMIN_TOKEN) saves, changes and deletes them; the role guard answers a viewer 403 insufficient_role and someone of
 * another organization 404 not_found before anything is read.
 */
export function createSavedRouter(deps: SavedRouterDeps): Router {
  const saved = deps.keyStore.saved;
  const project = async (id: string) => found(await deps.keyStore.getProject(id));
  const creator = creatorOf;
  // Who saved, changed or deleted which definition, in the project's organization's audit log (best effort).
  const audited = (kind: SavedKind, change: 'created' | 'updated' | 'deleted', caller: Caller, projectId: string, record: { id: string; name: string }, details: Record<string, unknown> = {}) =>
    auditProjectChange(deps.accounts, caller, projectId, `${kind}.${change}`, { type: kind, id: record.id, name: record.name }, details);
  const definitions: RouteDefinition[] = (Object.keys(KINDS) as SavedKind[]).flatMap((kind) => {
    const k = KINDS[kind];
    return [
      defineRoute(k.list, async ({ params }) => {
        await project(params.id);
        return { [k.many]: (await saved.list(params.id, kind)).map(answer) } as never;
      }),
      defineRoute(k.create, async ({ body, params }, caller) => {
        const record = found(await saved.create(params.id, kind, { name: body.name, definition: body.definition as unknown as Record<string, unknown>, created_by: creator(caller) }));
        await audited(kind, 'created', caller, params.id, record);
        return { [k.one]: answer(record) } as never;
      }),
      defineRoute(k.update, async ({ body, params }, caller) => {
        const id = (params as Record<string, string>)[k.idParam]!;
        const stored = found(await saved.get(params.id, kind, id));
        const patch = body as Record<string, unknown>;
        const definition = Object.keys(patch).some((key) => key !== 'name') ? patched(kind, stored.definition, patch) : undefined;
        const record = found(await saved.update(params.id, kind, id, { name: patch.name as string | undefined, definition }));
        await audited(kind, 'updated', caller, params.id, record, { changed: Object.keys(patch).sort() });
        return { [k.one]: answer(record) } as never;
      }),
      defineRoute(k.remove, async ({ params }, caller) => {
        const id = (params as Record<string, string>)[k.idParam]!;
        const stored = found(await saved.get(params.id, kind, id));
        if (!(await saved.delete(params.id, kind, id))) throw new ApiError('not_found');
        await audited(kind, 'deleted', caller, params.id, stored);
      }),
    ];
  });
  return routerOf({ session: sessionGuard(deps.accounts, deps.adminToken) }, definitions);
}
