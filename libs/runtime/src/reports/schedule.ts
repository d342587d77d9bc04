import { type ReportFrequency, wallClock, zonedInstant } from '@analytics/schema';

// When scheduled reports go out (issue 48): weekly on Monday at 08:00, monthly on the 1st at 08:00, in the project's
// time zone, each covering the full period before (Monday to Sunday, the previous calendar month) in that zone. Exact
// across daylight-saving changes: every instant is a wall-clock time of the zone turned into an instant (zonedInstant),
// never a fixed number of hours added.

const DAY = 86_400_000;
/** The hour of the day (local) a report goes out. */
export const REPORT_SEND_HOUR = 8;

/** A calendar date as the UTC midnight of that date (ms): dates counted without any zone. */
const dateOf = (y: number, m: number, d: number) => Date.UTC(y, m - 1, d);
const isoDate = (dateMs: number) => new Date(dateMs).toISOString().slice(0, 10);

/** A period of a report in its zone: local dates [from, to), the instants of their midnights, and the key of its send. */
export interface ReportPeriod {
  /** The send log's period: `weekly:2026-03-02` (its Monday), `monthly:2026-03`. */
  key: string;
  from: string;
  to: string;
  fromMs: number;
  toMs: number;
}

function periodOf(frequency: ReportFrequency, fromDate: number, toDate: number, tz: string): ReportPeriod {
  const from = isoDate(fromDate);
  return {
    key: frequency === 'weekly' ? `weekly:${from}` : `monthly:${from.slice(0, 7)}`,
    from,
    to: isoDate(toDate),
    fromMs: zonedInstant(fromDate, tz),
    toMs: zonedInstant(toDate, tz),
  };
}

/** The local date (as a date's UTC midnight) at which the send slot at or before `ms` falls, by frequency. */
function slotDateAtOrBefore(frequency: ReportFrequency, tz: string, ms: number): number {
  const w = wallClock(ms, tz);
  let date: number;
  if (frequency === 'weekly') {
    const today = dateOf(w.y, w.m, w.d);
    const sinceMonday = (new Date(today).getUTCDay() + 6) % 7;
    date = today - sinceMonday * DAY;
    if (slotAt(date, tz) > ms) date -= 7 * DAY;
  } else {
    date = dateOf(w.y, w.m, 1);
    if (slotAt(date, tz) > ms) date = dateOf(w.m === 1 ? w.y - 1 : w.y, w.m === 1 ? 12 : w.m - 1, 1);
  }
  return date;
}

/** The instant of the send slot on a local date: REPORT_SEND_HOUR of that date in `tz`. */
const slotAt = (date: number, tz: string) => zonedInstant(date + REPORT_SEND_HOUR * 3_600_000, tz);

/** The period before the one starting on `date` (a Monday, or a 1st). */
function previousStart(frequency: ReportFrequency, date: number): number {
  if (frequency === 'weekly') return date - 7 * DAY;
  const d = new Date(date);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1);
}
function nextStart(frequency: ReportFrequency, date: number): number {
  if (frequency === 'weekly') return date + 7 * DAY;
  const d = new Date(date);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** A send slot: when it is, the period its report covers, and the period before (the comparison). */
export interface ReportSlot {
  at: number;
  period: ReportPeriod;
  previous: ReportPeriod;
}

function slotOn(frequency: ReportFrequency, tz: string, date: number): ReportSlot {
  const start = previousStart(frequency, date);
  return { at: slotAt(date, tz), period: periodOf(frequency, start, date, tz), previous: periodOf(frequency, previousStart(frequency, start), start, tz) };
}

/** The latest send slot at or before `ms` (the one a report owes now, if it is not sent yet). */
export function latestSlot(frequency: ReportFrequency, tz: string, ms: number): ReportSlot {
  return slotOn(frequency, tz, slotDateAtOrBefore(frequency, tz, ms));
}

/** The first send slot after `ms`. */
export function nextSlot(frequency: ReportFrequency, tz: string, ms: number): ReportSlot {
  return slotOn(frequency, tz, nextStart(frequency, slotDateAtOrBefore(frequency, tz, ms)));
}

/**
 * The first slot a report owes: the first at or after `since` (its schedule_from, or a recipient's added_at). The
 * next_send_at of a report is the later of this and the next slot after now.
 */
export function firstSlotFrom(frequency: ReportFrequency, tz: string, since: number): ReportSlot {
  const latest = latestSlot(frequency, tz, since);
  return latest.at >= since ? latest : nextSlot(frequency, tz, since);
}

/** When the report's next scheduled send is due: the first slot after now that it owes (ISO 8601). */
export function nextSendAt(frequency: ReportFrequency, tz: string, scheduleFrom: number, now: number): string {
  return new Date(Math.max(nextSlot(frequency, tz, now).at, firstSlotFrom(frequency, tz, scheduleFrom).at)).toISOString();
}

/**
 * The report a preview shows (POST .../reports/{report_id}/send): the period whose report goes out next, as far as it
 * has gone at `now`, against the period before cut at the same elapsed time (like for like, as the dashboard compares a
 * range that includes now). Between a period's end and its 08:00 send (Monday 00:00-08:00) that period is whole.
 * A cut bound is an ISO 8601 instant in `to` (a whole period's bounds are local dates).
 */
export function periodSoFar(frequency: ReportFrequency, tz: string, now: number): { period: ReportPeriod; previous: ReportPeriod; partial: boolean } {
  const { period, previous } = nextSlot(frequency, tz, now);
  if (now >= period.toMs) return { period, previous, partial: false };
  // At least a second of each (a range must not be empty), never past the previous period's end (a shorter month).
  const elapsed = Math.max(1_000, now - period.fromMs);
  const cut = (p: ReportPeriod, toMs: number): ReportPeriod => ({ ...p, to: new Date(toMs).toISOString(), toMs });
  return { period: cut(period, period.fromMs + elapsed), previous: cut(previous, Math.min(previous.toMs, previous.fromMs + elapsed)), partial: true };
}
