import { type EventInput, LIMITS } from '@analytics/schema';

/**
 * The device's clock error over one batch: arrival minus `sent_at` (both instants of the same send), or 0 without
 * `sent_at` or within LIMITS.clockSkewToleranceMs (5 s). PostHog's approach: the client stamps the events and the send
 * with the same clock, so adding this moves every event to the server's clock and keeps their order and spacing.
 */
export function clockSkewOf(sentAtMs: number | undefined, arrivalMs: number): number {
  if (sentAtMs === undefined) return 0;
  const skew = arrivalMs - sentAtMs;
  return Math.abs(skew) > LIMITS.clockSkewToleranceMs ? skew : 0;
}

/** The batch's events with their sent timestamps moved by `skewMs` (kept in the accepted range); unchanged for 0. */
export function withClockSkewCorrected(inputs: EventInput[], skewMs: number): EventInput[] {
  if (skewMs === 0) return inputs;
  const { min, max } = LIMITS.timestamp;
  return inputs.map((e) => (e.timestamp === undefined ? e : { ...e, timestamp: Math.min(Math.max(e.timestamp + skewMs, min), max - 1) }));
}
