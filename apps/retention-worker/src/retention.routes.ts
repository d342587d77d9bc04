import type { Router } from 'express';
import type { KeyStore } from '@analytics/auth';
import { type EventStore, runRetention } from '@analytics/event-store';
import { routes } from '@analytics/schema';
import { defineRoute, routerOf } from '@analytics/service-kit';

export interface RetentionDeps {
  keyStore: KeyStore;
  events: EventStore;
  internalSecret: string;
  clock?: () => number;
}

/** One retention pass over every project (the job behind the endpoint and `--once`). */
export async function retentionJob(deps: RetentionDeps) {
  const projects = await deps.keyStore.listProjects();
  return runRetention(deps.events, projects, (deps.clock ?? Date.now)());
}

/** POST /internal/retention/run with `X-Internal-Secret` (API keys are not accepted). */
export function createRetentionRouter(deps: RetentionDeps): Router {
  return routerOf({ internalSecret: deps.internalSecret }, [defineRoute(routes.runRetention, async () => ({ ok: true, ...(await retentionJob(deps)) }))]);
}
