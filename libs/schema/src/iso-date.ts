import { z } from 'zod';
import { LIMITS } from './limits';

/** One UTC day in milliseconds. */
export const DAY_MS = 86_400_000;

/**
 * The clock bucket of a session id the server writes (the spec's `<anonymous_id>-<30-minute bucket>`): enrichment and
 * visits by inactivity write it, the `visit_spans` aggregate reads a visit's home day from it.
 */
export const SESSION_BUCKET_MS = 30 * 60_000;

// ISO 8601 calendar date, optionally with a time (minutes, seconds, fractions) and a zone (Z or ±hh[:mm]).
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/** Parses an ISO 8601 string of any year 0000..9999 to epoch milliseconds; no zone means UTC. Returns null when invalid. */
export function parseIsoDate(value: string): number | null {
  const m = ISO_8601.exec(value);
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = m;
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  const date = new Date(Date.UTC(2000, 0, 1, Number(h), Number(mi), Number(s), Number((frac + '000').slice(0, 3))));
  // Date.UTC would read years 0..99 as 1900..1999; setUTCFullYear takes the year as written.
  date.setUTCFullYear(Number(y), month - 1, day);
  // 2026-02-31 rolls over into March: reject instead.
  if (date.getUTCDate() !== day) return null;
  let ms = date.getTime();
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetMin = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0');
    if (offsetMin > 18 * 60) return null;
    ms -= sign * offsetMin * 60_000;
  }
  return ms;
}

const { min, max } = LIMITS.timestamp;
const isoSeconds = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
/** The accepted timestamp range in words, as a refusal names it. */
export const TIMESTAMP_RANGE = `between ${isoSeconds(min)} and ${isoSeconds(max - 1)}`;

/** The nearest accepted instant: no event lies outside LIMITS.timestamp, so a read range can be cut to it. */
export function clampToAcceptedRange(ms: number): number {
  return Math.min(Math.max(ms, min), max);
}

const NOT_ISO = 'must be an ISO 8601 date or date-time';
// A `+` left unencoded in a query string decodes to a space: `2026-01-01T00:00:00 02:00` meant `+02:00`.
const PLUS_AS_SPACE = / (\d{2}(?::?\d{2})?)$/;

/** A zod string parsed as ISO 8601 to epoch ms, then `check`ed: a number is the value, a string the refusal. */
const isoString = (check: (ms: number | null, value: string) => number | string) =>
  z.string().transform((raw, ctx) => {
    const value = raw.trim();
    const out = check(parseIsoDate(value), value);
    if (typeof out === 'number') return out;
    ctx.addIssue({ code: 'custom', message: out });
    return z.NEVER;
  });

/** An event timestamp: ISO 8601 within LIMITS.timestamp; parses to epoch milliseconds. */
export const isoDate = () => isoString((ms) => (ms === null ? NOT_ISO : ms >= min && ms < max ? ms : `must be ${TIMESTAMP_RANGE}`));

const paramCheck = (ms: number | null, value: string) =>
  ms ?? (parseIsoDate(value.replace(PLUS_AS_SPACE, '+$1')) === null ? NOT_ISO : `${NOT_ISO}: a \`+\` in a query string must be URL-encoded as %2B (it arrived as a space)`);

/** A query-string `from`/`to`: ISO 8601 of any year (read.schema clamps the range); names an unencoded `+`. */
export const isoDateParam = () => isoString(paramCheck);

/** A read range's bound: its instant (a date alone: that UTC midnight) and, when only a date was sent, the date. */
export interface RangeBound {
  ms: number;
  /** `YYYY-MM-DD` when the bound was a date alone: a read in a time zone takes that local midnight (time-zone.ts). */
  date?: string;
}
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** `from`/`to` of a read that counts in a time zone (insights, funnel, retention, stats and sources with `tz`): ISO 8601, a date alone kept as such. */
export const isoBoundParam = () =>
  z.string().transform((raw, ctx): RangeBound => {
    const value = raw.trim();
    const out = paramCheck(parseIsoDate(value), value);
    if (typeof out === 'number') return DATE_ONLY.test(value) ? { ms: out, date: value } : { ms: out };
    ctx.addIssue({ code: 'custom', message: out });
    return z.NEVER;
  });

/** A read range as the queries take it: instants cut to the accepted timestamps, and the dates sent alone. */
export interface ReadRange {
  from: number;
  to: number;
  /** The date of `from` (`to`) when it was sent without a time: its midnight in the read's time zone. */
  from_date?: string;
  to_date?: string;
}

/** The range of two parsed bounds: clamped instants (UTC midnights for dates alone) and the dates. */
export function readRangeOf(from: RangeBound, to: RangeBound): ReadRange {
  return {
    from: clampToAcceptedRange(from.ms),
    to: clampToAcceptedRange(to.ms),
    ...(from.date !== undefined ? { from_date: from.date } : {}),
    ...(to.date !== undefined ? { to_date: to.date } : {}),
  };
}

// Every event of a request without its own timestamp has the request's arrival time: format it once.
let lastMs = Number.NaN;
let lastText = '';

/** `YYYY-MM-DD HH:MM:SS.mmm` in UTC: the DateTime64(3, 'UTC') text form the event store reads and writes. */
export function toClickHouseTime(ms: number): string {
  if (ms !== lastMs) {
    const iso = new Date(ms).toISOString();
    lastText = `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
    lastMs = ms;
  }
  return lastText;
}
