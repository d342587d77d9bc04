import { ClickHouseError } from '@clickhouse/client';
import { UpstreamUnavailableError } from '@analytics/schema';
import { clickHouseCodeOf } from '../engines/read/read-limits';

/** Keeps errors the store answered with; anything else on the way (network, timeout) is the store being unreachable. */
export function classifyStoreError(e: unknown): unknown {
  if (e instanceof ClickHouseError || e instanceof UpstreamUnavailableError) return e;
  // chDB's own errors carry a ClickHouse code: the engine answered.
  if (clickHouseCodeOf(e) !== undefined) return e;
  return new UpstreamUnavailableError('event store', e);
}
