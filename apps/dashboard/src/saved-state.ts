// Saved goals, funnels and segments of a project (issue 46) as the dashboard uses them: what a saved one means for the
// view state and for the API bodies. Pure, so it is unit-tested without a browser (saved-state.spec.ts).
import { type FunnelCountBy, type FunnelState, FUNNEL_WINDOW, type Goal, type ViewState, DAY_MS, conditionsOf, goalBody, parseDay } from './state';

/** A filter condition as the API takes it (`[op, dimension, values]`); saved ones may use any operator. */
export type Condition = [string, string, unknown[]];

/** A goal definition as insights take it; a saved funnel's step may instead be `{ id }` of a saved goal. */
export interface GoalDefinition {
  event?: string;
  path?: string;
  filters?: Condition[];
  id?: string;
}
interface SavedMeta {
  id: string;
  name: string;
  created_at: string;
  updated_at: string;
}
export type SavedGoal = SavedMeta & GoalDefinition;
export type SavedFunnel = SavedMeta & { steps: GoalDefinition[]; window_s?: number; count_by?: FunnelCountBy; filters?: Condition[] };
export type SavedSegment = SavedMeta & { filters: Condition[] };

export type SavedKind = 'goal' | 'funnel' | 'segment';
/** The project's saved ones, as listed (`{ goals }`, `{ funnels }`, `{ segments }`). */
export interface SavedLists {
  goals: SavedGoal[];
  funnels: SavedFunnel[];
  segments: SavedSegment[];
}
export const NO_SAVED: SavedLists = { goals: [], funnels: [], segments: [] };

/** The path segment and the answer's key of each kind: `/admin/projects/:id/goals` answers `{ goals }`, a write `{ goal }`. */
export const PLURAL: Readonly<Record<SavedKind, 'goals' | 'funnels' | 'segments'>> = { goal: 'goals', funnel: 'funnels', segment: 'segments' };

/** The longest name (characters, trimmed): the API's limit (libs/schema SAVED_LIMITS.name). */
export const MAX_NAME = 100;

/** A name as typed (trimmed); undefined when empty or over MAX_NAME. */
export function nameOf(text: string): string | undefined {
  const name = text.trim();
  return name && name.length <= MAX_NAME ? name : undefined;
}

/** A saved goal's definition, as insights take it (no id, name or dates). */
export const definitionOfGoal = (g: GoalDefinition): GoalDefinition => ({
  ...(g.event !== undefined ? { event: g.event } : {}),
  ...(g.path !== undefined ? { path: g.path } : {}),
  ...(g.filters?.length ? { filters: g.filters } : {}),
});

/** A saved funnel's step as the funnel call takes it: `{ id }` of a saved goal, or the goal. */
const stepDefinition = (s: GoalDefinition): GoalDefinition => (s.id !== undefined ? { id: s.id } : definitionOfGoal(s));

/** The goal body of a goal shown in the panel: a saved one's definition, or the typed goal; undefined for a saved id not in the list. */
export function goalBodyOf(g: Goal, lists: SavedLists): GoalDefinition | undefined {
  if (g.id === undefined) return goalBody(g);
  const saved = lists.goals.find((s) => s.id === g.id);
  return saved ? definitionOfGoal(saved) : undefined;
}

/** A step as shown (event and page): a step `{ id }` is its saved goal's (itself when that goal is not listed). */
export function stepOf(s: GoalDefinition, lists: SavedLists): Goal {
  const g = s.id === undefined ? s : (lists.goals.find((x) => x.id === s.id) ?? s);
  if (g.event === undefined && g.path === undefined) return { id: s.id ?? '' };
  return { ...(g.event !== undefined ? { event: g.event } : {}), ...(g.path !== undefined ? { path: g.path } : {}) };
}

