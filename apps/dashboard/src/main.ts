import type uPlot from 'uplot';
import { aiAssistantOfSource } from '@analytics/classifier/ai-assistants';
import { AI_CRAWLERS } from '@analytics/enrichment/ai-crawlers';
import type { QueryRow, StatsGroupBy, StatsRow } from '@analytics/schema';
import { type Api, ApiRefusal, createApi } from './api';
import { drawChart } from './chart';
import {
  DAY_MS,
  PRESETS,
  type ViewState,
  bucketStarts,
  bucketValues,
  changePercent,
  dayString,
  flagOf,
  intervalFor,
  parseDay,
  presetOf,
  presetRange,
  previousRange,
  readState,
  writeState,
} from './state';

const KEY_ITEM = 'analytics.readKey';
const LIVE_REFRESH_MS = 30_000;
const LIST_LIMIT = 10;

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const exact = new Intl.NumberFormat('en');
const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });
const percent = new Intl.NumberFormat('en', { maximumFractionDigits: 0, signDisplay: 'exceptZero' });
const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

/** A number as shown: compact from 100,000 up, the exact value in `title` (hover) and `data-value` (tests). */
function setNumber(el: HTMLElement, n: number): void {
  el.textContent = n >= 100_000 ? compact.format(n) : exact.format(n);
  el.title = exact.format(n);
  el.dataset['value'] = String(n);
}

const el = <K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: (Node | string)[]) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
};

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

function showSignIn(message = ''): void {
  $('dashboard').hidden = true;
  $('sign-out').hidden = true;
  $('export-csv').hidden = true;
  $('sign-in').hidden = false;
  $('key-error').textContent = message;
  $<HTMLInputElement>('key-input').focus();
}

