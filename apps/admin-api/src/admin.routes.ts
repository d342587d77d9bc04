import { createHash, timingSafeEqual } from 'node:crypto';
import { Router, type RequestHandler } from 'express';
import { type KeyStore, extractPrefix, parseOriginEntry } from '@analytics/auth';
import {
  ApiError,
  type CreatedProjectResponse,
  type MintedKeyResponse,
  type Project,
  allowedOriginsInputSchema,
  createKeyInputSchema,
  createProjectInputSchema,
  parseOrThrow,
  patchProjectInputSchema,
} from '@analytics/schema';
import { readJsonBody } from '@analytics/service-kit';

export interface AdminRouterDeps {
  keyStore: KeyStore;
  adminToken: string;
  /** Called after a key is revoked or a project changed, so caches (this instance's, and others' via Redis) drop it. */
  onKeyRevoked?: (prefix: string) => void | Promise<void>;
  onProjectChanged?: (projectId: string) => void | Promise<void>;
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

const digest = (s: string) => createHash('sha256').update(s).digest();

/** `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time; anything else is 401 invalid_session. */
export function requireAdmin(adminToken: string): RequestHandler {
  const expected = digest(adminToken);
  return (req, _res, next) => {
    const m = /^Bearer[ \t]+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
    if (!m || !timingSafeEqual(digest(m[1]!), expected)) throw new ApiError('invalid_session');
    next();
  };
}

/** /admin/*: projects, keys, origins, retention. */
export function createAdminRouter(deps: AdminRouterDeps): Router {
  const router = Router();
  router.use('/admin', requireAdmin(deps.adminToken));

  router.post('/admin/projects', async (req, res) => {
    const input = parseOrThrow(createProjectSchema, await readJsonBody(req, res));
    const created: CreatedProjectResponse = await deps.keyStore.createProject(input, input.env);
    res.status(201).json(created);
  });

  router.get('/admin/projects', async (_req, res) => {
    const projects: Project[] = await deps.keyStore.listProjects();
    res.json({ projects });
  });

  router.get('/admin/projects/:id', async (req, res) => {
    const project = await deps.keyStore.getProject(req.params.id);
    if (!project) throw new ApiError('not_found');
    res.json({ project });
  });

  router.patch('/admin/projects/:id', async (req, res) => {
    const patch = parseOrThrow(patchProjectSchema, await readJsonBody(req, res));
    const project = await deps.keyStore.updateProject(req.params.id, patch);
    if (!project) throw new ApiError('not_found');
    await deps.onProjectChanged?.(project.id);
    res.json({ project });
  });

  router.post('/admin/projects/:id/keys', async (req, res) => {
    const input = parseOrThrow(createKeyInputSchema, await readJsonBody(req, res));
    const key: MintedKeyResponse | null = await deps.keyStore.createKey(req.params.id, input.kind, input.env);
    if (!key) throw new ApiError('not_found');
    res.status(201).json(key);
  });

  router.delete('/admin/keys/:prefix', async (req, res) => {
    const prefix = extractPrefix(req.params.prefix);
    const projectId = prefix ? await deps.keyStore.revokeKey(prefix) : null;
    if (!prefix || !projectId) throw new ApiError('not_found');
    await deps.onKeyRevoked?.(prefix);
    res.status(204).end();
  });

  return router;
}
