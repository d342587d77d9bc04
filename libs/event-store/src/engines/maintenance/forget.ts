import { ApiError, UpstreamUnavailableError } from '@analytics/schema';
import { classifyStoreError } from '../../client/store-error';
import type { ForgetQueue } from './forget-queue';

/**
 * Queues deletion of every event of `userId` in `projectId` (ForgetQueue: batched into one ClickHouse mutation per
 * interval, durable and asynchronous once submitted: completes within seconds). Events with a null user_id, other
 * projects and the aggregates are untouched. The store refusing gives 500 forget_failed; the store unreachable gives
 * 502 upstream_failed.
 */
export async function forgetUser(store: { readonly forgets: ForgetQueue }, projectId: string, userId: string): Promise<void> {
  try {
    await store.forgets.forget(projectId, userId);
  } catch (e) {
    const err = classifyStoreError(e);
    if (err instanceof UpstreamUnavailableError) throw err;
    throw new ApiError('forget_failed', {}, { cause: err });
  }
}
