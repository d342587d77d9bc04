// Issue 46 on the dashboard: the project's saved goals (in the Goals panel), funnels (in the Funnel view) and segments
// (the segment picker above the panels). Anyone who reads the project sees them and applies them; editors (role editor,
// admin or owner in the project's organization) also save, rename and delete them. Signed in, the lists come from
// GET /admin/projects/:id/goals|funnels|segments with the user token; with a pasted rk_ key, from GET /v1/goals|funnels|segments
// (read-only). docs/dashboard.md "Saved goals, funnels and segments".
import type { Api } from './api';
import { $, el } from './dom';
import { confirmButton, currentProject, projectRole, signedIn } from './people';
import {
  type Condition,
  type SavedFunnel,
  type SavedGoal,
  type SavedKind,
  type SavedLists,
  type SavedSegment,
  MAX_NAME,
  NO_SAVED,
  PLURAL,
  byName,
  definitionOfGoal,
  filtersToSave,
  funnelOfSaved,
  funnelToSave,
  nameOf,
  stepOf,
  withKnownSaved,
} from './saved-state';
import { atLeast, call } from './session';
import { FUNNEL_STEPS, type Goal, type ViewState, goalBody, goalOf, goalText, withGoal } from './state';

/** How the saved lists change the view (main.ts). */
export interface SavedHooks {
  /** The state shown now. */
  now(): ViewState;
  /** Every panel asked again (a segment applied or removed). */
  full(state: ViewState): void;
  /** The goals or the open view asked again (a saved goal shown, a saved funnel opened). */
  part(state: ViewState, part: 'goals' | 'view'): void;
  /** The state drawn again with the lists as they are now (a name changed, one saved or deleted); `push`: a new history entry. */
  redraw(state: ViewState, push: boolean): void;
  /** The 30-second refresh stopped until the next load; returns what starts it again (the same view still shown). */
  hold(): () => void;
}

/** Where the lists come from: the signed-in user's project (admin routes, user token) or a pasted read key (/v1). */
export type SavedSource = { projectId: string } | { api: Api; key: string };

let hooks: SavedHooks;
let lists: SavedLists = NO_SAVED;
let listedFor: string | undefined;
let listError = '';
let source: SavedSource | undefined;

const WORD: Readonly<Record<SavedKind, string>> = { goal: 'goal', funnel: 'funnel', segment: 'segment' };
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));
const say = (id: string, text: string) => void ($(id).textContent = text);
const sourceKey = (s: SavedSource) => ('projectId' in s ? `project:${s.projectId}` : `key:${s.key}`);

/** The saved ones of the project shown (empty until listed, or when listing failed). */
export const savedLists = (): SavedLists => lists;

/** Whoever may save, rename and delete here: signed in with the editor role or above in the project's organization. */
export const canEdit = (): boolean => signedIn() && source !== undefined && 'projectId' in source && atLeast(projectRole(), 'editor');

async function listOf<T>(from: SavedSource, plural: 'goals' | 'funnels' | 'segments'): Promise<T[]> {
  const answer = 'projectId' in from ? await call<Record<string, T[] | undefined>>('GET', `/admin/projects/${encodeURIComponent(from.projectId)}/${plural}`) : await from.api.saved<Record<string, T[] | undefined>>(plural);
  return answer[plural] ?? [];
}

/**
 * Lists the saved ones of `from` (once per project or key; again with `force`, after a change). A failure leaves the
 * lists empty and says so beside them: the dashboard itself still loads.
 */
export async function loadSaved(from: SavedSource, force = false): Promise<void> {
  const key = sourceKey(from);
  source = from;
  if (!force && listedFor === key) return;
  // Another project's (or key's) lists are not shown meanwhile.
  if (listedFor !== key) lists = NO_SAVED;
  try {
    const [goals, funnels, segments] = await Promise.all([listOf<SavedGoal>(from, 'goals'), listOf<SavedFunnel>(from, 'funnels'), listOf<SavedSegment>(from, 'segments')]);
    if (source !== from) return;
    lists = { goals, funnels, segments };
    listError = '';
  } catch (e) {
    if (source !== from) return;
    lists = NO_SAVED;
    listError = `The saved goals, funnels and segments could not be listed: ${message(e)}`;
  }
  listedFor = key;
}

