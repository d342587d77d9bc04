import type uPlot from 'uplot';
import { aiAssistantOfSource } from '@analytics/classifier/ai-assistants';
import { AI_CRAWLERS } from '@analytics/enrichment/ai-crawlers';
import type { InsightsBody, InsightsResponse, InsightsRow, QueryRow } from '@analytics/schema';
import { type Api, ApiRefusal, createApi } from './api';
import { annotationMarks, fillAnnotationTime, renderAnnotations, setUpAnnotations } from './annotations';
import { drawChart } from './chart';
import { type Nav, loadGoals, loadView, setUpConversionForms } from './conversions';
import { setUpLive, useLiveApi } from './live';
import { $, durationText, el, rendersFlagEmoji, setNumber } from './dom';
import { currentProject, readKey, readKeyRefused, route, showOnly, showSignedOut, signOut as signOutPerson, signedIn, startPeople } from './people';
import { forgetSaved, loadSaved, renderSaved, savedLists, setUpSaved } from './saved';
import { namesSaved, segmentOf, withKnownSaved } from './saved-state';
import { inShare, renderShareSegment, shareCredential, shareHasSegment, shareRefused, startShare, withSavedDefinitions } from './share';
import { setUpShareDialog, showShareButton } from './share-dialog';
import { byValue, groupSources, sourceLabelOf } from './sources';
import { learnZone, projectZone } from './zone';
import {
  DAY_MS,
  PRESETS,
  type Filter,
  type ViewState,
  bucketStarts,
  bucketValues,
  changePercent,
  conditionsOf,
  dayString,
  eventOf,
  exportScopeOf,
  flagOf,
  intervalFor,
  parseDay,
  presetOf,
  presetRange,
  readState,
  withFilter,
  withoutFilter,
  compareLabel,
  wallMs,
  writeState,
} from './state';

const KEY_ITEM = 'analytics.readKey';
const LIVE_REFRESH_MS = 30_000;
const LIST_LIMIT = 10;

const percent = new Intl.NumberFormat('en', { maximumFractionDigits: 0, signDisplay: 'exceptZero' });
const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

// ---- the key: the form only, sessionStorage only, sent only as a bearer token to this origin ----

const KEY_IN_URL = 'Keys in links are not accepted: the browser keeps every address it opens in its history. Paste the key here instead.';

/**
 * Drops a key from the URL (`#key=…`, the old sign-in link) without using it: replaceState cleans this tab's entry,
 * but the browser's own history (chrome://history, address-bar suggestions) keeps the address as it was opened.
 */
function dropKeyFromUrl(): boolean {
  if (!new URLSearchParams(location.hash.slice(1)).has('key')) return false;
  history.replaceState(null, '', location.pathname + location.search);
  return true;
}

/** The signed-out page: sign-in (or first run) and the read-key card, `message` in the key card's alert. */
function showSignIn(message = ''): void {
  stopLive();
  useLiveApi(undefined);
  void showSignedOut('', message);
}

function signOut(): void {
  shownApi = undefined;
  stopLive();
  if (signedIn()) return void signOutPerson();
  sessionStorage.removeItem(KEY_ITEM);
  showSignIn();
}

// ---- panels ----

interface ListItem {
  key: string;
  label: string | Node;
  value: number;
  extra?: string;
  onSelect?: () => void;
}

function renderList(sectionId: string, header: string, items: ListItem[]): void {
  const section = $(sectionId);
  const title = section.querySelector('h2')!;
  const max = Math.max(1, ...items.map((i) => i.value));
  const list = el('ol', { className: 'bars' });
  for (const item of items) {
    const count = el('span', { className: 'count' });
    setNumber(count, item.value);
    const bar = el('span', { className: 'bar' });
    bar.style.width = `${(item.value / max) * 100}%`;
    const label = item.onSelect ? el('button', { type: 'button', className: 'link', onclick: item.onSelect }, item.label) : el('span', {}, item.label);
    const li = el('li', {}, bar, el('span', { className: 'label' }, label, ...(item.extra ? [el('span', { className: 'extra' }, item.extra)] : [])), count);
    li.dataset['key'] = item.key;
    list.append(li);
  }
  const body = items.length ? list : el('p', { className: 'empty' }, 'No data for this range.');
  section.replaceChildren(title, el('p', { className: 'list-header' }, el('span', {}, ''), el('span', {}, header)), body);
}

