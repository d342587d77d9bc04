// The dashboard's view state (range and event filter) and its URL form; pure, so it is unit-tested without a browser.

// The dashboard's bundle imports no values from libs (their zod schemas would ship with it), so it keeps its own.
export const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export type Interval = 'hour' | 'day' | 'week';
export type PresetId = 'today' | 'yesterday' | '7d' | '30d' | 'month' | 'last-month';

/** A range with the API's meaning: UTC midnights, `from` inclusive, `to` exclusive. */
export interface DayRange {
  from: number;
  to: number;
}

export interface ViewState {
  range: DayRange;
  /** The event name every stats call is filtered to (`event=`), when one was clicked. */
  event?: string;
}

export const PRESETS: ReadonlyArray<{ id: PresetId; label: string }> = [
  { id: 'today', label: 'Today' },
  { id: 'yesterday', label: 'Yesterday' },
  { id: '7d', label: 'Last 7 days' },
  { id: '30d', label: 'Last 30 days' },
  { id: 'month', label: 'This month' },
  { id: 'last-month', label: 'Last month' },
];

const startOfDay = (ms: number) => ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);

/** The preset's range at `now`; ranges ending today end at tomorrow's midnight, so today's events count. */
export function presetRange(id: PresetId, now: number): DayRange {
  const today = startOfDay(now);
  const tomorrow = today + DAY_MS;
  const d = new Date(today);
  const monthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  switch (id) {
    case 'today':
      return { from: today, to: tomorrow };
    case 'yesterday':
      return { from: today - DAY_MS, to: today };
    case '7d':
      return { from: today - 6 * DAY_MS, to: tomorrow };
    case '30d':
      return { from: today - 29 * DAY_MS, to: tomorrow };
    case 'month':
      return { from: monthStart, to: tomorrow };
    case 'last-month':
      return { from: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1), to: monthStart };
  }
}

/** The preset a range is, if any (to highlight its button). */
export function presetOf(range: DayRange, now: number): PresetId | undefined {
  return PRESETS.find((p) => {
    const r = presetRange(p.id, now);
    return r.from === range.from && r.to === range.to;
  })?.id;
}

/** `YYYY-MM-DD` of a UTC midnight. */
export const dayString = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A `YYYY-MM-DD` that is a real calendar day, as UTC midnight; undefined otherwise. */
export function parseDay(text: string | null): number | undefined {
  if (!text || !/^\d{4}-\d{2}-\d{2}$/.test(text)) return undefined;
  const ms = Date.parse(`${text}T00:00:00Z`);
  return Number.isNaN(ms) || dayString(ms) !== text ? undefined : ms;
}

/** The state a URL's query string names; a missing or unusable range is the last 7 days. */
export function readState(search: string, now: number): ViewState {
  const params = new URLSearchParams(search);
  const from = parseDay(params.get('from'));
  const to = parseDay(params.get('to'));
  const range = from !== undefined && to !== undefined && to > from ? { from, to } : presetRange('7d', now);
  const event = params.get('event') || undefined;
  return event ? { range, event } : { range };
}

/** The query string of a state (`?from=…&to=…[&event=…]`), what a bookmark or a shared link carries. */
export function writeState(state: ViewState): string {
  const params = new URLSearchParams({ from: dayString(state.range.from), to: dayString(state.range.to) });
  if (state.event) params.set('event', state.event);
  return `?${params.toString()}`;
}

/** The period of the same length just before the range, for the change figures. */
export const previousRange = (r: DayRange): DayRange => ({ from: r.from - (r.to - r.from), to: r.from });

/** Chart buckets: hours up to 2 days, days up to 90, weeks beyond. */
export function intervalFor(r: DayRange): Interval {
  const days = (r.to - r.from) / DAY_MS;
  return days <= 2 ? 'hour' : days <= 90 ? 'day' : 'week';
}

/** Every bucket start of the range (weeks start on Monday, as the API's do), so empty buckets chart as 0. */
export function bucketStarts(r: DayRange, interval: Interval): number[] {
  const out: number[] = [];
  if (interval === 'hour') {
    for (let t = r.from; t < r.to; t += HOUR_MS) out.push(t);
  } else if (interval === 'day') {
    for (let t = r.from; t < r.to; t += DAY_MS) out.push(t);
  } else {
    const weekday = (new Date(r.from).getUTCDay() + 6) % 7;
    for (let t = r.from - weekday * DAY_MS; t < r.to; t += 7 * DAY_MS) out.push(t);
  }
  return out;
}

/** The API's `bucket` (`YYYY-MM-DD HH:MM:SS`, UTC) as epoch ms. */
export const bucketMs = (bucket: string) => Date.parse(`${bucket.replace(' ', 'T')}Z`);

/** Change against the previous period, in percent; undefined when there was nothing before. */
export function changePercent(current: number, previous: number): number | undefined {
  return previous === 0 ? undefined : ((current - previous) / previous) * 100;
}

/** A flag drawn from the ISO code's regional-indicator letters (no image, no request); '' for no country. */
export function flagOf(code: string): string {
  if (!/^[A-Z]{2}$/.test(code)) return '';
  return String.fromCodePoint(...[...code].map((c) => 0x1f1e6 + c.charCodeAt(0) - 65));
}

/** Y tick steps for counts: whole numbers only, so a chart of 0 and 1 never shows 0.2 to 0.8. */
export const COUNT_STEPS: readonly number[] = Array.from({ length: 10 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();

/** X ticks of a day or week chart: bucket starts, every k-th one when labels `minGapPx` apart would not fit. */
export function bucketTicks(buckets: readonly number[], widthPx: number, minGapPx = 64): number[] {
  const fit = Math.max(1, Math.floor(widthPx / minGapPx));
  const every = Math.ceil(buckets.length / fit);
  return buckets.filter((_, i) => i % every === 0);
}

const monthDay = new Intl.DateTimeFormat('en', { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** A day or week tick's label (`Mar 12`), never a time of day. */
export const dayTickLabel = (ms: number) => monthDay.format(ms);

/** The chart's values: 0 for a bucket without rows, null (not drawn) for one that has not begun at `now`. */
export function bucketValues(buckets: readonly number[], rows: ReadonlyArray<{ bucket?: unknown; value: unknown }>, now: number): (number | null)[] {
  const index = new Map(buckets.map((b, i) => [b, i]));
  const out: (number | null)[] = buckets.map((b) => (b > now ? null : 0));
  for (const r of rows) {
    const i = index.get(bucketMs(String(r.bucket)));
    if (i !== undefined && out[i] !== null) out[i] = Number(r.value);
  }
  return out;
}

const exactCount = new Intl.NumberFormat('en');

/** A legend value: the range's total while nothing is hovered, else the hovered bucket's value ('–' before it began). */
export function legendValue(value: number | null, hovered: boolean, total: number): string {
  if (!hovered) return `${exactCount.format(total)} in range`;
  return value === null ? '–' : exactCount.format(value);
}
