import type { ChannelOptions } from '@analytics/alerts';
import type { Router } from 'express';
import type { ReportPreview } from '@analytics/runtime';
import { type Accounts, actorOf, sessionGuard } from '@analytics/accounts';
import { type KeyStore, extractPrefix, parseOriginEntry } from '@analytics/auth';
import { ApiError, type Caller, type ImportResponse, type ImportedEvent, allowedOriginsInputSchema, createProjectInputSchema, patchProjectInputSchema, routes } from '@analytics/schema';
import { defineRoute, presentsAdminToken, routerOf } from '@analytics/service-kit';

export interface AdminRouterDeps {
  keyStore: KeyStore;
  /** Users, sessions, organizations and roles (libs/accounts): the role guard of every /admin and /auth route. */
  accounts: Accounts;
  adminToken: string;
  /** PUBLIC_URL: the base of invitation and reset links (unset: the request's validated Host). */
  publicUrl?: string;
  /** Called after a key is revoked or a project changed, so caches (this instance's, and others' via Redis) drop it. */
  onKeyRevoked?: (prefix: string) => void | Promise<void>;
  onProjectChanged?: (projectId: string) => void | Promise<void>;
  /**
   * Called with a new key's prefix before its 201: the other instances (via Redis) add it to their known prefixes, so
   * the first requests with it are looked up rather than refused under the unknown-prefix lookup budget.
   */
  onKeyMinted?: (prefix: string) => void | Promise<void>;
  /**
   * A process with the event store (npm start) submits a deleted project's event deletion at once; without one
   * (admin-api alone) it waits in project_deletions for the retention worker's next run.
   */
  deleteProjectEvents?: (projectId: string) => Promise<void>;
  /**
   * POST /admin/projects/{id}/import: writes rows of our own export as stored (libs/ingest importEvents). A process
   * with the event store has it (npm start; admin-api alone with CLICKHOUSE_URL); without, the route answers 503 not_ready.
   */
  importEvents?: (projectId: string, events: ImportedEvent[]) => Promise<ImportResponse>;
  /** The alerts' mail (SMTP_URL) and ALERTS_ALLOW_PRIVATE_URLS, for their test messages and the address guard at save. */
  alertChannels?: ChannelOptions;
  /**
   * POST /admin/projects/{id}/reports/{report_id}/send: a process with the event store and mail (SMTP_URL, MAIL_FROM,
   * PUBLIC_URL) mails a preview; without, the route answers 503 not_ready naming what is missing.
   */
  reportPreview?: ReportPreview;
}

// The bodies are libs/schema's; each origin is then normalised by libs/auth's rules (wildcards, public suffixes).
const origins = allowedOriginsInputSchema.transform((list, ctx) => {
  const out: string[] = [];
  list.forEach((value, i) => {
    const entry = parseOriginEntry(value);
    if ('origin' in entry) out.push(entry.origin);
    else ctx.addIssue({ code: 'custom', path: [i], message: `${entry.problem}: ${value}` });
  });
  return [...new Set(out)];
});
const createProjectSchema = createProjectInputSchema.extend({ allowed_origins: origins.optional() });
const patchProjectSchema = patchProjectInputSchema.extend({ allowed_origins: origins.optional() });

const projectTarget = (project: { id: string; name: string }) => ({ type: 'project' as const, id: project.id, name: project.name });

/**
 * /admin/projects and keys: each route checks the caller's role in the project's organization (declared on the route,
 * libs/schema; checked by libs/accounts' sessionGuard), ADMIN_TOKEN passing every check; what they change is audited.
 */
