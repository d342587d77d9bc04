// The dashboard opened from a share link (issue 46, docs/saved-and-shared.md "Share links and embeds"): at
// /share/<token>, no sign-in; POST /v1/share/unlock opens the link (a password form first when it has one) and gives
// the credential every read then sends. Read-only: no keys, settings, export or raw-event list; the link's segment is
// shown applied and cannot be removed; `?embed=1` (an <iframe>) hides the header. Types only from the contract.
import type { ShareScope } from '@analytics/schema';
import { $, el } from './dom';
import { FUNNEL_STEPS, type Goal, type ViewState } from './state';

/** What POST /v1/share/unlock answers: the credential, the project and the link. */
export interface OpenedShare {
  token: string;
  expires_at: string | null;
  project: { id: string; name: string };
  share: { id: string; name: string | null; expires_at: string | null; has_password: boolean; segment: ShareScope['segment']; embed_origins: string[] };
}

const CREDENTIAL_ITEM = 'analytics.share.';
const SHARE_PATH = /^\/share\/(shr_[0-9A-Za-z]+_[0-9A-Za-z]+)\/?$/;

/** The link's token when this page is a share link's (the path /share/<token>). */
const linkToken: string | undefined = typeof location === 'undefined' ? undefined : SHARE_PATH.exec(location.pathname)?.[1];
/** `?embed=1` as the page was opened (navigation rewrites the query string, the embed stays). */
const embed = typeof location === 'undefined' ? false : new URLSearchParams(location.search).get('embed') === '1';

let opened: OpenedShare | undefined;

/** Whether this page is a share link's. */
export const inShare = (): boolean => linkToken !== undefined;
/** The credential reads send (once the link is open). */
export const shareCredential = (): string | undefined => opened?.token;
/** Whether the link holds its reads to a segment (the reads that take no filters are refused then). */
export const shareHasSegment = (): boolean => (opened?.share.segment?.filters.length ?? 0) > 0;

function stored(): OpenedShare | undefined {
  try {
    const raw = sessionStorage.getItem(CREDENTIAL_ITEM + linkToken);
    const value = raw ? (JSON.parse(raw) as OpenedShare) : undefined;
    // A credential with less than a minute left is not used: the link is opened again.
    return value && (value.expires_at === null || Date.parse(value.expires_at) - Date.now() > 60_000) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The share card: its password form, or why the link cannot be opened. Made once, beside the dashboard. */
function card(): HTMLElement {
  const existing = document.getElementById('share-page');
  if (existing) return existing;
  const input = document.createElement('input');
  Object.assign(input, { id: 'share-password', type: 'password', autocomplete: 'current-password', required: true, maxLength: 256 });
  const form = el('form', { id: 'share-password-form', className: 'stacked' }, el('label', { htmlFor: 'share-password' }, 'Password'), input, el('button', { type: 'submit' }, 'Open'));
  const section = el(
    'section',
    { id: 'share-page', className: 'card sign-in' },
    el('h2', { id: 'share-title' }, 'Shared dashboard'),
    el('p', { id: 'share-intro' }, 'This link is protected: type its password to open the dashboard.'),
    form,
    el('p', { id: 'share-error', className: 'error', role: 'alert' }),
  );
  section.setAttribute('aria-labelledby', 'share-title');
  $('dashboard').before(section);
  return section;
}

function showCard(kind: 'password' | 'invalid', message = ''): void {
  document.body.dataset['share'] = kind;
  $('dashboard').hidden = true;
  delete document.body.dataset['state'];
  const section = card();
  section.hidden = false;
  $('share-password-form').hidden = kind !== 'password';
  $('share-intro').textContent = kind === 'password' ? 'This link is protected: type its password to open the dashboard.' : 'This link is not valid: it is unknown, or it was revoked, or it has expired. Ask whoever gave it to you for a new one.';
  $('share-error').textContent = message;
  if (kind === 'password') $<HTMLInputElement>('share-password').focus();
}

/** POST /v1/share/unlock: the answer, or the refusal's status, code and reason. */
async function unlock(password?: string): Promise<OpenedShare | { status: number; code: string; reason?: string; retryAfter?: string }> {
  const res = await fetch('/v1/share/unlock', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(password === undefined ? { token: linkToken } : { token: linkToken, password }),
    credentials: 'omit',
    cache: 'no-store',
  });
  const body = (await res.json().catch(() => ({}))) as { error?: string; details?: { reason?: string } };
  if (res.ok) return body as unknown as OpenedShare;
  return { status: res.status, code: body.error ?? 'unknown_error', reason: body.details?.reason, retryAfter: res.headers.get('retry-after') ?? undefined };
}

function opening(answer: OpenedShare, show: () => void): void {
  opened = answer;
  sessionStorage.setItem(CREDENTIAL_ITEM + linkToken, JSON.stringify(answer));
  document.body.dataset['share'] = 'open';
  document.getElementById('share-page')?.setAttribute('hidden', '');
  document.title = `${answer.project.name}: shared dashboard`;
  const title = $('project-title');
  title.textContent = answer.project.name;
  title.hidden = false;
  show();
}

/** Opens the link: a credential this tab holds, else the unlock (a password form first for a link that has one). */
async function open(show: () => void, password?: string): Promise<void> {
  const answer = await unlock(password).catch((e: unknown) => ({ status: 0, code: e instanceof Error ? e.message : String(e) }) as { status: number; code: string; reason?: string; retryAfter?: string });
  if ('token' in answer) return opening(answer, show);
  if (answer.status === 404) return showCard('invalid');
  if (answer.status === 401 && answer.code === 'invalid_credentials') return showCard('password', answer.reason === 'wrong_password' ? 'The password is wrong. (401 invalid_credentials)' : '');
  if (answer.status === 429) return showCard('password', `Too many wrong passwords: try again in ${answer.retryAfter ?? 'a few'} seconds. (429 rate_limited)`);
  showCard(opened === undefined && answer.status === 0 ? 'invalid' : 'password', `The service did not open the link (${answer.status} ${answer.code}).`);
}

/**
 * Starts the share mode instead of the signed-in pages: the page's chrome made read-only, then the link opened.
 * `show` shows the dashboard with shareCredential().
 */
export function startShare(show: () => void): void {
  document.body.classList.add('share');
  if (embed) document.body.classList.add('embed');
  // Nothing of a person's or a key holder's: no sign-out, no export, no navigation, no pasted key, no raw events.
  for (const id of ['sign-out', 'export-csv', 'people-nav', 'sign-in', 'login-page']) $(id).hidden = true;
  const recent = $('recent').closest('section');
  if (recent) recent.hidden = true;
  card().hidden = true;
  $('share-password-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const input = $<HTMLInputElement>('share-password');
    const password = input.value;
    input.value = '';
    void open(show, password);
  });
  const held = stored();
  if (held) return opening(held, show);
  void open(show);
}

