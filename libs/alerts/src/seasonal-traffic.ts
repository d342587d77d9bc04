import type { AlertSensitivity } from '@analytics/schema';
import { ANOMALY_WEEKS, anomaly } from './anomaly';

// Synthetic seasonal traffic and a replay of the anomaly rule over it: how often it fires on ordinary traffic and how
// fast it catches a drop (tools/bench/alerts-anomaly.mjs, BENCHMARKS.md "Alerts"; anomaly.spec.ts on a smaller series).

const HOURS_PER_WEEK = 168;

/** mulberry32: a small seeded generator, so a series is the same on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const gaussian = (rand: () => number) => Math.sqrt(-2 * Math.log(rand() || Number.MIN_VALUE)) * Math.cos(2 * Math.PI * rand());

/** A Poisson count of mean `mean` (a normal approximation past 50). */
function poisson(mean: number, rand: () => number): number {
  if (mean > 50) return Math.max(0, Math.round(mean + Math.sqrt(mean) * gaussian(rand)));
  const limit = Math.exp(-mean);
  let k = 0;
  for (let p = rand(); p > limit; p *= rand()) k++;
  return k;
}

export interface SeasonalOptions {
  /** Hours of traffic. */
  hours: number;
  /** The mean count of the busiest hour of a weekday. */
  peak: number;
  seed?: number;
  /** The day-to-day level change (log-normal sigma; 0.12: a day commonly 12% off its weekday's usual). */
  dayNoise?: number;
  /** The hour-to-hour change beyond counting noise (log-normal sigma). */
  hourNoise?: number;
}

/**
 * Hourly counts from hour 0 = a Monday 00:00: a daily cycle (night at 8% of the afternoon peak), weekends at 60%, a
 * slow trend (+/-10% over the series), day and hour level noise, and Poisson counting noise.
 */
export function seasonalTraffic(o: SeasonalOptions): number[] {
  const rand = seededRandom(o.seed ?? 1);
  const dayNoise = o.dayNoise ?? 0.12;
  const hourNoise = o.hourNoise ?? 0.08;
  const out: number[] = [];
  let dayLevel = 1;
  for (let h = 0; h < o.hours; h++) {
    const hourOfDay = h % 24;
    const dayOfWeek = Math.floor(h / 24) % 7;
    if (hourOfDay === 0) dayLevel = Math.exp(dayNoise * gaussian(rand));
    const daily = 0.08 + 0.92 * Math.max(0, Math.sin((Math.PI * (hourOfDay - 5)) / 19)) ** 1.5;
    const weekly = dayOfWeek >= 5 ? 0.6 : 1;
    const trend = 1 + 0.1 * Math.sin((2 * Math.PI * h) / o.hours);
    out.push(poisson(o.peak * daily * weekly * trend * dayLevel * Math.exp(hourNoise * gaussian(rand)), rand));
  }
  return out;
}

/** The value of a window of `width` hours ending at (excluding) hour `end`. */
const windowSum = (series: readonly number[], end: number, width: number) => {
  let sum = 0;
  for (let i = end - width; i < end; i++) sum += series[i]!;
  return sum;
};

/** The anomaly rule's verdicts over a series, evaluated at every hour (as the job does every interval). */
export function replay(series: readonly number[], sensitivity: AlertSensitivity, widthHours: number, from = ANOMALY_WEEKS * HOURS_PER_WEEK + 24): { fires: number[]; firingHours: number } {
  let firing = false;
  const fires: number[] = [];
  let firingHours = 0;
  for (let end = from; end <= series.length; end++) {
    const history = Array.from({ length: ANOMALY_WEEKS }, (_, k) => windowSum(series, end - (k + 1) * HOURS_PER_WEEK, widthHours));
    const verdict = anomaly(windowSum(series, end, widthHours), history, sensitivity, firing);
    if (verdict.holds && !firing) fires.push(end);
    firing = verdict.holds;
    if (firing) firingHours++;
  }
  return { fires, firingHours };
}

/**
 * Drops to `1 - drop` of the traffic from each start hour on, one at a time: whether the 1 h anomaly rule fires within
 * `withinHours` evaluations (hourly windows ending 1, 2, ... hours after the start), and after how many hours (the
 * rule as an alert that was not firing before the drop sees it).
 */
export function dropDetection(series: readonly number[], sensitivity: AlertSensitivity, starts: readonly number[], drop = 0.6, withinHours = 2): { detected: number; total: number; delays: number[] } {
  const delays: number[] = [];
  for (const start of starts) {
    const dropped = series.slice(0, start + withinHours).map((v, i) => (i >= start ? Math.round(v * (1 - drop)) : v));
    for (let end = start + 1; end <= start + withinHours; end++) {
      const history = Array.from({ length: ANOMALY_WEEKS }, (_, k) => dropped[end - 1 - (k + 1) * HOURS_PER_WEEK]!);
      if (anomaly(dropped[end - 1]!, history, sensitivity, false).holds) {
        delays.push(end - start);
        break;
      }
    }
  }
  return { detected: delays.length, total: starts.length, delays };
}