export function createAdminRouter(deps: AdminRouterDeps): Router {
  const audit = deps.accounts.audit;
  const router = routerOf({ session: sessionGuard(deps.accounts, deps.adminToken), adminToken: deps.adminToken }, [
    defineRoute(
      routes.createProject,
      async ({ body }, caller) => {
        const orgId = caller.org?.id ?? (await deps.accounts.defaultOrgId());
        const created = await deps.keyStore.createProject({ ...body, org_id: orgId }, body.env);
        await Promise.all(Object.values(created.keys).map((key) => deps.onKeyMinted?.(extractPrefix(key)!)));
        await audit.record({ orgOfProject: created.project.id }, { action: 'project.created', actor: actorOf(caller), target: projectTarget(created.project), details: {} });
        return created;
      },
      { body: createProjectSchema },
    ),
    defineRoute(routes.listProjects, async (_input, caller) => ({ projects: await deps.accounts.projectsOf(caller) })),
    defineRoute(routes.getProject, async ({ params }) => ({ project: found(await deps.keyStore.getProject(params.id)) })),
    defineRoute(
      routes.updateProject,
      async ({ body, params }, caller) => {
        const project = found(await deps.keyStore.updateProject(params.id, body));
        await deps.onProjectChanged?.(project.id);
        await audit.record({ orgOfProject: project.id }, { action: 'project.updated', actor: actorOf(caller), target: projectTarget(project), details: { changed: Object.keys(body).sort() } });
        return { project };
      },
      { body: patchProjectSchema },
    ),
    defineRoute(routes.createKey, async ({ body, params }, caller) => {
      const created = found(await deps.keyStore.createKey(params.id, body.kind, body.env));
      await deps.onKeyMinted?.(created.prefix);
      await audit.record({ orgOfProject: params.id }, { action: 'key.created', actor: actorOf(caller), target: { type: 'key', id: created.prefix, name: null }, details: { kind: created.kind, env: created.env } });
      return created;
    }),
    defineRoute(routes.listKeys, async ({ params }) => ({ keys: await deps.keyStore.listKeys(params.id) })),
    defineRoute(routes.revokeKey, async ({ params }, caller) => {
      const prefix = extractPrefix(params.prefix);
      const projectId = prefix ? await deps.keyStore.revokeKey(prefix) : null;
      if (!prefix || !projectId) throw new ApiError('not_found');
      await deps.onKeyRevoked?.(prefix);
      await audit.record({ orgOfProject: projectId }, { action: 'key.revoked', actor: actorOf(caller), target: { type: 'key', id: prefix, name: null }, details: {} });
    }),
    defineRoute(routes.deleteProject, async ({ params }, caller) => deleteProject(deps, params.id, caller)),
    defineRoute(routes.importEvents, async ({ body, params }, caller) => {
      const project = found(await deps.keyStore.getProject(params.id));
      if (!deps.importEvents) {
        throw new ApiError('not_ready', { details: 'this admin-api has no event store to import into: start it with CLICKHOUSE_URL (as the other apps), or import through npm start' });
      }
      const answer = await deps.importEvents(params.id, body.events);
      // A batch sent again that wrote nothing is not an entry of its own.
      if (answer.count > 0) await audit.record({ orgOfProject: project.id }, { action: 'project.imported', actor: actorOf(caller), target: projectTarget(project), details: { count: answer.count, skipped: answer.skipped } });
      return answer;
    }),
  ]);
  // Any other path or method under /admin needs a credential too: 401 before its 404 or 405.
  router.use('/admin', (req, _res, next) => {
    if (presentsAdminToken(req, deps.adminToken)) return next();
    const bearer = /^Bearer[ \t]+(ses_\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!bearer) return next(new ApiError('invalid_session'));
    deps.accounts.sessions.authenticate(bearer).then(() => next(), next);
  });
  return router;
}

/** The project and its keys go at once (every instance drops them); its events are queued for deletion like a forget. */
async function deleteProject(deps: AdminRouterDeps, id: string, caller: Caller): Promise<void> {
  const project = found(await deps.keyStore.deleteProject(id));
  await deps.onProjectChanged?.(project.id);
  // The audit entry goes to the organization the project belonged to (it no longer names one).
  if (project.org_id) await deps.accounts.audit.record({ org: project.org_id }, { action: 'project.deleted', actor: actorOf(caller), target: projectTarget(project), details: {} });
  // A failure leaves the deletion queued in project_deletions: the retention job submits it on its next run.
  if (deps.deleteProjectEvents) await deps.deleteProjectEvents(project.id).then(() => deps.keyStore.projectEventsDeleted(project.id), () => undefined);
}

function found<T>(value: T | null): T {
  if (value === null) throw new ApiError('not_found');
  return value;
}