/** A read refused the credential (revoked, expired, or the unlock's hour is over): the link is opened again. */
export function shareRefused(show: () => void): void {
  opened = undefined;
  sessionStorage.removeItem(CREDENTIAL_ITEM + linkToken);
  void open(show);
}

/** The segment the link applies, shown above the panels without a way to remove it. */
export function renderShareSegment(): void {
  const segment = opened?.share.segment;
  let box = document.getElementById('share-segment');
  if (!segment) return void box?.remove();
  if (!box) {
    box = el('p', { id: 'share-segment', className: 'filters share-segment' });
    $('filters').before(box);
  }
  box.replaceChildren(el('span', { className: 'filters-title' }, 'Segment'), el('span', { className: 'pill fixed', title: 'Applied by this link: it cannot be removed' }, segment.name));
  box.dataset['segment'] = segment.id;
}

interface SavedGoal {
  name: string;
  event?: string;
  path?: string;
  filters?: unknown[];
}
interface SavedFunnel {
  name: string;
  steps: Array<{ event?: string; path?: string; filters?: unknown[] }>;
  window_s?: number;
  count_by?: ViewState['funnel']['countBy'];
  filters?: unknown[];
}

const plain = (g: { event?: string; path?: string; filters?: unknown[] }): Goal | undefined =>
  (g.filters?.length ?? 0) > 0 || (g.event === undefined && g.path === undefined) ? undefined : { ...(g.event !== undefined ? { event: g.event } : {}), ...(g.path !== undefined ? { path: g.path } : {}) };

/**
 * The goals and the first funnel saved for the project (GET /v1/goals, /v1/funnels, where this service has them), as
 * the view's goals and funnel steps: the panels show them as a signed-in person's. A saved definition with filters of
 * its own is left out (the panels send an event and a path only); lists this service does not answer are none.
 */
export async function withSavedDefinitions(state: ViewState): Promise<ViewState> {
  const list = async <T>(path: string, field: string): Promise<T[]> => {
    const res = await fetch(path, { headers: { Authorization: `Bearer ${opened?.token ?? ''}` }, credentials: 'omit', cache: 'no-store' }).catch(() => undefined);
    if (!res?.ok) return [];
    return (((await res.json().catch(() => ({}))) as Record<string, T[]>)[field] ?? []) as T[];
  };
  const [goals, funnels] = await Promise.all([list<SavedGoal>('/v1/goals', 'goals'), list<SavedFunnel>('/v1/funnels', 'funnels')]);
  const next: ViewState = { ...state, goals: goals.map(plain).filter((g): g is Goal => g !== undefined) };
  const funnel = funnels.find((f) => (f.filters?.length ?? 0) === 0 && f.steps.every((s) => plain(s) !== undefined) && f.steps.length >= FUNNEL_STEPS.min);
  if (funnel && state.funnel.steps.length === 0) {
    next.funnel = { ...state.funnel, steps: funnel.steps.map((s) => plain(s)!), ...(funnel.window_s ? { window: funnel.window_s } : {}), ...(funnel.count_by ? { countBy: funnel.count_by } : {}) };
  }
  if (state.goals.length > 0) next.goals = state.goals;
  return next;
}
