import { ClickHouseError } from '@clickhouse/client';
import { UpstreamUnavailableError } from '@analytics/schema';

/** Keeps errors the store answered with; anything else on the way (network, timeout) is the store being unreachable. */
export function classifyStoreError(e: unknown): unknown {
  if (e instanceof ClickHouseError || e instanceof UpstreamUnavailableError) return e;
  // chDB's own errors carry a ClickHouse code: the engine answered.
  if (clickHouseCodeOf(e) !== undefined) return e;
  return new UpstreamUnavailableError('event store', e);
}

/** The ClickHouse error code of an error the engine answered with (a server's ClickHouseError, or chDB's own error). */
export function clickHouseCodeOf(e: unknown): number | undefined {
  if (e instanceof ClickHouseError) return Number(e.code);
  // chDB's errors carry `clickhouseCode`, also as the cause of the ClickHouseError its connection wraps them in.
  for (let x: unknown = e, depth = 0; x && typeof x === 'object' && depth < 3; depth++) {
    const code = (x as { clickhouseCode?: unknown }).clickhouseCode;
    if (typeof code === 'number') return code;
    x = (x as { cause?: unknown }).cause;
  }
  return undefined;
}
