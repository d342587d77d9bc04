// Issue 31 on the dashboard: the Goals panel (insights `goal` with conversions and conversion_rate), the Funnel view
// (POST /v1/funnel) and the Retention grid (POST /v1/retention). The views' calls run only while a view is open.
import type { FunnelResponse, RetentionResponse } from '@analytics/schema';
import type { Api } from './api';
import { $, durationText, el, setNumber, setShare } from './dom';
import { savedGoalName, savedLists, stepText } from './saved';
import { funnelDefinition, goalBodyOf, segmentOf } from './saved-state';
import {
  FUNNEL_BREAKDOWNS,
  FUNNEL_STEPS,
  type ConversionView,
  type Filter,
  type Goal,
  type ViewState,
  conditionsOf,
  dayString,
  formatGoal,
  goalFilters,
  goalOf,
  goalText,
  withFilter,
  unsaved,
  withGoal,
  withStep,
  withoutGoal,
  withoutStep,
} from './state';

/** How the panels change the view: a full navigation (every panel asked again) or only the part that changed. */
export interface Nav {
  full: (state: ViewState) => void;
  part: (state: ViewState, part: 'goals' | 'view') => void;
  /** The state shown now (a click reads it then, not when its button was drawn). */
  now: () => ViewState;
  dimensionLabel: (dimension: string) => string;
  /** A dimension's value as the lists show it (a channel's name). */
  valueLabel: (dimension: string, value: string) => string;
}

const exact = new Intl.NumberFormat('en');
const rangeOf = (state: ViewState) => ({ from: dayString(state.range.from), to: dayString(state.range.to) });
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

const WINDOWS: ReadonlyArray<[number, string]> = [
  [3_600, '1 hour'],
  [86_400, '1 day'],
  [604_800, '7 days'],
  [2_592_000, '30 days'],
];
const PERIOD_LABELS: Readonly<Record<string, string>> = { day: 'Day', week: 'Week', month: 'Month' };

/**
 * What the API's `notes` mean, in words for a site owner: the one note the API has today is about daily visitor ids;
 * any other note is shown as the API wrote it.
 */
function showNotes(id: string, notes: readonly string[] | undefined, what: string): void {
  const box = $(id);
  box.hidden = !notes?.length;
  box.replaceChildren(
    ...(notes ?? []).map((n) =>
      el(
        'p',
        {},
        /daily ids/i.test(n)
          ? `Most visitors here have daily ids (the browser script's default, persistence: 'none', gives everyone a new id every day), so someone who comes back on another day counts as a new visitor: ${what} cannot follow people across days and undercounts them. Count by users to follow people across days, once your site sends a user id (identify).`
          : n,
      ),
    ),
  );
}

// ---- Goals ----

let goalsGeneration = 0;

