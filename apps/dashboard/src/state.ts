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

/** A filter the dashboard applies to every insights call: `[is, dimension, [value]]` (one per dimension). */
export interface Filter {
  /** An insights dimension: a column (`source`, `path`, `event_name`, ...) or `prop:<key>`. */
  dimension: string;
  value: string;
}

export interface ViewState {
  range: DayRange;
  /** Conditions added by clicking a row, in the order they were added (the pills above the panels). */
  filters: Filter[];
  /** The chart draws the previous period's visitors too (`compare=1`). */
  compare: boolean;
  /** The property key the properties panel shows (`prop=`); the most used key when absent. */
  prop?: string;
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

// Filters in the URL: `f=<dimension>:is:<value>`, repeated, in the order added. Dimension and value are written with
// encodeURIComponent, so a ':' inside either is `%3A` and the literal ':' only separates; a property dimension keeps
// its own literal colon (`f=prop:plan:is:pro`). Read back with decodeURIComponent; a malformed `f=` is ignored.
// The insights filter dimensions and limits (libs/schema's INSIGHT_DIMENSION_KINDS and INSIGHTS_LIMITS, kept here as
// plain values: the bundle imports no values from libs); a link naming anything else is ignored, not sent.
const FILTER_DIMENSIONS: ReadonlySet<string> = new Set(['event_name', 'source', 'medium', 'campaign', 'channel', 'country', 'device_type', 'browser', 'os', 'path', 'entry_path', 'exit_path']);
const MAX_PROPERTY_KEY = 256;
const MAX_FILTER_VALUE = 1024;

/** One `f=` value (raw, as in the address) as a filter; undefined when it is not one. */
export function parseFilter(raw: string): Filter | undefined {
  const parts = raw.split(':');
  const prop = parts[0] === 'prop';
  const [dim, op, ...rest] = prop ? [`prop:${parts[1] ?? ''}`, ...parts.slice(2)] : parts;
  if (op !== 'is' || rest.length !== 1 || dim === undefined) return undefined;
  try {
    const dimension = prop ? `prop:${decodeURIComponent(dim.slice(5))}` : decodeURIComponent(dim);
    const value = decodeURIComponent(rest[0]!);
    if (prop ? dimension.length <= 5 || dimension.length > 5 + MAX_PROPERTY_KEY : !FILTER_DIMENSIONS.has(dimension)) return undefined;
    if (value.length > MAX_FILTER_VALUE) return undefined;
    return { dimension, value };
  } catch {
    return undefined;
  }
}

/** A filter as its `f=` value. */
export function formatFilter(f: Filter): string {
  const dim = f.dimension.startsWith('prop:') ? `prop:${encodeURIComponent(f.dimension.slice(5))}` : encodeURIComponent(f.dimension);
  return `${dim}:is:${encodeURIComponent(f.value)}`;
}

/** The state with `f` added; a filter on the same dimension is replaced (one value per dimension, as Plausible does). */
export function withFilter(state: ViewState, f: Filter): ViewState {
  return { ...state, filters: [...state.filters.filter((g) => g.dimension !== f.dimension), f] };
}

export function withoutFilter(state: ViewState, dimension: string): ViewState {
  return { ...state, filters: state.filters.filter((g) => g.dimension !== dimension) };
}

/** The filters as insights conditions. */
export const conditionsOf = (filters: readonly Filter[]): Array<['is', string, string[]]> => filters.map((f) => ['is', f.dimension, [f.value]]);

/** The event-name filter, if any (the recent events and the export follow it; they take no other filter). */
export const eventOf = (state: ViewState): string | undefined => state.filters.find((f) => f.dimension === 'event_name')?.value;

/**
 * The state a URL's query string names; a missing or unusable range is the last 7 days. `event=<name>` (the links of
 * earlier versions) reads as an `event_name` filter.
 */
export function readState(search: string, now: number): ViewState {
  const params = new URLSearchParams(search);
  const from = parseDay(params.get('from'));
  const to = parseDay(params.get('to'));
  const range = from !== undefined && to !== undefined && to > from ? { from, to } : presetRange('7d', now);
  let state: ViewState = { range, filters: [], compare: params.get('compare') === '1' };
  const event = params.get('event');
  if (event) state = withFilter(state, { dimension: 'event_name', value: event });
  for (const part of search.replace(/^\?/, '').split('&')) {
    if (!part.startsWith('f=')) continue;
    const f = parseFilter(part.slice(2));
    if (f) state = withFilter(state, f);
  }
  const prop = params.get('prop');
  if (prop) state.prop = prop;
  return state;
}

/** The query string of a state (`?from=…&to=…[&f=…][&compare=1][&prop=…]`), what a bookmark or a shared link carries. */
export function writeState(state: ViewState): string {
  const parts = [`from=${dayString(state.range.from)}`, `to=${dayString(state.range.to)}`, ...state.filters.map((f) => `f=${formatFilter(f)}`)];
  if (state.compare) parts.push('compare=1');
  if (state.prop) parts.push(`prop=${encodeURIComponent(state.prop)}`);
  return `?${parts.join('&')}`;
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