type Shown = 'count' | 'share' | 'duration';

/** A headline figure and its change against the previous period; `data-value` keeps the API's number as answered. */
function renderStat(id: string, current: number, previous: number, shown: Shown = 'count', versus = 'vs previous period'): void {
  const box = $(id);
  const value = box.querySelector<HTMLElement>('.value')!;
  if (shown === 'count') setNumber(value, current);
  else {
    value.textContent = shown === 'share' ? `${Math.round(current * 100)}%` : durationText(current);
    value.title = String(current);
    value.dataset['value'] = String(current);
  }
  const change = changePercent(current, previous);
  const text = box.querySelector<HTMLElement>('.change')!;
  text.textContent = change === undefined ? 'nothing in the previous period' : `${percent.format(change)}% ${versus}`;
  // A falling bounce rate is the good direction.
  const good = shown === 'share' ? -1 : 1;
  text.className = `change ${change === undefined || Math.round(change) === 0 ? '' : change * good > 0 ? 'up' : 'down'}`;
  text.dataset['previous'] = String(previous);
}

const num = (row: InsightsRow | undefined, metric: string) => Number(row?.[metric] ?? 0);
const dim = (row: InsightsRow, d: string): string | null => (row[d] === null || row[d] === undefined ? null : String(row[d]));

function countryLabel(code: string): Node {
  if (!code) return document.createTextNode('Unknown');
  let name = code;
  try {
    name = regionNames.of(code) ?? code;
  } catch {
    name = code;
  }
  // Without an emoji font (many Linux desktops, headless browsers) a flag would show as two boxed letters: the code instead.
  const flag = rendersFlagEmoji() ? el('span', { className: 'flag', ariaHidden: 'true' }, flagOf(code)) : el('span', { className: 'flag flag-code', ariaHidden: 'true' }, code);
  return el('span', {}, flag, ` ${name}`);
}

const labelOrUnknown = (text: string) => text || 'Unknown';

const CHANNEL_LABELS: Readonly<Record<string, string>> = {
  direct: 'Direct',
  internal: 'Internal',
  organic_search: 'Organic search',
  paid_search: 'Paid search',
  organic_social: 'Organic social',
  paid_social: 'Paid social',
  email: 'Email',
  ai_assistant: 'AI assistants',
  referral: 'Referral',
  paid_other: 'Other paid',
};
const channelLabel = (channel: string) => CHANNEL_LABELS[channel] ?? labelOrUnknown(channel);
const CRAWLER_OPERATOR = new Map(AI_CRAWLERS.map((c) => [c.name, c.operator]));

/** Rows folded by `keyOf` (rows whose key is undefined are dropped) and summed: counts add up exactly. Largest first, then by key. */
function foldRows(rows: InsightsRow[], by: string, metric: string, keyOf: (value: string) => string | undefined): { key: string; value: number }[] {
  const sums = new Map<string, number>();
  for (const r of rows) {
    const key = keyOf(dim(r, by) ?? '');
    if (key !== undefined) sums.set(key, (sums.get(key) ?? 0) + num(r, metric));
  }
  return [...sums].map(([key, value]) => ({ key, value })).sort((a, b) => b.value - a.value || (a.key < b.key ? -1 : 1)).slice(0, LIST_LIMIT);
}

// ---- loading a view ----

let chart: uPlot | undefined;
let generation = 0;
let liveTimer: number | undefined;

function stopLive(): void {
  if (liveTimer !== undefined) clearInterval(liveTimer);
  liveTimer = undefined;
}

/** Whether the view's range includes now: its headline is asked again with the live figure (issue 47). */
const includesNow = (state: ViewState, now = Date.now()) => state.range.from <= now && now < state.range.to;

/** The view's insights questions: the range, the view's filters and segment, plus what the panel asks. */
function askerOf(api: Api, state: ViewState): (q: PanelQuery) => Promise<InsightsResponse> {
  const range = { from: dayString(state.range.from), to: dayString(state.range.to) };
  const filters = conditionsOf(state.filters);
  return (q) => api.insights({ ...range, ...q, filters: [...(q.filters ?? []), ...filters], ...segmentOf(state) });
}

