import { ApiError, UpstreamUnavailableError } from '@analytics/schema';
import { type EventStore, classifyStoreError } from './event-store';

/**
 * Queues deletion of every event of `userId` in `projectId` as a ClickHouse mutation (durable, asynchronous:
 * completes within seconds). Events with a null user_id, other projects and the aggregates are untouched.
 * The store refusing gives 500 forget_failed; the store unreachable gives 502 upstream_failed.
 */
export async function forgetUser(store: EventStore, projectId: string, userId: string): Promise<void> {
  const table = store.cluster ? `${store.localEventsTable} ON CLUSTER ${store.cluster}` : store.localEventsTable;
  try {
    // Every acknowledged event is in the aggregates first: they are not rewritten by the deletion.
    await store.beforeDelete(() =>
      store.client.command({
        query: `ALTER TABLE ${table} DELETE WHERE project_id = {p:UUID} AND user_id = {u:String}`,
        query_params: { p: projectId, u: userId },
        clickhouse_settings: { mutations_sync: '0' },
      }),
    );
  } catch (e) {
    const err = classifyStoreError(e);
    if (err instanceof UpstreamUnavailableError) throw err;
    throw new ApiError('forget_failed', {}, { cause: err });
  }
}
