import { createHash, timingSafeEqual } from 'node:crypto';
import { Router, type RequestHandler } from 'express';
import type { KeyStore } from '@analytics/auth';
import { type EventStore, runRetention } from '@analytics/event-store';
import { ApiError, type RetentionRunResponse } from '@analytics/schema';

export interface RetentionDeps {
  keyStore: KeyStore;
  events: EventStore;
  internalSecret: string;
  clock?: () => number;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** `X-Internal-Secret` equal to INTERNAL_SECRET (constant time); API keys are not accepted. */
export function requireInternalSecret(secret: string): RequestHandler {
  const expected = digest(secret);
  return (req, _res, next) => {
    const given = req.get('x-internal-secret');
    if (!given || !timingSafeEqual(digest(given), expected)) throw new ApiError('unauthorized');
    next();
  };
}

/** One retention pass over every project (the job behind the endpoint and `--once`). */
export async function retentionJob(deps: RetentionDeps) {
  const projects = await deps.keyStore.listProjects();
  return runRetention(deps.events, projects, (deps.clock ?? Date.now)());
}

export function createRetentionRouter(deps: RetentionDeps): Router {
  const router = Router();
  router.post('/internal/retention/run', requireInternalSecret(deps.internalSecret), async (_req, res) => {
    const result = await retentionJob(deps);
    res.status(200).json({ ok: true, ...result } satisfies RetentionRunResponse);
  });
  return router;
}
