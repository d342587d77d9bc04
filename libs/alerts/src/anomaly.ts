import type { AlertCondition, AlertSensitivity } from '@analytics/schema';

/**
 * The anomaly rule (docs/alerts-and-reports.md, "How the anomaly condition decides"), on the logarithm of the counts
 * (ln(x + 1)), where a day-level swing is the same share at every size: the centre is the median of the same window in
 * each of the last four weeks, the spread the largest of 1.4826 x their median absolute deviation (a robust standard
 * deviation), 1 / sqrt(expected + 1) (the noise of a count of that size) and SPREAD_FLOOR. The condition holds when
 * the value is more than SPREADS[sensitivity] spreads away from the centre; once firing, it recovers when the value is
 * back within RECOVERY of that distance.
 */
export const ANOMALY_SPREADS: Record<AlertSensitivity, number> = { low: 6, medium: 4.5, high: 3.5 };
/** A firing anomaly recovers within this share of its threshold distance (hysteresis: no flapping at the edge). */
export const ANOMALY_RECOVERY = 0.75;
/** Weeks of history the expected value is made of. */
export const ANOMALY_WEEKS = 4;
/** The least spread (in ln units): ordinary traffic moves this much from week to week, however steady the history. */
export const ANOMALY_SPREAD_FLOOR = 0.15;
const MAD_TO_SD = 1.4826;

export interface Verdict {
  /** Whether the condition holds (given whether it held before: the anomaly rule's hysteresis). */
  holds: boolean;
  /** The expected value (anomaly), or undefined (a fixed threshold). */
  expected?: number;
  /** The bound the value is compared with: the threshold, or for an anomaly the bound on the side of the value. */
  threshold: number;
  /** Too little history to say (anomaly only): never holds. */
  noBaseline?: boolean;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The centre (ln units), expected value and spread (ln units) of a window from the same window in past weeks. */
export function baselineOf(history: readonly number[]): { centre: number; expected: number; spread: number } {
  const logs = history.map((x) => Math.log1p(Math.max(0, x)));
  const centre = median(logs);
  const mad = median(logs.map((x) => Math.abs(x - centre)));
  const expected = Math.expm1(centre);
  return { centre, expected, spread: Math.max(MAD_TO_SD * mad, 1 / Math.sqrt(expected + 1), ANOMALY_SPREAD_FLOOR) };
}

/**
 * The anomaly rule on one value and its history (in any order). Without a baseline (fewer than two of the four
 * weeks with anything) it never holds: a new site's first traffic is no spike.
 */
export function anomaly(value: number, history: readonly number[], sensitivity: AlertSensitivity, wasFiring: boolean): Verdict {
  const { centre, expected, spread } = baselineOf(history);
  const distance = ANOMALY_SPREADS[sensitivity] * spread * (wasFiring ? ANOMALY_RECOVERY : 1);
  const upper = Math.expm1(centre + distance);
  const lower = Math.max(0, Math.expm1(centre - distance));
  const threshold = value >= expected ? upper : lower;
  if (history.filter((x) => x > 0).length < 2) return { holds: false, expected, threshold, noBaseline: true };
  return { holds: value > upper || value < lower, expected, threshold };
}

/** Whether a condition holds for a value (`history`: the same window in past weeks, for an anomaly). */
export function judge(condition: AlertCondition, value: number, history: readonly number[], wasFiring: boolean): Verdict {
  if ('above' in condition) return { holds: value > condition.above, threshold: condition.above };
  if ('below' in condition) return { holds: value < condition.below, threshold: condition.below };
  return anomaly(value, history, condition.anomaly.sensitivity, wasFiring);
}
