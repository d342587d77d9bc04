import { z } from 'zod';
import { type ReadRange, clampToAcceptedRange } from './iso-date';

// Issue 47: a project counts its days, weeks and months in its own time zone (docs/insights.md, "Time zones"). The
// names are IANA's as this runtime's Intl knows them; the wall-clock arithmetic here is what the tests hold the event
// store's answers to, and what turns a date-only `from`/`to` into the instant of that local midnight.

/** The zone every read counts in unless the project (or `tz` on /v1/stats and /v1/sources) names another. */
export const DEFAULT_TIME_ZONE = 'UTC';

let listed: ReadonlySet<string> | undefined;
const supported = () => (listed ??= new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']));
// Area/Location[/Sublocation], as IANA writes them (ClickHouse's tzdata takes the same spelling, case included).
const IANA_FORM = /^[A-Z][A-Za-z]*(?:\/[A-Z][A-Za-z0-9_+-]*)+$/;

/**
 * An IANA time zone name: one of Intl.supportedValuesOf('timeZone'), 'UTC', or a link Intl resolves to one of them
 * (Node 20's ICU lists Asia/Calcutta and Europe/Kiev and resolves Asia/Kolkata and Europe/Kyiv to them). Abbreviations
 * (CET, EST), offsets and other spellings of case are refused: the name is bound as is into ClickHouse's functions.
 */
export function isTimeZone(name: string): boolean {
  if (supported().has(name)) return true;
  if (!IANA_FORM.test(name)) return false;
  try {
    return supported().has(new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone);
  } catch {
    return false;
  }
}

export const timeZoneSchema = z
  .string()
  .max(64)
  .refine(isTimeZone, { message: 'must be an IANA time zone name such as Europe/Berlin, America/Los_Angeles or UTC' })
  .describe('IANA time zone name (e.g. Europe/Berlin); days, weeks and months of insights, funnels and retention are counted in it (default UTC).');

const formats = new Map<string, Intl.DateTimeFormat>();
function formatOf(tz: string): Intl.DateTimeFormat {
  let f = formats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    formats.set(tz, f);
  }
  return f;
}

/** The wall clock of `tz` at an instant: its fields, and as if that wall clock were UTC (ms). */
export function wallClock(ms: number, tz: string): { y: number; m: number; d: number; h: number; mi: number; s: number; asUtc: number } {
  const parts: Record<string, number> = {};
  for (const p of formatOf(tz).formatToParts(new Date(ms))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const { year: y = 0, month: m = 1, day: d = 1, hour: h = 0, minute: mi = 0, second: s = 0 } = parts;
  const asUtc = Date.UTC(y, m - 1, d, h, mi, s) + (((ms % 1000) + 1000) % 1000);
  return { y, m, d, h, mi, s, asUtc };
}

/** The offset of `tz` from UTC at an instant, in ms (Europe/Berlin in summer: +7,200,000). */
export const offsetAt = (ms: number, tz: string): number => wallClock(ms, tz).asUtc - ms;

/**
 * The first instant whose wall clock in `tz` is at or after the given one (as a UTC ms of the wall clock): a local
 * midnight, or for a wall time a spring-forward skips, the instant the clock jumps past it.
 */
export function zonedInstant(wallAsUtc: number, tz: string): number {
  if (tz === DEFAULT_TIME_ZONE) return wallAsUtc;
  // Offsets are within ±18 h: try the offsets around the guess; the earliest instant whose wall clock is >= the target.
  let guess = wallAsUtc - offsetAt(wallAsUtc, tz);
  for (let i = 0; i < 3; i++) {
    const next = wallAsUtc - offsetAt(guess, tz);
    if (next === guess) break;
    guess = next;
  }
  // An ambiguous wall time (fall back) has two instants: take the earlier one when it maps to the same wall clock.
  for (const earlier of [guess - 3_600_000, guess - 1_800_000]) if (wallClock(earlier, tz).asUtc === wallAsUtc) return earlier;
  if (wallClock(guess, tz).asUtc === wallAsUtc) return guess;
  // In a gap (spring forward): the first instant whose wall clock is at or past it, by bisection over the 3 hours
  // before (the wall clock only moves forward there).
  let [lo, hi] = [guess - 3 * 3_600_000, guess];
  while (wallClock(hi, tz).asUtc < wallAsUtc) hi += 3_600_000;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (wallClock(mid, tz).asUtc >= wallAsUtc) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** The instant local midnight of a calendar date `YYYY-MM-DD` begins in `tz`. */
export function localMidnight(date: string, tz: string): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const wall = new Date(0);
  wall.setUTCFullYear(y, m - 1, d);
  return zonedInstant(wall.getTime(), tz);
}

/** The local calendar date `YYYY-MM-DD` of an instant in `tz`. */
export function localDate(ms: number, tz: string): string {
  return new Date(wallClock(ms, tz).asUtc).toISOString().slice(0, 10);
}

/**
 * A read range in `tz`: a bound sent as a date alone (`from=2026-03-29`) is that date's local midnight, a bound with
 * a time the instant it names. In UTC (the default) the range is as parsed.
 */
export function rangeInZone<T extends ReadRange>(range: T, tz: string): T {
  if (tz === DEFAULT_TIME_ZONE) return range;
  const at = (date: string | undefined, ms: number) => (date === undefined ? ms : clampToAcceptedRange(localMidnight(date, tz)));
  return { ...range, from: at(range.from_date, range.from), to: at(range.to_date, range.to) };
}
