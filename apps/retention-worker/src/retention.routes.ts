import type { Router } from 'express';
import { purgeExpiredAccounts } from '@analytics/accounts';
import type { KeyStore, SqlPort } from '@analytics/auth';
import { type EventStore, runRetention } from '@analytics/event-store';
import { routes } from '@analytics/schema';
import { defineRoute, routerOf } from '@analytics/service-kit';

export interface RetentionDeps {
  keyStore: KeyStore;
  /** The key store's database: expired sessions, invitations, reset links and old audit entries are purged with each pass. */
  keyDb?: SqlPort;
  events: EventStore;
  internalSecret: string;
  clock?: () => number;
}

/**
 * One retention pass over every project (the job behind the endpoint and `--once`). First the events of deleted
 * projects are submitted for deletion (those an admin-api without an event store left queued), and expired account
 * data is purged.
 */
export async function retentionJob(deps: RetentionDeps) {
  for (const id of await deps.keyStore.pendingProjectDeletions()) {
    await deps.events.forgets.forgetProject(id);
    await deps.keyStore.projectEventsDeleted(id);
  }
  if (deps.keyDb) await purgeExpiredAccounts(deps.keyDb, { now: (deps.clock ?? Date.now)() });
  const projects = await deps.keyStore.listProjects();
  return runRetention(deps.events, projects, (deps.clock ?? Date.now)());
}

/** POST /internal/retention/run with `X-Internal-Secret` (API keys are not accepted). */
export function createRetentionRouter(deps: RetentionDeps): Router {
  return routerOf({ internalSecret: deps.internalSecret }, [defineRoute(routes.runRetention, async () => ({ ok: true, ...(await retentionJob(deps)) }))]);
}
