import type { Router } from 'express';
import { type KeyStore, extractPrefix, parseOriginEntry } from '@analytics/auth';
import { ApiError, allowedOriginsInputSchema, createProjectInputSchema, patchProjectInputSchema, routes } from '@analytics/schema';
import { checkAdminToken, defineRoute, routerOf } from '@analytics/service-kit';

export interface AdminRouterDeps {
  keyStore: KeyStore;
  adminToken: string;
  /** Called after a key is revoked or a project changed, so caches (this instance's, and others' via Redis) drop it. */
  onKeyRevoked?: (prefix: string) => void | Promise<void>;
  onProjectChanged?: (projectId: string) => void | Promise<void>;
  /**
   * Called with a new key's prefix before its 201: the other instances (via Redis) add it to their known prefixes, so
   * the first requests with it are looked up rather than refused under the unknown-prefix lookup budget.
   */
  onKeyMinted?: (prefix: string) => void | Promise<void>;
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

/** /admin/*: projects, keys, origins, retention, with `Authorization: Bearer <ADMIN_TOKEN>`. */
export function createAdminRouter(deps: AdminRouterDeps): Router {
  const router = routerOf({ adminToken: deps.adminToken }, [
    defineRoute(
      routes.createProject,
      async ({ body }) => {
        const created = await deps.keyStore.createProject(body, body.env);
        await Promise.all(Object.values(created.keys).map((key) => deps.onKeyMinted?.(extractPrefix(key)!)));
        return created;
      },
      { body: createProjectSchema },
    ),
    defineRoute(routes.listProjects, async () => ({ projects: await deps.keyStore.listProjects() })),
    defineRoute(routes.getProject, async ({ params }) => ({ project: found(await deps.keyStore.getProject(params.id)) })),
    defineRoute(
      routes.updateProject,
      async ({ body, params }) => {
        const project = found(await deps.keyStore.updateProject(params.id, body));
        await deps.onProjectChanged?.(project.id);
        return { project };
      },
      { body: patchProjectSchema },
    ),
    defineRoute(routes.createKey, async ({ body, params }) => {
      const created = found(await deps.keyStore.createKey(params.id, body.kind, body.env));
      await deps.onKeyMinted?.(created.prefix);
      return created;
    }),
    defineRoute(routes.revokeKey, async ({ params }) => {
      const prefix = extractPrefix(params.prefix);
      const projectId = prefix ? await deps.keyStore.revokeKey(prefix) : null;
      if (!prefix || !projectId) throw new ApiError('not_found');
      await deps.onKeyRevoked?.(prefix);
    }),
  ]);
  // Any other path or method under /admin is the admin's too: 401 before its 404 or 405.
  router.use('/admin', (req, _res, next) => {
    checkAdminToken(req, deps.adminToken);
    next();
  });
  return router;
}

function found<T>(value: T | null): T {
  if (value === null) throw new ApiError('not_found');
  return value;
}