/** The lists are read again at the next show (another project or key, signed out). */
export function forgetSaved(): void {
  listedFor = undefined;
  lists = NO_SAVED;
}

/** A saved goal's name for the Goals panel (its id when it is not listed). */
export const savedGoalName = (id: string): string => lists.goals.find((g) => g.id === id)?.name ?? `Saved goal ${id}`;

/** A goal or a step in words; a saved goal by its name. */
export const stepText = (g: Goal): string => (g.id === undefined ? goalText(g) : savedGoalName(g.id));

/** POST, PATCH or DELETE of a saved one with the user token. */
function write<T>(method: 'POST' | 'PATCH' | 'DELETE', kind: SavedKind, id?: string, body?: unknown): Promise<T> {
  const project = source && 'projectId' in source ? source.projectId : currentProject()?.id;
  return call<T>(method, `/admin/projects/${encodeURIComponent(project ?? '')}/${PLURAL[kind]}${id === undefined ? '' : `/${encodeURIComponent(id)}`}`, body);
}

/**
 * One change of the saved ones: the request, then the lists again and the view drawn with them (`next` makes the new
 * state: the one just saved applied). A removed segment stops applying (every panel asked again).
 */
async function act(statusId: string, done: string, request: () => Promise<((s: ViewState) => ViewState) | void>): Promise<boolean> {
  say(statusId, '');
  let next: ((s: ViewState) => ViewState) | void;
  try {
    next = await request();
  } catch (e) {
    say(statusId, message(e));
    return false;
  }
  if (source) await loadSaved(source, true);
  const now = hooks.now();
  const target = withKnownSaved(next ? next(now) : now, lists);
  if (target.segment !== now.segment) hooks.full(target);
  else hooks.redraw(target, next !== undefined);
  say(statusId, done);
  return true;
}

function renameButton(kind: SavedKind, item: { id: string; name: string }, holder: HTMLElement, statusId: string): HTMLButtonElement {
  const b = el('button', { type: 'button', className: 'secondary small saved-rename', textContent: 'Rename' });
  b.setAttribute('aria-label', `Rename the ${WORD[kind]} ${item.name}`);
  b.onclick = () => {
    const input: HTMLInputElement = document.createElement('input');
    Object.assign(input, { value: item.name, maxLength: MAX_NAME, required: true, className: 'saved-rename-input', autocomplete: 'off' });
    input.setAttribute('aria-label', `New name of the ${WORD[kind]} ${item.name}`);
    const cancel = el('button', { type: 'button', className: 'secondary small', textContent: 'Cancel', onclick: () => renderSaved(hooks.now()) });
    const form = el('form', { className: 'inline-form saved-rename-form' }, input, el('button', { type: 'submit', className: 'small', textContent: 'Save name' }), cancel);
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') cancel.click();
    });
    form.onsubmit = (e) => {
      e.preventDefault();
      const name = nameOf(input.value);
      if (!name) return say(statusId, `Give a name (1 to ${MAX_NAME} characters).`);
      if (name === item.name) return renderSaved(hooks.now());
      void act(statusId, `Renamed to ${name}.`, () => write('PATCH', kind, item.id, { name }).then(() => undefined)).then((ok) => ok && focusAfter(kind, item.id));
    };
    holder.replaceChildren(form);
    input.focus();
    input.select();
  };
  return b;
}

/** Focus after a rename (the renamed one) or a delete (its list's title, or the segment picker): not lost to the page. */
function focusAfter(kind: SavedKind, id?: string): void {
  if (kind === 'segment') return $('segment-picker').focus();
  const row = id === undefined ? null : document.querySelector<HTMLElement>(`#saved-${PLURAL[kind]} li[data-id="${CSS.escape(id)}"] .saved-apply`);
  (row ?? $(`saved-${PLURAL[kind]}-title`)).focus();
}