/** The headline's one call, against the previous period; its visitors and pageviews are the chart legend's totals too. */
const askHeadline = (ask: (q: PanelQuery) => Promise<InsightsResponse>) => ask({ metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration', 'events'], compare: 'previous_period' });

/** The six headline figures of their answer. */
function showHeadline(a: InsightsResponse, state: ViewState): void {
  const row = a.rows[0];
  const prev = (m: string) => Number((row?.['comparison'] as Record<string, number> | undefined)?.[m] ?? 0);
  // "vs yesterday until 14:05" while the range includes now (the API's like-for-like compare_range).
  const versus = compareLabel(state.range, Date.now(), projectZone(), (a as { compare_range?: { from: string; to: string } }).compare_range);
  renderStat('stat-visitors', num(row, 'visitors'), prev('visitors'), 'count', versus);
  renderStat('stat-visits', num(row, 'visits'), prev('visits'), 'count', versus);
  renderStat('stat-pageviews', num(row, 'pageviews'), prev('pageviews'), 'count', versus);
  renderStat('stat-bounce', num(row, 'bounce_rate'), prev('bounce_rate'), 'share', versus);
  renderStat('stat-duration', num(row, 'visit_duration'), prev('visit_duration'), 'duration', versus);
  renderStat('stat-events', num(row, 'events'), prev('events'), 'count', versus);
}

/** The headline asked again (the range includes now); shown unless another view was loaded meanwhile. */
async function refreshHeadline(api: Api, state: ViewState): Promise<void> {
  const mine = generation;
  const answer = await askHeadline(askerOf(api, state));
  if (mine === generation) showHeadline(answer, state);
}

/** The last 30 minutes' visitors with the view's filters; returns what shows them (load() shows every panel at once). */
async function refreshLive(api: Api, state: ViewState): Promise<() => void> {
  const now = Date.now();
  const answer = await api.insights({ from: new Date(now - 30 * 60_000).toISOString(), to: new Date(now + 1000).toISOString(), metrics: ['visitors'], filters: conditionsOf(state.filters), ...segmentOf(state) });
  return () => setNumber($('stat-live').querySelector<HTMLElement>('.value')!, num(answer.rows[0], 'visitors'));
}

/** The insights body of a panel: the range and the view's filters, plus what the panel asks. */
type PanelQuery = Omit<InsightsBody, 'from' | 'to'>;

/**
 * The insights questions of the lists: one dimension each, by the metric the list shows, with the view's filters.
 * dashboard.spec.ts asks the API the same questions and compares.
 */
const LISTS: ReadonlyArray<{ id: string; dimension: string; metric: 'visitors' | 'visits' | 'events'; header: string; label?: (v: string) => string | Node }> = [
  { id: 'list-channels', dimension: 'channel', metric: 'visitors', header: 'Visitors', label: (v) => channelLabel(v) },
  { id: 'list-pages', dimension: 'path', metric: 'visitors', header: 'Visitors' },
  { id: 'list-entry-pages', dimension: 'entry_path', metric: 'visits', header: 'Visits' },
  { id: 'list-exit-pages', dimension: 'exit_path', metric: 'visits', header: 'Visits' },
  { id: 'list-countries', dimension: 'country', metric: 'visitors', header: 'Visitors', label: countryLabel },
  { id: 'list-devices', dimension: 'device_type', metric: 'visitors', header: 'Visitors', label: labelOrUnknown },
  { id: 'list-browsers', dimension: 'browser', metric: 'visitors', header: 'Visitors', label: labelOrUnknown },
  { id: 'list-os', dimension: 'os', metric: 'visitors', header: 'Visitors', label: labelOrUnknown },
  { id: 'list-events', dimension: 'event_name', metric: 'events', header: 'Events' },
];

const DIMENSION_LABELS: Readonly<Record<string, string>> = {
  source: 'Source',
  medium: 'Medium',
  channel: 'Channel',
  path: 'Page',
  entry_path: 'Entry page',
  exit_path: 'Exit page',
  campaign: 'Campaign',
  country: 'Country',
  device_type: 'Device',
  browser: 'Browser',
  os: 'OS',
  event_name: 'Event',
};
const dimensionLabel = (d: string) => (d.startsWith('prop:') ? `Property ${d.slice(5)}` : (DIMENSION_LABELS[d] ?? d));
const filterText = (f: Filter) => `${dimensionLabel(f.dimension)} is ${f.dimension === 'channel' ? channelLabel(f.value) : f.dimension === 'source' ? sourceLabelOf(f.value) : f.value || '(empty)'}`;

/** The applied segment's pill (a button that stops applying it), none without one. */
function segmentPill(state: ViewState): HTMLElement[] {
  if (state.segment === undefined) return [];
  const id = state.segment;
  const name = savedLists().segments.find((s) => s.id === id)?.name ?? id;
  const { segment: _, ...without } = state;
  const pill = el('button', { type: 'button', className: 'pill segment-pill', onclick: () => navigate(without) }, `Segment ${name}`, el('span', { ariaHidden: 'true', className: 'pill-x' }, ' ×'));
  pill.setAttribute('aria-label', `Remove segment: ${name}`);
  pill.dataset['segment'] = id;
  return [pill];
}

/** The filter pills: one per condition, each a button that removes it. */
function renderFilters(state: ViewState): void {
  const box = $('filters');
  box.hidden = state.filters.length === 0 && state.segment === undefined;
  box.replaceChildren(
    el('span', { className: 'filters-title' }, 'Filtered to'),
    ...segmentPill(state),
    ...state.filters.map((f) => {
      const pill = el('button', { type: 'button', className: 'pill', onclick: () => navigate(withoutFilter(state, f.dimension)) }, filterText(f), el('span', { ariaHidden: 'true', className: 'pill-x' }, ' ×'));
      pill.setAttribute('aria-label', `Remove filter: ${filterText(f)}`);
      pill.dataset['filter'] = `${f.dimension}:${f.value}`;
      return pill;
    }),
    ...(state.filters.length > 1 ? [el('button', { type: 'button', className: 'link', id: 'clear-filters', onclick: () => navigate({ ...state, filters: [] }) }, 'Clear all')] : []),
  );
  renderExportScope(state);
}

/** Says what Export CSV applies: the range and the event filter; a filter it cannot apply is named, never dropped silently. */
function renderExportScope(state: ViewState): void {
  const { applied, skipped } = exportScopeOf(state.filters);
  const keeps = ['the range', ...applied.map(filterText)].join(' and ');
  const text = skipped.length === 0 ? `Export CSV: every event of ${keeps}.` : `Export CSV applies ${keeps}, not ${skipped.map(filterText).join(', ')} (the export filters by range and event only).`;
  $('export-csv').title = `${text} GET /v1/export`;
  const note = $('export-scope');
  note.textContent = text;
  note.hidden = skipped.length === 0;
}

/**
 * Asks every panel's question at once and shows the answers together, when the last one is in: while a view loads,
 * the page is marked loading (panels dimmed, "Updating…" beside the totals) and no panel shows one filter's numbers
 * beside another's. Each panel's promise resolves to what shows its answer.
 */
async function load(api: Api, state: ViewState, listing: Promise<void> = Promise.resolve()): Promise<void> {
  const mine = ++generation;
  document.body.dataset['state'] = 'loading';
  $('updating').hidden = false;
  $('load-error').hidden = true;
  const range = { from: dayString(state.range.from), to: dayString(state.range.to) };
  const ask = askerOf(api, state);
  const interval = intervalFor(state.range);
  const current = () => mine === generation;
  /** A click on a row with a value adds it as a filter; rows without one (null) cannot be filtered (`is` never holds for null). */
  const select = (dimension: string, value: string | null) => (value === null ? undefined : () => navigate(withFilter(nav.now(), { dimension, value })));

  // One call for the headline, against the previous period; its visitors and pageviews are the chart legend's totals.
  const headline = askHeadline(ask);
  const panels: Promise<(() => void) | void>[] = [
    headline.then((a) => () => showHeadline(a, state)),
    refreshLive(api, state),
    Promise.all([ask({ metrics: ['visitors', 'pageviews'], dimensions: [`time:${interval}`], ...(state.compare ? { compare: 'previous_period' as const } : {}), limit: 10_000 }), headline]).then(([series, totals]) => () => {
      const buckets = bucketStarts(state.range, interval);
      const now = wallMs(Date.now(), projectZone());
      const t = `time:${interval}`;
      const as = (value: (r: InsightsRow) => number) => series.rows.map((r) => ({ bucket: r[t], value: value(r) }));
      const previous = state.compare ? bucketValues(buckets, as((r) => Number((r['comparison'] as Record<string, number> | undefined)?.['visitors'] ?? 0)), Infinity) : undefined;
      chart?.destroy();
      chart = drawChart(
        $('chart'),
        {
          buckets,
          timeZone: projectZone(),
          visitors: bucketValues(buckets, as((r) => num(r, 'visitors')), now),
          pageviews: bucketValues(buckets, as((r) => num(r, 'pageviews')), now),
          previous,
          totals: { visitors: num(totals.rows[0], 'visitors'), pageviews: num(totals.rows[0], 'pageviews'), previous: Number((totals.rows[0]?.['comparison'] as Record<string, number> | undefined)?.['visitors'] ?? 0) },
          // The series' answer carries the range's annotations (issue 48): markers at their buckets, a click fills the editors' form.
          annotations: { marks: annotationMarks(buckets, interval, series.annotations ?? [], projectZone()), onBucket: fillAnnotationTime },
        },
        interval,
      );
      renderAnnotations(series.annotations ?? [], projectZone());
    }),
    ...LISTS.map((l) =>
      ask({ metrics: [l.metric], dimensions: [l.dimension], limit: LIST_LIMIT }).then((a) => () =>
        renderList(
          l.id,
          l.header,
          a.rows.map((r) => {
            const v = dim(r, l.dimension);
            return { key: v ?? '', label: v === null ? '(none)' : l.label ? l.label(v) : v || '(empty)', value: num(r, l.metric), onSelect: select(l.dimension, v) };
          }),
        ),
      ),
    ),
    // Sources by site: every stored source (up to 1000) grouped by sourceKeyOf. A merged row's visitors are asked
    // again with all its spellings (`is` any of them): a visitor who came by two spellings counts once.
    ask({ metrics: ['visitors'], dimensions: ['source'], limit: 1000 }).then(async (a) => {
      const top = groupSources(a.rows.map((r) => ({ source: dim(r, 'source'), value: num(r, 'visitors') }))).slice(0, LIST_LIMIT);
      // (A site under more spellings than a filter takes, 100, keeps its sum.)
      await Promise.all(top.filter((g) => g.values.length > 1 && g.values.length <= 100).map(async (g) => (g.value = num((await ask({ metrics: ['visitors'], filters: [['is', 'source', g.values]] })).rows[0], 'visitors'))));
      return () =>
        renderList('list-sources', 'Visitors', top.sort(byValue).map((g) => ({ key: g.key, label: g.label, value: g.value, onSelect: () => navigate(withFilter(nav.now(), { dimension: 'source', value: g.values[0]!, ...(g.values.length > 1 ? { more: g.values.slice(1, 100) } : {}) })) })));
    }),
    // Visits from the AI assistant channel by assistant: one assistant arrives under several sources (a chatgpt.com
    // referrer, utm_source=chatgpt.com). A visit has one source (its entry's), so visits add up across them exactly.
    ask({ metrics: ['visits'], dimensions: ['source'], filters: [['is', 'channel', ['ai_assistant']]], limit: 1000 }).then((a) => () => {
      const rows = foldRows(a.rows, 'source', 'visits', (source) => aiAssistantOfSource(source) ?? source);
      renderList('list-ai-assistants', 'Visits', rows.map((r) => ({ key: r.key, label: sourceLabelOf(r.key), value: r.value })));
    }),
    // Every event an AI company's crawler sent (bots: device_type bot, browser the crawler's name; insights count
    // them only with include_bots).
    ask({ metrics: ['events'], dimensions: ['browser'], filters: [['is', 'device_type', ['bot']]], include_bots: true, limit: 1000 }).then((a) => () => {
      const rows = foldRows(a.rows, 'browser', 'events', (browser) => (CRAWLER_OPERATOR.has(browser) ? browser : undefined));
      renderList('list-ai-crawlers', 'Hits', rows.map((r) => ({ key: r.key, label: r.key, value: r.value, extra: CRAWLER_OPERATOR.get(r.key) })));
    }),
    // A share link with a segment cannot read the property keys (that read takes no filters): the panel is left out.
    ...(inShare() && shareHasSegment() ? [] : [loadProperties(api, state, range, ask, current, select)]),
    loadGoals(api, state, nav),
    // The saved lists (asked beside the panels unless the address names a saved one): drawn when they arrive.
    listing.then(() => {
      if (current()) renderSaved(nav.now());
    }),
    // No raw events through a share link.
    ...(inShare() ? [] : [Promise.all([api.query({ ...range, event: eventOf(state), limit: 20 }), headline]).then(([a, totals]) => () => renderRecent(a.rows, num(totals.rows[0], 'events')))]),
  ];
  const outcomes = await Promise.allSettled(panels);
  if (!current()) return;
  for (const o of outcomes) if (o.status === 'fulfilled' && typeof o.value === 'function') o.value();
  $('updating').hidden = true;
  const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failure) {
    const e = failure.reason;
    if (e instanceof ApiRefusal && e.keyRefused && inShare()) {
      // The link was revoked or has expired, or its unlock's hour is over: opened again (or said to be invalid).
      stopLive();
      return shareRefused(() => void show());
    }
    if (e instanceof ApiRefusal && e.keyRefused && signedIn()) {
      // The session's read key expired or was revoked: a new one, or access has ended.
      stopLive();
      return readKeyRefused();
    }
    if (e instanceof ApiRefusal && e.keyRefused) {
      sessionStorage.removeItem(KEY_ITEM);
      stopLive();
      showSignIn(e.message);
      return;
    }
    $('load-error').textContent = e instanceof Error ? e.message : String(e);
    $('load-error').hidden = false;
  }
  document.body.dataset['state'] = 'loaded';
  // Navigation to every panel filled: what tools/bench/dashboard.mjs measures.
  performance.mark('dashboard-filled');
}

/**
 * The properties panel: the range's keys (GET /v1/properties, most used first) in a picker, and the chosen key's values
 * by visitors (insights `prop:<key>` with the view's filters), each a filter too. The chosen key is `prop=` in the URL.
 */
async function loadProperties(
  api: Api,
  state: ViewState,
  range: { from: string; to: string },
  ask: (q: PanelQuery) => ReturnType<Api['insights']>,
  current: () => boolean,
  select: (dimension: string, value: string | null) => (() => void) | undefined,
): Promise<(() => void) | void> {
  const keys = (await api.properties({ ...range })).rows.map((r) => r.key ?? '').filter((k) => k !== '');
  if (!current()) return;
  // A key from the URL is kept even when this range has none of it (its list is then empty).
  const key = state.prop ?? keys[0];
  const options = key && !keys.includes(key) ? [key, ...keys] : keys;
  const showPicker = () => {
    const picker = $<HTMLSelectElement>('prop-key');
    picker.replaceChildren(...options.map((k) => el('option', { value: k, textContent: k, selected: k === key })));
    picker.disabled = options.length === 0;
    picker.onchange = () => navigate({ ...nav.now(), prop: picker.value });
  };
  if (!key) {
    return () => {
      showPicker();
      renderList('list-props', 'Visitors', []);
    };
  }
  const d = `prop:${key}`;
  const a = await ask({ metrics: ['visitors'], dimensions: [d], limit: LIST_LIMIT });
  return () => {
    showPicker();
    renderList(
      'list-props',
      'Visitors',
      a.rows.map((r) => {
        const v = dim(r, d);
        return { key: v ?? '', label: v === null ? '(not set)' : v || '(empty)', value: num(r, 'visitors'), onSelect: select(d, v) };
      }),
    );
  };
}

/**
 * The newest events, bots' too (GET /v1/query returns every stored event), each bot's marked: the figures above leave
 * bots out, so a site tried only from a headless browser says why its totals stay at 0. `counted`: the events the
 * headline counts for the same range and filters.
 */
function renderRecent(rows: QueryRow[], counted: number): void {
  const body = $('recent').querySelector('tbody')!;
  const bots = rows.filter((r) => r.device_type === 'bot').length;
  const note = $('recent-bots');
  note.hidden = bots === 0;
  note.textContent =
    bots === 0
      ? ''
      : counted === 0
        ? `These ${bots === rows.length ? '' : `${bots} of the `}events came from bots or automated browsers (a headless Chrome is one): they are stored, but the figures above leave bots out, so they show 0.`
        : `${bots} of these events came from bots or automated browsers (marked "bot"): the figures above leave them out.`;
  body.replaceChildren(
    ...rows.map((r) => {
      let props = '';
      try {
        const parsed = JSON.parse(r.properties || '{}') as Record<string, unknown>;
        props = Object.entries(parsed)
          .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join(', ');
      } catch {
        props = r.properties;
      }
      const time = r.timestamp.replace('T', ' ').slice(0, 19);
      const device = r.device_type === 'bot' ? el('td', {}, el('span', { className: 'bot-badge', title: 'A bot or automated browser: not counted in the figures' }, 'bot')) : el('td', {}, r.device_type);
      const tr = el('tr', {}, el('td', {}, time), el('td', {}, r.event_name), el('td', {}, r.path ?? ''), el('td', {}, `${r.source} / ${r.medium}`), el('td', {}, r.country || '–'), device, el('td', { className: 'props' }, props));
      if (r.device_type === 'bot') tr.dataset['bot'] = 'true';
      return tr;
    }),
  );
  if (rows.length === 0) body.append(el('tr', {}, el('td', { colSpan: 7, className: 'empty' }, 'No events in this range.')));
}

// ---- controls and navigation ----

function renderControls(state: ViewState): void {
  const active = presetOf(state.range, Date.now(), projectZone());
  $('range-buttons').replaceChildren(
    ...PRESETS.map((p) => {
      const b = el('button', { type: 'button', className: 'range', textContent: p.label, onclick: () => navigate({ ...state, range: presetRange(p.id, Date.now(), projectZone()) }) });
      b.dataset['preset'] = p.id;
      b.setAttribute('aria-pressed', String(p.id === active));
      return b;
    }),
  );
  $<HTMLInputElement>('custom-from').value = dayString(state.range.from);
  $<HTMLInputElement>('custom-to').value = dayString(state.range.to - DAY_MS);
  renderFilters(state);
  const compare = $<HTMLInputElement>('compare');
  compare.checked = state.compare;
  compare.onchange = () => navigate({ ...state, compare: compare.checked });
}

/** The Export button: the range shown and its event filter (exportScopeOf; the note says what it leaves out) as a CSV download, fetched with the key, saved by the browser. */
async function exportCsv(api: Api, state: ViewState): Promise<void> {
  const button = $<HTMLButtonElement>('export-csv');
  button.disabled = true;
  button.textContent = 'Exporting…';
  try {
    const { blob, name } = await api.exportCsv({ from: dayString(state.range.from), to: dayString(state.range.to), event: exportScopeOf(state.filters).event, ...segmentOf(state) });
    const url = URL.createObjectURL(blob);
    const link = el('a', { href: url, download: name });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  } catch (e) {
    $('load-error').textContent = e instanceof Error ? e.message : String(e);
    $('load-error').hidden = false;
  } finally {
    button.disabled = false;
    button.textContent = 'Export CSV';
  }
}

function navigate(state: ViewState): void {
  history.pushState(null, '', writeState(state));
  // What is on screen is the previous view's until the new load begins (after the read key and the saved lists).
  document.body.dataset['state'] = 'loading';
  void show();
}

let shownState: ViewState | undefined;
let shownApi: Api | undefined;

/** A change to the goals or to the open view: only that part is asked again (the other panels are unchanged). */
function navigatePart(state: ViewState, part: 'goals' | 'view'): void {
  if (!shownApi) return navigate(state);
  history.pushState(null, '', writeState(state));
  shownState = state;
  renderControls(state);
  renderSaved(state);
  void (part === 'goals' ? loadGoals(shownApi, state, nav) : loadView(shownApi, state, nav));
}

/** The state drawn again after a saved one changed (saved, renamed, deleted): the goals and the open view asked again. */
function redraw(state: ViewState, push: boolean): void {
  if (!shownApi) return navigate(state);
  history[push ? 'pushState' : 'replaceState'](null, '', writeState(state));
  shownState = state;
  renderControls(state);
  renderSaved(state);
  void loadGoals(shownApi, state, nav);
  void loadView(shownApi, state, nav);
}

const nav: Nav = {
  full: navigate,
  part: navigatePart,
  now: () => shownState ?? readState(location.search, Date.now(), projectZone()),
  dimensionLabel,
  valueLabel: (dimension, value) => (dimension === 'channel' ? channelLabel(value) : dimension === 'source' ? sourceLabelOf(value) : value),
};

/** The dashboard, read with the pasted key or (signed in) the session's read key of the current project. */
async function show(): Promise<void> {
  if (inShare()) return showShared();
  const key = signedIn() ? await readKey() : sessionStorage.getItem(KEY_ITEM);
  if (!key) return signedIn() ? undefined : showSignIn();
  const api = createApi(key);
  const project = signedIn() ? currentProject() : undefined;
  const listing = loadSaved(project ? { projectId: project.id } : { api, key });
  await learnZone(api, key, project ? (project.timezone ?? 'UTC') : undefined);
  // A view naming a saved one waits for the lists; saved ids the project no longer has (deleted meanwhile) leave the
  // view and the address.
  const read = readState(location.search, Date.now(), projectZone());
  if (namesSaved(read)) await listing;
  const state = withKnownSaved(read, savedLists());
  if (state !== read) history.replaceState(null, '', writeState(state));
  shownState = state;
  shownApi = api;
  showOnly('dashboard');
  $('sign-out').hidden = false;
  $('export-csv').hidden = false;
  $('export-csv').onclick = () => void exportCsv(api, state);
  renderSaved(state);
  showShareButton(true);
  useLiveApi(api);
  showView(api, state, listing);
}

/** A share link's dashboard (share.ts): its credential, the goals and funnel saved for the project, no export. */
async function showShared(): Promise<void> {
  const key = shareCredential();
  if (!key) return;
  const api = createApi(key);
  // The link's project's time zone (GET /v1/project takes a share credential), as the signed-in page counts days.
  await learnZone(api, key);
  const state = await withSavedDefinitions(readState(location.search, Date.now(), projectZone()));
  shownState = state;
  shownApi = api;
  $('dashboard').hidden = false;
  // A link's segment holds every read to it: the property keys cannot be (that read takes no filters).
  $('list-props').hidden = shareHasSegment();
  renderShareSegment();
  showView(api, state);
}

/** Every 30 s: the last 30 minutes' visitors, and the headline while the range includes now (it moves as events arrive). */
function startRefresh(api: Api, state: ViewState): void {
  stopLive();
  liveTimer = window.setInterval(() => {
    void refreshLive(api, state).then((showLive) => showLive(), () => undefined);
    if (includesNow(state)) void refreshHeadline(api, state).catch(() => undefined);
  }, LIVE_REFRESH_MS);
}

/** The refresh stopped (saved.ts, while the applied segment is deleted); what starts it again for the view shown. */
function holdRefresh(): () => void {
  if (liveTimer === undefined) return () => undefined;
  stopLive();
  const [api, state] = [shownApi, shownState];
  return () => {
    if (api && state && api === shownApi && state === shownState && liveTimer === undefined) startRefresh(api, state);
  };
}

/** The controls, the live figure and every panel of `state`, read with `api`. */
function showView(api: Api, state: ViewState, listing?: Promise<void>): void {
  renderControls(state);
  startRefresh(api, state);
  void load(api, state, listing);
  void loadView(api, state, nav);
}

function start(): void {
  if (inShare()) return startShared();
  const keyWasInUrl = dropKeyFromUrl();
  $('key-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const key = $<HTMLInputElement>('key-input').value.trim();
    if (!key) return;
    sessionStorage.setItem(KEY_ITEM, key);
    $<HTMLInputElement>('key-input').value = '';
    void show();
  });
  $('sign-out').addEventListener('click', signOut);
  setUpConversionForms(nav);
  setUpSaved({ now: nav.now, full: navigate, part: navigatePart, redraw, hold: holdRefresh });
  setUpShareDialog(() => nav.now().segment);
  setUpAnnotations(() => navigate(nav.now()), projectZone);
  setUpLive();
  setUpRangeAndChart(() => void route());
  const leaveDashboard = () => {
    stopLive();
    useLiveApi(undefined);
    showShareButton(false);
    forgetSaved();
  };
  void startPeople({ showDashboard: () => void show(), leaveDashboard }, keyWasInUrl && !sessionStorage.getItem(KEY_ITEM) ? KEY_IN_URL : '');
}

/** The custom range form, back and forward (`onPopState`), and the chart following the window's width: both pages. */
function setUpRangeAndChart(onPopState: () => void): void {
  $('custom-range').addEventListener('submit', (e) => {
    e.preventDefault();
    const from = parseDay($<HTMLInputElement>('custom-from').value);
    const last = parseDay($<HTMLInputElement>('custom-to').value);
    if (from === undefined || last === undefined || last < from) return;
    navigate({ ...readState(location.search, Date.now(), projectZone()), range: { from, to: last + DAY_MS } });
  });
  window.addEventListener('popstate', onPopState);
  let resizeTimer: number | undefined;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = window.setTimeout(() => chart?.setSize({ width: Math.max(280, $('chart').clientWidth), height: 240 }), 100);
  });
}

/** A share link's page (/share/<token>): no sign-in, no keys; the dashboard's controls and panels, read-only. */
function startShared(): void {
  setUpConversionForms(nav);
  setUpRangeAndChart(() => void show());
  startShare(() => void show());
}

start();
