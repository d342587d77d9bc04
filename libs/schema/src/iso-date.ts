import { z } from 'zod';

// ISO 8601 calendar date, optionally with a time (minutes, seconds, fractions) and a zone (Z or ±hh[:mm]).
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/** Earliest and latest instants the event store can hold (DateTime64(3) covers far more; these keep data sane). */
export const MIN_TIME_MS = Date.UTC(1970, 0, 1);
export const MAX_TIME_MS = Date.UTC(2200, 0, 1);

/** Parses an ISO 8601 string to epoch milliseconds; no zone means UTC. Returns null when invalid or out of range. */
export function parseIsoDate(value: string): number | null {
  const m = ISO_8601.exec(value);
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = m;
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  let ms = Date.UTC(Number(y), month - 1, day, Number(h), Number(mi), Number(s), Number((frac + '000').slice(0, 3)));
  // Date.UTC rolls 2026-02-31 over into March: reject instead.
  if (new Date(ms).getUTCDate() !== day) return null;
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetMin = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0');
    if (offsetMin > 18 * 60) return null;
    ms -= sign * offsetMin * 60_000;
  }
  if (ms < MIN_TIME_MS || ms >= MAX_TIME_MS) return null;
  return ms;
}

/** A zod string that must be ISO 8601; parses to epoch milliseconds. */
export const isoDate = () =>
  z.string().transform((value, ctx) => {
    const ms = parseIsoDate(value.trim());
    if (ms === null) {
      ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 date or date-time between 1970 and 2200' });
      return z.NEVER;
    }
    return ms;
  });

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
