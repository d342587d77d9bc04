// The dashboard's view state (range and event filter) and its URL form; pure, so it is unit-tested without a browser.

// The dashboard's bundle imports no values from libs (their zod schemas would ship with it), so it keeps its own.
export const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export type Interval = 'hour' | 'day' | 'week';
export type PresetId = 'today' | 'yesterday' | '7d' | '30d' | 'month' | 'last-month';

/**
 * A range of calendar days with the API's meaning: each day `YYYY-MM-DD` held as its UTC midnight, `from` inclusive,
 * `to` exclusive; the API reads the days in the project's time zone.
 */
export interface DayRange {
  from: number;
  to: number;
}

/** A filter the dashboard applies to every insights call: `[is, dimension, [value]]` (one per dimension). */
export interface Filter {
  /** An insights dimension: a column (`source`, `path`, `event_name`, ...) or `prop:<key>`. */
  dimension: string;
  value: string;
  /** More values the condition also holds for (`is` any of them): the other spellings of a merged source row. */
  more?: string[];
}

/** A goal or a funnel step as the dashboard defines it: an event name, a path (a final `*`: a prefix), or both. */
export interface Goal {
  event?: string;
  path?: string;
  /** A goal saved for the project (issue 46): its id; its definition is the project's (`g=saved:<id>`). */
  id?: string;
}

export type FunnelCountBy = 'visitor' | 'user' | 'session';
export type RetentionPeriod = 'day' | 'week' | 'month';
export type RetentionCountBy = 'user' | 'visitor';
/** The view opened under the lists (its calls run only while it is open). */
export type ConversionView = 'funnel' | 'retention';

export interface FunnelState {
  steps: Goal[];
  /** Seconds from step 1 within which the later steps count (`window_s`). */
  window: number;
  countBy: FunnelCountBy;
  /** An insights dimension the funnel is broken down by. */
  breakdown?: string;
  /** The saved funnel these steps, window and count came from (`fid=`); any change to them makes the funnel unsaved. */
  saved?: string;
}

export interface RetentionState {
  period: RetentionPeriod;
  countBy: RetentionCountBy;
}

export interface ViewState {
  range: DayRange;
  /** The goals of the Goals panel, in the order added (`g=`). */
  goals: Goal[];
  funnel: FunnelState;
  retention: RetentionState;
  view?: ConversionView;
  /** Conditions added by clicking a row, in the order they were added (the pills above the panels). */
  filters: Filter[];
  /** The chart draws the previous period's visitors too (`compare=1`). */
  compare: boolean;
  /** The property key the properties panel shows (`prop=`); the most used key when absent. */
  prop?: string;
  /** The saved segment applied (`seg=`): sent as `segment: "<id>"`, its filters ANDed with the pills' by the API. */
  segment?: string;
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

// Days in the project's time zone (issue 47 item 2). A range holds calendar days (each a day's `YYYY-MM-DD` as UTC
// midnight) and is sent date-only, which the API reads as the project's local days. Chart buckets are wall-clock
// times in that zone, as the API's `time:*` buckets are ("YYYY-MM-DD HH:MM:SS" read as if UTC): "wall" ms.
const wallFormats = new Map<string, Intl.DateTimeFormat>();

/** The wall clock of `instant` in `timeZone` (an IANA name), as epoch ms of that clock read as UTC. */
export function wallMs(instant: number, timeZone = 'UTC'): number {
  if (timeZone === 'UTC') return instant;
  let format = wallFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    wallFormats.set(timeZone, format);
  }
  const p = Object.fromEntries(format.formatToParts(instant).map((x) => [x.type, x.value]));
  return Date.UTC(Number(p['year']), Number(p['month']) - 1, Number(p['day']), Number(p['hour']), Number(p['minute']), Number(p['second'])) + (instant % 1000 + 1000) % 1000;
}

/** The zone's name if the browser knows it, else UTC (an unknown name never breaks the page). */
export function knownTimeZone(name: string | undefined): string {
  if (!name) return 'UTC';
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return name;
  } catch {
    return 'UTC';
  }
}

/**
 * The preset's range at `now` in `timeZone`'s calendar (default UTC); ranges ending today end at tomorrow's
 * midnight, so today's events count.
 */