/**
 * DELETE of a saved one. Deleting the segment applied here holds the 30-second refresh first: a refresh between the
 * DELETE and the load without the segment would name it (the API answers 400). act() then drops it from the view.
 */
async function remove(kind: SavedKind, id: string): Promise<void> {
  const resume = kind === 'segment' && hooks.now().segment === id ? hooks.hold() : () => undefined;
  try {
    await write('DELETE', kind, id);
  } catch (e) {
    resume();
    throw e;
  }
}

const deleteButton = (kind: SavedKind, item: { id: string; name: string }, statusId: string) => {
  const b = confirmButton('Delete', `Delete the ${WORD[kind]} ${item.name}`, 'Confirm delete', () =>
    act(statusId, `Deleted the ${WORD[kind]} ${item.name}.`, () => remove(kind, item.id)).then((ok) => {
      if (ok) focusAfter(kind);
    }),
  );
  b.classList.add('saved-delete');
  return b;
};

interface Row {
  item: { id: string; name: string };
  detail: string;
  /** Applied now (the pressed state of its button). */
  on: boolean;
  choose: () => void;
}

/** A saved list: each one a toggle button (its name) with what it is, and Rename and Delete for editors. */
function savedList(kind: SavedKind, rows: Row[], editor: boolean, statusId: string, empty: string): HTMLElement {
  if (listError) return el('p', { className: 'error' }, listError);
  if (rows.length === 0) return el('p', { className: 'empty' }, empty);
  const list = el('ul', { className: 'rows saved-list' });
  for (const r of rows) {
    const choose = el('button', { type: 'button', className: 'link saved-apply', onclick: r.choose }, r.item.name);
    choose.setAttribute('aria-pressed', String(r.on));
    const li = el('li', {}, el('span', { className: 'row-label' }, choose, el('span', { className: 'extra' }, r.detail)));
    if (editor) {
      const actions = el('span', { className: 'row-actions' });
      actions.append(renameButton(kind, r.item, li, statusId), deleteButton(kind, r.item, statusId));
      li.append(actions);
    }
    li.dataset['id'] = r.item.id;
    li.dataset['name'] = r.item.name;
    list.append(li);
  }
  return list;
}

const conditionText = (c: Condition) => `${c[1]} ${c[0].replace(/_/g, ' ')} ${c[2].map(String).join(', ')}`;

/** The saved lists and the editors' controls as the state and the lists say (no call). */
export function renderSaved(state: ViewState): void {
  const editor = canEdit();
  // Goals: a saved goal is shown in the panel (with its conversions) while its button is pressed.
  const shown = new Set(state.goals.map((g) => g.id).filter((id) => id !== undefined));
  $('saved-goals').replaceChildren(
    savedList(
      'goal',
      byName(lists.goals).map((g) => ({
        item: g,
        detail: goalText(definitionOfGoal(g)) + (g.filters?.length ? `, where ${g.filters.map(conditionText).join(' and ')}` : ''),
        on: shown.has(g.id),
        choose: () => {
          const now = hooks.now();
          hooks.part(now.goals.some((x) => x.id === g.id) ? { ...now, goals: now.goals.filter((x) => x.id !== g.id) } : withGoal(now, { id: g.id }), 'goals');
        },
      })),
      editor,
      'saved-goals-status',
      editor ? 'None yet: type a goal above, name it and save it for everyone in the project.' : 'None saved for this project.',
    ),
  );
  for (const id of ['goal-name-label', 'goal-name', 'goal-save']) $(id).hidden = !editor;

  // Funnels: opening one puts its steps, window and count in the view.
  $('saved-funnels').replaceChildren(
    savedList(
      'funnel',
      byName(lists.funnels).map((f) => ({
        item: f,
        detail: `${f.steps.length} steps: ${f.steps.map((s) => stepText(stepOf(s, lists))).join(' → ')}`,
        on: state.funnel.saved === f.id,
        choose: () => {
          const now = hooks.now();
          hooks.part({ ...now, view: 'funnel', funnel: funnelOfSaved(f, now.funnel, lists) }, 'view');
        },
      })),
      editor,
      'saved-funnels-status',
      editor ? 'None yet: add the steps above, name the funnel and save it.' : 'None saved for this project.',
    ),
  );
  $('funnel-save-form').hidden = !editor;
  $<HTMLButtonElement>('funnel-save').disabled = state.funnel.steps.length < FUNNEL_STEPS.min;

  // Segments: the picker applies one (sent as segment: "<id>"); editors save the filters shown as one.
  const segments = byName(lists.segments);
  const picker = $<HTMLSelectElement>('segment-picker');
  picker.replaceChildren(el('option', { value: '', textContent: segments.length ? 'None' : 'None saved' }), ...segments.map((s) => el('option', { value: s.id, textContent: s.name, selected: s.id === state.segment })));
  picker.disabled = segments.length === 0 && state.segment === undefined;
  picker.onchange = () => {
    const { segment: _, ...now } = hooks.now();
    hooks.full(picker.value ? { ...now, segment: picker.value } : now);
  };
  const applied = segments.find((s) => s.id === state.segment);
  const actions = $('segment-actions');
  actions.replaceChildren(...(editor && applied ? [renameButton('segment', applied, actions, 'segment-status'), deleteButton('segment', applied, 'segment-status')] : []));
  $('segment-save-form').hidden = !editor;
  $<HTMLButtonElement>('segment-save').disabled = filtersToSave(state, lists).length === 0;
  $('segment-error').textContent = listError;
}