/** One insights call per goal: conversions and conversion rate with the view's filters; a goal is a filter when clicked. */
export async function loadGoals(api: Api, state: ViewState, nav: Nav): Promise<void> {
  const mine = ++goalsGeneration;
  const box = $('list-goals');
  box.dataset['state'] = 'loading';
  const body = $('goals-body');
  try {
    if (state.goals.length === 0) {
      body.replaceChildren(el('p', { className: 'empty' }, 'No goals yet: add an event name, a page (a final * for every page under it: /blog/*) or both.'));
      return;
    }
    const filters = conditionsOf(state.filters);
    // A saved goal (issue 46) is asked with its definition as saved; one no longer listed is left out.
    const saved = savedLists();
    const goals = state.goals.flatMap((g) => {
      const body = goalBodyOf(g, saved);
      return body ? [{ g, body, text: g.id === undefined ? goalText(g) : savedGoalName(g.id) }] : [];
    });
    const answers = await Promise.all(goals.map(({ body }) => api.insights({ ...rangeOf(state), metrics: ['conversions', 'conversion_rate'], goal: body as Goal, filters, ...segmentOf(state) })));
    if (mine !== goalsGeneration) return;
    const list = el('ol', { className: 'bars' });
    goals.forEach(({ g, body, text }, j) => {
      const i = state.goals.indexOf(g);
      const row = answers[j]!.rows[0];
      const conversions = Number(row?.['conversions'] ?? 0);
      const rate = Number(row?.['conversion_rate'] ?? 0);
      const bar = el('span', { className: 'bar' });
      bar.style.width = `${rate * 100}%`;
      // A saved goal with conditions of its own cannot be one click's filters (they are not all `is`).
      const adds = body.filters?.length ? undefined : goalFilters(body);
      const label = adds
        ? el('button', { type: 'button', className: 'link', title: 'Filter to the events that complete this goal', onclick: () => nav.full(adds.reduce((s: ViewState, f: Filter) => withFilter(s, f), nav.now())) }, text)
        : el('span', { title: body.filters?.length ? 'A saved goal with conditions of its own cannot be a filter' : 'A page prefix cannot be a filter (filters match a page exactly)' }, text);
      const count = el('span', { className: 'count' });
      setNumber(count, conversions);
      const share = el('span', { className: 'extra rate' });
      setShare(share, rate);
      const remove = el('button', { type: 'button', className: 'remove', onclick: () => nav.part(withoutGoal(nav.now(), i), 'goals') }, '×');
      remove.setAttribute('aria-label', `Remove goal ${text}`);
      const li = el('li', {}, bar, el('span', { className: 'label' }, label, share), el('span', { className: 'figures' }, count, remove));
      li.dataset['key'] = formatGoal(g);
      list.append(li);
    });
    body.replaceChildren(el('p', { className: 'list-header' }, el('span', {}, 'Goal · conversion rate'), el('span', {}, 'Conversions')), list);
  } catch (e) {
    if (mine === goalsGeneration) body.replaceChildren(el('p', { className: 'error' }, message(e)));
  } finally {
    if (mine === goalsGeneration) box.dataset['state'] = 'loaded';
  }
}

// ---- the views ----

function fillSelect(id: string, options: ReadonlyArray<[string, string]>, value: string, onChange: (value: string) => void): void {
  const select = $<HTMLSelectElement>(id);
  select.replaceChildren(...options.map(([v, text]) => el('option', { value: v, textContent: text, selected: v === value })));
  select.onchange = () => onChange(select.value);
}

/** The view tabs and each view's options as the state says; no call. */
function renderViewControls(state: ViewState, nav: Nav): void {
  for (const view of ['funnel', 'retention'] as const) {
    const open = state.view === view;
    $(`view-${view}`).setAttribute('aria-pressed', String(open));
    $(`view-${view}`).onclick = () => {
      const now = nav.now();
      nav.part({ ...now, view: now.view === view ? undefined : (view as ConversionView) }, 'view');
    };
    $(`${view}-view`).hidden = !open;
  }
  const f = state.funnel;
  const windows = WINDOWS.some(([w]) => w === f.window) ? WINDOWS : [...WINDOWS, [f.window, `${exact.format(f.window)} s`] as [number, string]];
  fillSelect('funnel-window', windows.map(([w, t]) => [String(w), t]), String(f.window), (v) => nav.part({ ...nav.now(), funnel: { ...unsaved(nav.now().funnel), window: Number(v) } }, 'view'));
  fillSelect('funnel-count', [['visitor', 'Visitors'], ['user', 'Users'], ['session', 'Visits']], f.countBy, (v) => nav.part({ ...nav.now(), funnel: { ...unsaved(nav.now().funnel), countBy: v as ViewState['funnel']['countBy'] } }, 'view'));
  fillSelect('funnel-breakdown', [['', 'None'], ...FUNNEL_BREAKDOWNS.map((d): [string, string] => [d, nav.dimensionLabel(d)])], f.breakdown ?? '', (v) => {
    const { breakdown: _, ...funnel } = nav.now().funnel;
    nav.part({ ...nav.now(), funnel: v ? { ...funnel, breakdown: v } : funnel }, 'view');
  });
  const r = state.retention;
  fillSelect('retention-period', [['day', 'Days'], ['week', 'Weeks'], ['month', 'Months']], r.period, (v) => nav.part({ ...nav.now(), retention: { ...nav.now().retention, period: v as ViewState['retention']['period'] } }, 'view'));
  fillSelect('retention-count', [['user', 'Users'], ['visitor', 'Visitors']], r.countBy, (v) => nav.part({ ...nav.now(), retention: { ...nav.now().retention, countBy: v as ViewState['retention']['countBy'] } }, 'view'));
  $<HTMLButtonElement>('step-add').disabled = f.steps.length >= FUNNEL_STEPS.max;
}