export function presetRange(id: PresetId, now: number, timeZone = 'UTC'): DayRange {
  const today = startOfDay(wallMs(now, timeZone));
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
export function presetOf(range: DayRange, now: number, timeZone = 'UTC'): PresetId | undefined {
  return PRESETS.find((p) => {
    const r = presetRange(p.id, now, timeZone);
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

// Filters in the URL: `f=<dimension>:is:<value>[:<value>...]` (several values: any of them, a merged source row's
// spellings), repeated, in the order added. Dimension and value are written with
// encodeURIComponent, so a ':' inside either is `%3A` and the literal ':' only separates; a property dimension keeps
// its own literal colon (`f=prop:plan:is:pro`). Read back with decodeURIComponent; a malformed `f=` is ignored.
// The insights filter dimensions and limits (libs/schema's INSIGHT_DIMENSION_KINDS and INSIGHTS_LIMITS, kept here as
// plain values: the bundle imports no values from libs); a link naming anything else is ignored, not sent.
const FILTER_DIMENSIONS: ReadonlySet<string> = new Set(['event_name', 'source', 'medium', 'campaign', 'channel', 'country', 'device_type', 'browser', 'os', 'path', 'entry_path', 'exit_path']);
const MAX_PROPERTY_KEY = 256;
const MAX_FILTER_VALUE = 1024;
/** Values of one `is` condition (libs/schema's limit on a filter's values). */
const MAX_FILTER_VALUES = 100;

/** One `f=` value (raw, as in the address) as a filter; undefined when it is not one. */
export function parseFilter(raw: string): Filter | undefined {
  const parts = raw.split(':');
  const prop = parts[0] === 'prop';
  const [dim, op, ...rest] = prop ? [`prop:${parts[1] ?? ''}`, ...parts.slice(2)] : parts;
  if (op !== 'is' || rest.length < 1 || rest.length > MAX_FILTER_VALUES || dim === undefined) return undefined;
  try {
    const dimension = prop ? `prop:${decodeURIComponent(dim.slice(5))}` : decodeURIComponent(dim);
    const [value, ...more] = rest.map((v) => decodeURIComponent(v));
    if (prop ? dimension.length <= 5 || dimension.length > 5 + MAX_PROPERTY_KEY : !FILTER_DIMENSIONS.has(dimension)) return undefined;
    if (value === undefined || [value, ...more].some((v) => v.length > MAX_FILTER_VALUE)) return undefined;
    return more.length ? { dimension, value, more } : { dimension, value };
  } catch {
    return undefined;
  }
}

/** A filter as its `f=` value. */
export function formatFilter(f: Filter): string {
  const dim = f.dimension.startsWith('prop:') ? `prop:${encodeURIComponent(f.dimension.slice(5))}` : encodeURIComponent(f.dimension);
  return `${dim}:is:${[f.value, ...(f.more ?? [])].map(encodeURIComponent).join(':')}`;
}

/** The state with `f` added; a filter on the same dimension is replaced (one value per dimension, as Plausible does). */
export function withFilter(state: ViewState, f: Filter): ViewState {
  return { ...state, filters: [...state.filters.filter((g) => g.dimension !== f.dimension), f] };
}

export function withoutFilter(state: ViewState, dimension: string): ViewState {
  return { ...state, filters: state.filters.filter((g) => g.dimension !== dimension) };
}

// Goals and funnel steps in the URL: `<event>`, `@<path>` or `<event>@<path>`, each part written with
// encodeURIComponent except that `/`, `$` and `*` stay as they are (`g=$pageview@/pricing`, `g=@/blog/*`,
// `g=signup`); so `@` and `,` inside a part are `%40` and `%2C`. A funnel is its steps joined by `,` in one `fs=`.
export const GOAL_LIMITS = { goals: 20, event: 128, path: 1024 } as const;
export const FUNNEL_STEPS = { min: 2, max: 10 } as const;
export const FUNNEL_WINDOW = { min: 1, max: 2_592_000, default: 86_400 } as const;
/** The insights dimensions a funnel can be broken down by on the dashboard (its selector). */
export const FUNNEL_BREAKDOWNS: readonly string[] = ['source', 'medium', 'campaign', 'channel', 'entry_path', 'path', 'country', 'device_type', 'browser', 'os'];
const FUNNEL_COUNT_BYS: readonly string[] = ['visitor', 'user', 'session'];
const RETENTION_PERIODS: readonly string[] = ['day', 'week', 'month'];
const RETENTION_COUNT_BYS: readonly string[] = ['user', 'visitor'];
const DEFAULT_FUNNEL: FunnelState = { steps: [], window: FUNNEL_WINDOW.default, countBy: 'visitor' };
const DEFAULT_RETENTION: RetentionState = { period: 'week', countBy: 'user' };

const encodePart = (text: string) => encodeURIComponent(text).replace(/%2F/g, '/').replace(/%24/g, '$').replace(/%2A/gi, '*');

/** A goal as the user typed it (trimmed), or undefined when it names neither an event nor a path or is over the limits. */
export function goalOf(event: string, path: string): Goal | undefined {
  const e = event.trim();
  const p = path.trim();
  if (!e && !p) return undefined;
  if (e.length > GOAL_LIMITS.event || p.length > GOAL_LIMITS.path || p === '*') return undefined;
  return { ...(e ? { event: e } : {}), ...(p ? { path: p } : {}) };
}

/** One goal's URL form (raw, as in the address); undefined when it is not one. */
export function parseGoal(raw: string): Goal | undefined {
  const parts = raw.split('@');
  if (parts.length > 2) return undefined;
  try {
    const event = decodeURIComponent(parts[0]!);
    const path = parts.length === 2 ? decodeURIComponent(parts[1]!) : '';
    if (parts.length === 2 && !path) return undefined;
    return goalOf(event, path);
  } catch {
    return undefined;
  }
}

export const formatGoal = (g: Goal): string =>
  g.id !== undefined ? `${SAVED_GOAL}${encodeURIComponent(g.id)}` : `${g.event === undefined ? '' : encodePart(g.event)}${g.path === undefined ? '' : `@${encodePart(g.path)}`}`;

// A saved goal in the URL is `g=saved:<id>`: a goal typed in the form never holds a raw `:` (encodePart writes %3A).
const SAVED_GOAL = 'saved:';
/** The longest saved id the dashboard takes from a link. */
export const MAX_SAVED_ID = 128;

/** A saved id as read from the URL (raw); undefined when it is empty, malformed or too long. */
export function parseSavedId(raw: string): string | undefined {
  try {
    const id = decodeURIComponent(raw);
    return id && id.length <= MAX_SAVED_ID ? id : undefined;
  } catch {
    return undefined;
  }
}

/** A `g=` value: a saved goal (`saved:<id>`) or a goal typed in the form. */
export const parseShownGoal = (raw: string): Goal | undefined => {
  if (!raw.startsWith(SAVED_GOAL)) return parseGoal(raw);
  const id = parseSavedId(raw.slice(SAVED_GOAL.length));
  return id === undefined ? undefined : { id };
};

/** A goal in words: `signup`, `$pageview on /pricing`, `any event on /blog/*`. */
export const goalText = (g: Goal): string => (g.id !== undefined ? `Saved goal ${g.id}` : g.event === undefined ? `Page ${g.path}` : g.path === undefined ? g.event : `${g.event} on ${g.path}`);

/** The goal as the API takes it (`{ event?, path? }`). */
export const goalBody = (g: Goal): Goal => (g.id !== undefined ? { id: g.id } : { ...(g.event !== undefined ? { event: g.event } : {}), ...(g.path !== undefined ? { path: g.path } : {}) });

/**
 * The filters a click on a goal adds: `event_name is <event>` and `path is <path>` (the events that complete it);
 * undefined for a goal whose path is a prefix (`is` cannot say "starts with").
 */
export function goalFilters(g: Goal): Filter[] | undefined {
  if (g.path?.endsWith('*')) return undefined;
  return [...(g.event !== undefined ? [{ dimension: 'event_name', value: g.event }] : []), ...(g.path !== undefined ? [{ dimension: 'path', value: g.path }] : [])];
}

const sameGoal = (a: Goal, b: Goal) => a.id === b.id && a.event === b.event && a.path === b.path;

/** The state with goal `g` added at the end (a goal already there is not added twice; at most GOAL_LIMITS.goals). */
export function withGoal(state: ViewState, g: Goal): ViewState {
  if (state.goals.some((h) => sameGoal(g, h)) || state.goals.length >= GOAL_LIMITS.goals) return state;
  return { ...state, goals: [...state.goals, g] };
}

export const withoutGoal = (state: ViewState, index: number): ViewState => ({ ...state, goals: state.goals.filter((_, i) => i !== index) });

/** The funnel with step `g` added at the end (at most FUNNEL_STEPS.max; a step may repeat). */
export const withStep = (state: ViewState, g: Goal): ViewState =>
  state.funnel.steps.length >= FUNNEL_STEPS.max ? state : { ...state, funnel: { ...unsaved(state.funnel), steps: [...state.funnel.steps, g] } };

export const withoutStep = (state: ViewState, index: number): ViewState => ({ ...state, funnel: { ...unsaved(state.funnel), steps: state.funnel.steps.filter((_, i) => i !== index) } });

/** The funnel without its saved id: a changed step, window or count is no longer the saved funnel. */
export function unsaved(f: FunnelState): FunnelState {
  const { saved: _, ...rest } = f;
  return rest;
}

/** The filters as insights conditions. */
export const conditionsOf = (filters: readonly Filter[]): Array<['is', string, string[]]> => filters.map((f) => ['is', f.dimension, [f.value, ...(f.more ?? [])]]);

/** The event-name filter, if any (the recent events and the export follow it; they take no other filter). */
export const eventOf = (state: ViewState): string | undefined => state.filters.find((f) => f.dimension === 'event_name')?.value;

/**
 * What the Export button's file keeps of the page's filters. GET /v1/export filters by the event's own columns; of the
 * panels' filters only `event_name` means the same there (the panels' source, medium, campaign and channel are a
 * visit's entry values, the export's an event's own; the others it has no parameter for), so the rest are named as not
 * applied instead of being applied differently.
 */
export function exportScopeOf(filters: readonly Filter[]): { event?: string; applied: Filter[]; skipped: Filter[] } {
  const applied = filters.filter((f) => f.dimension === 'event_name');
  return { ...(applied[0] ? { event: applied[0].value } : {}), applied, skipped: filters.filter((f) => f.dimension !== 'event_name') };
}

/**
 * The state a URL's query string names; a missing or unusable range is the last 7 days. `event=<name>` (the links of
 * earlier versions) reads as an `event_name` filter.
 */
export function readState(search: string, now: number, timeZone = 'UTC'): ViewState {
  const params = new URLSearchParams(search);
  const from = parseDay(params.get('from'));
  const to = parseDay(params.get('to'));
  const range = from !== undefined && to !== undefined && to > from ? { from, to } : presetRange('7d', now, timeZone);
  let state: ViewState = { range, filters: [], compare: params.get('compare') === '1', goals: [], funnel: { ...DEFAULT_FUNNEL }, retention: { ...DEFAULT_RETENTION } };
  const event = params.get('event');
  if (event) state = withFilter(state, { dimension: 'event_name', value: event });
  for (const part of search.replace(/^\?/, '').split('&')) {
    if (!part.startsWith('f=')) continue;
    const f = parseFilter(part.slice(2));
    if (f) state = withFilter(state, f);
  }
  const prop = params.get('prop');
  if (prop) state.prop = prop;
  // Goals and the funnel's steps are read from the raw address (like f=): their parts keep their own escapes.
  for (const part of search.replace(/^\?/, '').split('&')) {
    if (part.startsWith('g=')) {
      const g = parseShownGoal(part.slice(2));
      if (g) state = withGoal(state, g);
    } else if (part.startsWith('fs=')) {
      const steps = part.slice(3).split(',').map(parseShownGoal);
      // A funnel with a step that does not parse is dropped whole: its other steps would be another funnel.
      if (steps.every((g): g is Goal => g !== undefined) && steps.length <= FUNNEL_STEPS.max) state.funnel.steps = steps;
    }
  }
  const window = Number(params.get('fw'));
  if (Number.isInteger(window) && window >= FUNNEL_WINDOW.min && window <= FUNNEL_WINDOW.max) state.funnel.window = window;
  const fc = params.get('fc');
  if (fc && FUNNEL_COUNT_BYS.includes(fc)) state.funnel.countBy = fc as FunnelCountBy;
  const fb = params.get('fb');
  if (fb && FUNNEL_BREAKDOWNS.includes(fb)) state.funnel.breakdown = fb;
  const fid = params.get('fid');
  if (fid && fid.length <= MAX_SAVED_ID && state.funnel.steps.length) state.funnel.saved = fid;
  const seg = params.get('seg');
  if (seg && seg.length <= MAX_SAVED_ID) state.segment = seg;
  const rp = params.get('rp');
  if (rp && RETENTION_PERIODS.includes(rp)) state.retention.period = rp as RetentionPeriod;
  const rc = params.get('rc');
  if (rc && RETENTION_COUNT_BYS.includes(rc)) state.retention.countBy = rc as RetentionCountBy;
  const view = params.get('view');
  if (view === 'funnel' || view === 'retention') state.view = view;
  return state;
}

/** The query string of a state (`?from=…&to=…[&f=…][&compare=1][&prop=…]`), what a bookmark or a shared link carries. */
export function writeState(state: ViewState): string {
  const parts = [`from=${dayString(state.range.from)}`, `to=${dayString(state.range.to)}`, ...state.filters.map((f) => `f=${formatFilter(f)}`)];
  if (state.compare) parts.push('compare=1');
  if (state.prop) parts.push(`prop=${encodeURIComponent(state.prop)}`);
  parts.push(...state.goals.map((g) => `g=${formatGoal(g)}`));
  const f = state.funnel;
  if (f.steps.length) parts.push(`fs=${f.steps.map(formatGoal).join(',')}`);
  if (f.window !== DEFAULT_FUNNEL.window) parts.push(`fw=${f.window}`);
  if (f.countBy !== DEFAULT_FUNNEL.countBy) parts.push(`fc=${f.countBy}`);
  if (f.breakdown) parts.push(`fb=${f.breakdown}`);
  if (f.saved !== undefined && f.steps.length) parts.push(`fid=${encodeURIComponent(f.saved)}`);
  if (state.segment !== undefined) parts.push(`seg=${encodeURIComponent(state.segment)}`);
  if (state.retention.period !== DEFAULT_RETENTION.period) parts.push(`rp=${state.retention.period}`);
  if (state.retention.countBy !== DEFAULT_RETENTION.countBy) parts.push(`rc=${state.retention.countBy}`);
  if (state.view) parts.push(`view=${state.view}`);
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

/** The API's `bucket` (`YYYY-MM-DD HH:MM:SS`, the wall clock in the project's time zone) as wall ms. */
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

/** The chart's values: 0 for a bucket without rows, null (not drawn) for one that has not begun at `now` (wall ms). */
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

const clockTime = new Intl.DateTimeFormat('en', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC' });
const dayAndTime = new Intl.DateTimeFormat('en', { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC' });

/**
 * What the change figures compare with (issue 47 item 3). When the range includes `now`, the API compares a previous
 * range cut to the same elapsed length and names it (`compare_range`): "vs yesterday until 14:05" for one day, "vs the
 * previous 7 days until Nov 21, 14:05" otherwise, the time in `timeZone`. Otherwise "vs previous period".
 */
export function compareLabel(range: DayRange, now: number, timeZone: string, compared?: { from: string; to: string }): string {
  const wallNow = wallMs(now, timeZone);
  const end = compared ? Date.parse(compared.to) : NaN;
  if (!(range.from <= wallNow && wallNow < range.to) || Number.isNaN(end)) return 'vs previous period';
  const wallEnd = wallMs(end, timeZone);
  const days = Math.round((range.to - range.from) / DAY_MS);
  return days === 1 ? `vs yesterday until ${clockTime.format(wallEnd)}` : `vs the previous ${days} days until ${dayAndTime.format(wallEnd)}`;
}