/** The funnel state a saved funnel opens as: its steps (shown as event and page), window and count; the breakdown kept. */
export function funnelOfSaved(f: SavedFunnel, current: FunnelState, lists: SavedLists = NO_SAVED): FunnelState {
  return {
    steps: f.steps.map((s) => stepOf(s, lists)),
    window: f.window_s ?? FUNNEL_WINDOW.default,
    countBy: f.count_by ?? 'visitor',
    ...(current.breakdown ? { breakdown: current.breakdown } : {}),
    saved: f.id,
  };
}

/**
 * The steps and extra filters the funnel call sends: a saved funnel's own definition (its steps' and its filters kept)
 * while it is the one open, else the steps as shown.
 */
export function funnelDefinition(f: FunnelState, lists: SavedLists): { steps: GoalDefinition[]; filters: Condition[] } {
  const saved = f.saved === undefined ? undefined : lists.funnels.find((s) => s.id === f.saved);
  if (saved) return { steps: saved.steps.map(stepDefinition), filters: saved.filters ?? [] };
  return { steps: f.steps.map(goalBody), filters: [] };
}

/** What a saved funnel is made of, from the state shown: steps, window and count (the page's filters stay the page's). */
export const funnelToSave = (f: FunnelState, lists: SavedLists) => {
  const { steps, filters } = funnelDefinition(f, lists);
  return { steps, window_s: f.window, count_by: f.countBy, ...(filters.length ? { filters } : {}) };
};

/** The filters "Save as a segment" saves: the applied segment's (when one is) and the pills', all of which hold now. */
export function filtersToSave(state: ViewState, lists: SavedLists): Condition[] {
  const segment = state.segment === undefined ? undefined : lists.segments.find((s) => s.id === state.segment);
  const seen = new Set<string>();
  return [...(segment?.filters ?? []), ...conditionsOf(state.filters)].filter((c) => {
    const key = JSON.stringify(c);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The state without saved ids the project no longer has (deleted here or elsewhere): a removed goal leaves the panel,
 * a removed segment stops applying, a removed funnel stays open as its steps. Unchanged (the same object) when all are known.
 */
export function withKnownSaved(state: ViewState, lists: SavedLists): ViewState {
  const goals = state.goals.filter((g) => g.id === undefined || lists.goals.some((s) => s.id === g.id));
  const segmentKnown = state.segment === undefined || lists.segments.some((s) => s.id === state.segment);
  const funnelKnown = state.funnel.saved === undefined || lists.funnels.some((s) => s.id === state.funnel.saved);
  if (goals.length === state.goals.length && segmentKnown && funnelKnown) return state;
  const { segment: _, ...rest } = state;
  const { saved: __, ...funnel } = state.funnel;
  return { ...(segmentKnown ? state : rest), goals, funnel: funnelKnown ? state.funnel : funnel };
}

/** Whether the state names a saved one (then the lists are needed before anything is asked). */
export const namesSaved = (state: ViewState): boolean =>
  state.segment !== undefined || state.funnel.saved !== undefined || [...state.goals, ...state.funnel.steps].some((g) => g.id !== undefined);

/** The saved ones of a kind in the order listed: by name (case-insensitive), as a person looks for them. */
export const byName = <T extends { name: string }>(items: readonly T[]): T[] => [...items].sort((a, b) => a.name.localeCompare(b.name, 'en', { sensitivity: 'base' }) || (a.name < b.name ? -1 : 1));

/**
 * A share link's `expires_at` from the form's last day (`YYYY-MM-DD`, inclusive, UTC): the next UTC midnight. Empty:
 * no expiry (undefined). `null` when the day is not a real one or is before `today` (the form says so).
 */
export function expiresAtOf(lastDay: string, now: number): string | undefined | null {
  if (!lastDay) return undefined;
  const day = parseDay(lastDay);
  if (day === undefined || day + DAY_MS <= now) return null;
  return new Date(day + DAY_MS).toISOString();
}

/** The applied segment as the read routes take it (`segment: "<id>"`), nothing when none is applied. */
export const segmentOf = (state: ViewState): { segment?: string } => (state.segment === undefined ? {} : { segment: state.segment });