function signOut(): void {
  sessionStorage.removeItem(KEY_ITEM);
  stopLive();
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

function renderStat(id: string, current: number, previous: number): void {
  const box = $(id);
  setNumber(box.querySelector<HTMLElement>('.value')!, current);
  const change = changePercent(current, previous);
  const text = box.querySelector<HTMLElement>('.change')!;
  text.textContent = change === undefined ? 'nothing in the previous period' : `${percent.format(change)}% vs previous period`;
  text.className = `change ${change === undefined || Math.round(change) === 0 ? '' : change > 0 ? 'up' : 'down'}`;
}

const single = (rows: StatsRow[]) => Number(rows[0]?.value ?? 0);
const cell = (row: StatsRow, column: StatsGroupBy) => (row[column] === null || row[column] === undefined ? '' : String(row[column]));

function countryLabel(code: string): Node {
  if (!code) return document.createTextNode('Unknown');
  let name = code;
  try {
    name = regionNames.of(code) ?? code;
  } catch {
    name = code;
  }
  return el('span', {}, el('span', { className: 'flag', ariaHidden: 'true' }, flagOf(code)), ` ${name}`);
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

/**
 * Rows grouped by a second column, kept where the first column has `value`, folded by `keyOf` (rows whose key is
 * undefined are dropped) and summed: counts add up exactly. Largest first, then by key.
 */
function foldRows(rows: StatsRow[], where: [StatsGroupBy, string], by: StatsGroupBy, keyOf: (value: string) => string | undefined): { key: string; value: number }[] {
  const sums = new Map<string, number>();
  for (const r of rows) {
    if (cell(r, where[0]) !== where[1]) continue;
    const key = keyOf(cell(r, by));
    if (key !== undefined) sums.set(key, (sums.get(key) ?? 0) + Number(r.value));
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

async function refreshLive(api: Api, state: ViewState): Promise<void> {
  const now = Date.now();
  const answer = await api.stats({ metric: 'uniques', from: new Date(now - 30 * 60_000).toISOString(), to: new Date(now + 1000).toISOString(), event: state.event });
  setNumber($('stat-live').querySelector<HTMLElement>('.value')!, single(answer.rows));
}

async function load(api: Api, state: ViewState): Promise<void> {
  const mine = ++generation;
  document.body.dataset['state'] = 'loading';
  $('load-error').hidden = true;
  const range = { from: dayString(state.range.from), to: dayString(state.range.to) };
  const prev = previousRange(state.range);
  const previous = { from: dayString(prev.from), to: dayString(prev.to) };
  const event = state.event;
  const interval = intervalFor(state.range);
  const listEvent = event ?? '$pageview';
  const current = () => mine === generation;

  // The range's visitors and pageviews feed both the headline and the chart's legend.
  const visitors = api.stats({ metric: 'uniques', ...range, event });
  const pageviews = api.stats({ ...range, event: '$pageview' });
  const panels: Promise<void>[] = [
    Promise.all([visitors, api.stats({ metric: 'uniques', ...previous, event })]).then(([a, b]) => {
      if (current()) renderStat('stat-visitors', single(a.rows), single(b.rows));
    }),
    Promise.all([pageviews, api.stats({ ...previous, event: '$pageview' })]).then(([a, b]) => {
      if (current()) renderStat('stat-pageviews', single(a.rows), single(b.rows));
    }),
    Promise.all([api.stats({ ...range, event }), api.stats({ ...previous, event })]).then(([a, b]) => {
      if (current()) renderStat('stat-events', single(a.rows), single(b.rows));
    }),
    refreshLive(api, state),
    Promise.all([api.stats({ metric: 'uniques', ...range, event, interval, limit: 1000 }), api.stats({ ...range, event: '$pageview', interval, limit: 1000 }), visitors, pageviews]).then(([v, p, vt, pt]) => {
      if (!current()) return;
      const buckets = bucketStarts(state.range, interval);
      const now = Date.now();
      chart?.destroy();
      chart = drawChart($('chart'), { buckets, visitors: bucketValues(buckets, v.rows, now), pageviews: bucketValues(buckets, p.rows, now), totals: { visitors: single(vt.rows), pageviews: single(pt.rows) } }, interval);
    }),
    api.sources({ ...range, limit: LIST_LIMIT }).then((a) => {
      if (!current()) return;
      const rows = [...a.rows].sort((x, y) => y.uniques - x.uniques || y.events - x.events);
      renderList(
        'list-sources',
        'Visitors',
        rows.map((r) => ({
          key: `${r.source}/${r.medium ?? ''}`,
          label: `${r.source} / ${r.medium ?? ''}`,
          value: r.uniques,
          extra: r.paid_share > 0 ? `paid ${Math.round(r.paid_share * 100)}%` : undefined,
        })),
      );
    }),
    statsList(api, 'list-channels', 'Visitors', { metric: 'uniques', ...range, event }, 'channel', channelLabel),
    // Pageviews from the AI assistant channel by assistant: one assistant arrives under several sources (a
    // chatgpt.com referrer, utm_source=chatgpt.com), which counts add up across and visitor estimates would not.
    api.stats({ ...range, event: '$pageview', group_by: 'channel,source', limit: 1000 }).then((a) => {
      if (!current()) return;
      const rows = foldRows(a.rows, ['channel', 'ai_assistant'], 'source', (source) => aiAssistantOfSource(source) ?? source);
      renderList('list-ai-assistants', 'Pageviews', rows.map((r) => ({ key: r.key, label: r.key, value: r.value })));
    }),
    // Every event an AI company's crawler sent (device_type bot, browser the crawler's name).
    api.stats({ ...range, event, group_by: 'device_type,browser', limit: 1000 }).then((a) => {
      if (!current()) return;
      const rows = foldRows(a.rows, ['device_type', 'bot'], 'browser', (browser) => (CRAWLER_OPERATOR.has(browser) ? browser : undefined));
      renderList('list-ai-crawlers', 'Hits', rows.map((r) => ({ key: r.key, label: r.key, value: r.value, extra: CRAWLER_OPERATOR.get(r.key) })));
    }),
    statsList(api, 'list-pages', listEvent === '$pageview' ? 'Pageviews' : 'Events', { metric: 'count', ...range, event: listEvent }, 'path', (v) => v || '(no path)'),
    statsList(api, 'list-countries', 'Visitors', { metric: 'uniques', ...range, event }, 'country', countryLabel),
    statsList(api, 'list-devices', 'Visitors', { metric: 'uniques', ...range, event }, 'device_type', labelOrUnknown),
    statsList(api, 'list-browsers', 'Visitors', { metric: 'uniques', ...range, event }, 'browser', labelOrUnknown),
    statsList(api, 'list-os', 'Visitors', { metric: 'uniques', ...range, event }, 'os', labelOrUnknown),
    api.stats({ ...range, event, group_by: 'event_name', limit: LIST_LIMIT }).then((a) => {
      if (!current()) return;
      renderList(
        'list-events',
        'Events',
        a.rows.map((r) => ({ key: cell(r, 'event_name'), label: cell(r, 'event_name'), value: Number(r.value), onSelect: () => navigate({ ...state, event: cell(r, 'event_name') }) })),
      );
    }),
    api.query({ ...range, event, limit: 20 }).then((a) => {
      if (current()) renderRecent(a.rows);
    }),
  ];
  const outcomes = await Promise.allSettled(panels);
  if (!current()) return;
  const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failure) {
    const e = failure.reason;
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

  function statsList(api: Api, id: string, header: string, params: Record<string, string | undefined>, column: StatsGroupBy, label: (v: string) => string | Node): Promise<void> {
    return api.stats({ ...params, group_by: column, limit: LIST_LIMIT }).then((a) => {
      if (!current()) return;
      renderList(id, header, a.rows.map((r) => ({ key: cell(r, column), label: label(cell(r, column)), value: Number(r.value) })));
    });
  }
}

function renderRecent(rows: QueryRow[]): void {
  const body = $('recent').querySelector('tbody')!;
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
      return el('tr', {}, el('td', {}, time), el('td', {}, r.event_name), el('td', {}, r.path ?? ''), el('td', {}, `${r.source} / ${r.medium}`), el('td', {}, r.country || '–'), el('td', {}, r.device_type), el('td', { className: 'props' }, props));
    }),
  );
  if (rows.length === 0) body.append(el('tr', {}, el('td', { colSpan: 7, className: 'empty' }, 'No events in this range.')));
}

// ---- controls and navigation ----

function renderControls(state: ViewState): void {
  const active = presetOf(state.range, Date.now());
  $('range-buttons').replaceChildren(
    ...PRESETS.map((p) => {
      const b = el('button', { type: 'button', className: 'range', textContent: p.label, onclick: () => navigate({ ...state, range: presetRange(p.id, Date.now()) }) });
      b.dataset['preset'] = p.id;
      b.setAttribute('aria-pressed', String(p.id === active));
      return b;
    }),
  );
  $<HTMLInputElement>('custom-from').value = dayString(state.range.from);
  $<HTMLInputElement>('custom-to').value = dayString(state.range.to - DAY_MS);
  $('filter').hidden = !state.event;
  $('filter-name').textContent = state.event ?? '';
}

/** The Export button: the range shown (and its event filter) as a CSV download, fetched with the key, saved by the browser. */
async function exportCsv(api: Api, state: ViewState): Promise<void> {
  const button = $<HTMLButtonElement>('export-csv');
  button.disabled = true;
  button.textContent = 'Exporting…';
  try {
    const { blob, name } = await api.exportCsv({ from: dayString(state.range.from), to: dayString(state.range.to), event: state.event });
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
  show();
}

function show(): void {
  const key = sessionStorage.getItem(KEY_ITEM);
  if (!key) return showSignIn();
  const api = createApi(key);
  const state = readState(location.search, Date.now());
  $('sign-in').hidden = true;
  $('dashboard').hidden = false;
  $('sign-out').hidden = false;
  $('export-csv').hidden = false;
  $('export-csv').onclick = () => void exportCsv(api, state);
  renderControls(state);
  stopLive();
  liveTimer = window.setInterval(() => void refreshLive(api, state).catch(() => undefined), LIVE_REFRESH_MS);
  void load(api, state);
}

function start(): void {
  const keyWasInUrl = dropKeyFromUrl();
  $('key-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const key = $<HTMLInputElement>('key-input').value.trim();
    if (!key) return;
    sessionStorage.setItem(KEY_ITEM, key);
    $<HTMLInputElement>('key-input').value = '';
    show();
  });
  $('sign-out').addEventListener('click', signOut);
  $('clear-filter').addEventListener('click', () => navigate({ ...readState(location.search, Date.now()), event: undefined }));
  $('custom-range').addEventListener('submit', (e) => {
    e.preventDefault();
    const from = parseDay($<HTMLInputElement>('custom-from').value);
    const last = parseDay($<HTMLInputElement>('custom-to').value);
    if (from === undefined || last === undefined || last < from) return;
    navigate({ ...readState(location.search, Date.now()), range: { from, to: last + DAY_MS } });
  });
  window.addEventListener('popstate', show);
  let resizeTimer: number | undefined;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = window.setTimeout(() => chart?.setSize({ width: Math.max(280, $('chart').clientWidth), height: 240 }), 100);
  });
  if (keyWasInUrl && !sessionStorage.getItem(KEY_ITEM)) showSignIn(KEY_IN_URL);
  else show();
}

start();