function renderFunnel(state: ViewState, nav: Nav, answer: FunnelResponse | undefined): void {
  const steps = state.funnel.steps;
  const list = el('ol', { className: 'funnel' });
  steps.forEach((g, i) => {
    const remove = el('button', { type: 'button', className: 'remove', onclick: () => nav.part(withoutStep(nav.now(), i), 'view') }, '×');
    remove.setAttribute('aria-label', `Remove step ${i + 1}: ${stepText(g)}`);
    const li = el('li', {}, el('div', { className: 'step-head' }, el('span', { className: 'step-name' }, `${i + 1}. ${stepText(g)}`), remove));
    li.dataset['index'] = String(i + 1);
    const s = answer?.steps[i];
    if (s) {
      const fill = el('span', { className: 'step-fill' });
      fill.style.width = `${s.conversion_rate * 100}%`;
      const count = el('span', { className: 'count' });
      setNumber(count, s.count);
      const rate = el('span', { className: 'rate' });
      setShare(rate, s.conversion_rate);
      const drop = el('span', { className: 'drop' }, i === 0 ? '' : ` · ${exact.format(s.drop_off)} dropped off`);
      drop.dataset['value'] = String(s.drop_off);
      const median = s.median_time_to_convert_s;
      const time = el('span', { className: 'median' }, median === null ? '' : ` · median ${durationText(median)} after step ${i}`);
      time.dataset['value'] = median === null ? '' : String(median);
      li.append(el('div', { className: 'step-bar' }, fill), el('p', { className: 'step-figures' }, count, ' · ', rate, drop, time));
    }
    list.append(li);
  });
  const parts: Node[] = [list];
  if (steps.length < FUNNEL_STEPS.min) parts.push(el('p', { className: 'empty' }, `Add ${steps.length ? 'a second step' : 'at least two steps'}, in order: an event name, a page, or both.`));
  const rows = answer?.breakdown;
  const by = state.funnel.breakdown;
  if (rows && by) {
    const shown = rows.slice(0, 10);
    const head = el('tr', {}, el('th', { scope: 'col' }, nav.dimensionLabel(by)), ...steps.map((_, i) => el('th', { scope: 'col' }, `Step ${i + 1}`)));
    const body = shown.map((b) => {
      const tr = el(
        'tr',
        {},
        el('th', { scope: 'row' }, b.value === null ? '(none)' : nav.valueLabel(by, b.value) || '(empty)'),
        ...b.steps.map((s) => {
          const count = el('span', { className: 'count' });
          setNumber(count, s.count);
          const rate = el('span', { className: 'rate' });
          setShare(rate, s.conversion_rate);
          return el('td', {}, count, ' ', rate);
        }),
      );
      tr.dataset['value'] = b.value ?? '';
      return tr;
    });
    const table = el('table', { id: 'funnel-breakdown-table' }, el('thead', {}, head), el('tbody', {}, ...body));
    const wrap = el('div', { className: 'table-wrap', tabIndex: 0 }, table);
    wrap.setAttribute('role', 'region');
    wrap.setAttribute('aria-label', 'Funnel by breakdown value');
    parts.push(wrap);
    if (rows.length > shown.length) parts.push(el('p', { className: 'notes' }, `The ${shown.length} values with the most entities at step 1, of ${rows.length}.`));
  }
  $('funnel-body').replaceChildren(...parts);
}