/** The editors' forms (set up once; they read the state when used). */
export function setUpSaved(savedHooks: SavedHooks): void {
  hooks = savedHooks;
  $('goal-save').addEventListener('click', () => {
    const event = $<HTMLInputElement>('goal-event');
    const path = $<HTMLInputElement>('goal-path');
    const nameInput = $<HTMLInputElement>('goal-name');
    const g = goalOf(event.value, path.value);
    const name = nameOf(nameInput.value);
    say('goal-error', g ? (name ? '' : `Name the goal to save it (1 to ${MAX_NAME} characters).`) : 'Give an event name, a page (/pricing, or /blog/* for every page under /blog/), or both.');
    if (!g || !name) return;
    void act('saved-goals-status', `Saved the goal ${name}: it is shown for everyone in the project.`, async () => {
      const answer = await write<{ goal: SavedGoal }>('POST', 'goal', undefined, { name, ...goalBody(g) });
      for (const input of [event, path, nameInput]) input.value = '';
      return (s) => withGoal(s, { id: answer.goal.id });
    });
  });
  // Enter in the name field saves (the form's own Enter adds the goal to this page only).
  $('goal-name').addEventListener('keydown', (e) => {
    if (e.key !== 'Enter') return;
    e.preventDefault();
    $('goal-save').click();
  });
  $('funnel-save-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const input = $<HTMLInputElement>('funnel-name');
    const name = nameOf(input.value);
    if (!name) return say('saved-funnels-status', `Name the funnel to save it (1 to ${MAX_NAME} characters).`);
    void act('saved-funnels-status', `Saved the funnel ${name}.`, async () => {
      const answer = await write<{ funnel: SavedFunnel }>('POST', 'funnel', undefined, { name, ...funnelToSave(hooks.now().funnel, lists) });
      input.value = '';
      return (s) => ({ ...s, funnel: { ...s.funnel, saved: answer.funnel.id } });
    });
  });
  $('segment-save-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const input = $<HTMLInputElement>('segment-name');
    const name = nameOf(input.value);
    if (!name) return say('segment-status', `Name the segment to save it (1 to ${MAX_NAME} characters).`);
    const filters = filtersToSave(hooks.now(), lists);
    if (filters.length === 0) return say('segment-status', 'Add a filter first (click a row of a list): a segment is a set of filters.');
    void act('segment-status', `Saved the segment ${name}: it is applied now.`, async () => {
      const answer = await write<{ segment: SavedSegment }>('POST', 'segment', undefined, { name, filters });
      input.value = '';
      // The new segment holds the pills' filters (and the previous segment's): applied alone, it shows the same view.
      return (s) => ({ ...s, filters: [], segment: answer.segment.id });
    });
  });
}