function renderRetention(state: ViewState, answer: RetentionResponse): void {
  const cohorts = answer.cohorts;
  if (cohorts.length === 0) {
    $('retention-body').replaceChildren(el('p', { className: 'empty' }, 'No cohorts in this range.'));
    return;
  }
  const periods = Math.max(...cohorts.map((c) => c.returned.length));
  const label = PERIOD_LABELS[state.retention.period]!;
  const head = el('tr', {}, el('th', { scope: 'col' }, 'Cohort'), el('th', { scope: 'col' }, 'Size'), ...Array.from({ length: periods }, (_, k) => el('th', { scope: 'col' }, `${label} ${k}`)));
  const body = cohorts.map((c) => {
    const size = el('td', { className: 'size' });
    setNumber(size, c.size);
    const cells = Array.from({ length: periods }, (_, k) => {
      const n = c.returned[k];
      if (n === undefined) return el('td', {});
      const count = el('span', { className: 'count' });
      setNumber(count, n);
      const share = c.size ? n / c.size : 0;
      const td = el('td', { className: 'cell', title: `${Math.round(share * 100)}% of ${exact.format(c.size)}` }, count, el('span', { className: 'share' }, `${Math.round(share * 100)}%`));
      td.style.setProperty('--share', String(share));
      return td;
    });
    // A cohort's period may begin before the range (a week starts on Monday, a month on the 1st): its label is the
    // range's first day then, the first day its entities can come from (the API's `cohort` stays in data-cohort).
    const first = dayString(state.range.from);
    const cohortLabel = c.cohort < first ? first : c.cohort;
    const tr = el('tr', {}, el('th', { scope: 'row', ...(cohortLabel === c.cohort ? {} : { title: `${PERIOD_LABELS[state.retention.period]} of ${c.cohort}, from the range's first day` }) }, cohortLabel), size, ...cells);
    tr.dataset['cohort'] = c.cohort;
    return tr;
  });
  const wrap = el('div', { className: 'table-wrap', tabIndex: 0 }, el('table', { id: 'retention-grid' }, el('thead', {}, head), el('tbody', {}, ...body)));
  wrap.setAttribute('role', 'region');
  wrap.setAttribute('aria-label', 'Retention by cohort');
  $('retention-body').replaceChildren(wrap);
}

let viewGeneration = 0;

/** The open view's one call (none when no view is open or a funnel has fewer than two steps), with the view's filters. */
export async function loadView(api: Api, state: ViewState, nav: Nav): Promise<void> {
  const mine = ++viewGeneration;
  const box = $('conversions');
  renderViewControls(state, nav);
  $('view-error').hidden = true;
  if (!state.view) {
    box.dataset['state'] = 'closed';
    return;
  }
  box.dataset['state'] = 'loading';
  const filters = conditionsOf(state.filters);
  try {
    if (state.view === 'funnel') {
      const f = state.funnel;
      renderFunnel(state, nav, undefined);
      showNotes('funnel-notes', undefined, 'this funnel');
      if (f.steps.length >= FUNNEL_STEPS.min) {
        // A saved funnel open as saved is asked with its own steps and filters (its steps' conditions kept).
        const saved = funnelDefinition(f, savedLists());
        const answer = await api.funnel({ ...rangeOf(state), steps: saved.steps as Goal[], window_s: f.window, count_by: f.countBy, ...(f.breakdown ? { breakdown: f.breakdown } : {}), filters: [...saved.filters, ...filters] as typeof filters, ...segmentOf(state) });
        if (mine !== viewGeneration) return;
        renderFunnel(state, nav, answer);
        showNotes('funnel-notes', answer.notes, 'this funnel');
      }
    } else {
      const answer = await api.retention({ ...rangeOf(state), period: state.retention.period, count_by: state.retention.countBy, filters, ...segmentOf(state) });
      if (mine !== viewGeneration) return;
      renderRetention(state, answer);
      showNotes('retention-notes', answer.notes, 'this grid');
    }
  } catch (e) {
    if (mine !== viewGeneration) return;
    $('view-error').textContent = message(e);
    $('view-error').hidden = false;
  }
  box.dataset['state'] = 'loaded';
}

/** The forms that define goals and funnel steps (set up once; they read the state when submitted). */
export function setUpConversionForms(nav: Nav): void {
  const form = (formId: string, eventId: string, pathId: string, errorId: string, apply: (s: ViewState, g: NonNullable<ReturnType<typeof goalOf>>) => [ViewState, 'goals' | 'view']) => {
    $(formId).addEventListener('submit', (e) => {
      e.preventDefault();
      const event = $<HTMLInputElement>(eventId);
      const path = $<HTMLInputElement>(pathId);
      const g = goalOf(event.value, path.value);
      $(errorId).textContent = g ? '' : 'Give an event name, a page (/pricing, or /blog/* for every page under /blog/), or both.';
      if (!g) return;
      event.value = '';
      path.value = '';
      nav.part(...apply(nav.now(), g));
    });
  };
  form('goal-form', 'goal-event', 'goal-path', 'goal-error', (s, g) => [withGoal(s, g), 'goals']);
  form('step-form', 'step-event', 'step-path', 'step-error', (s, g) => [withStep(s, g), 'view']);
}
