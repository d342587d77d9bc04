// People's side of the dashboard (issue 45, docs/accounts.md): the user token and the calls to /auth/* and /admin/*.
// The token lives in localStorage (a new tab stays signed in), never in a cookie or a URL; the session read keys
// minted for it (POST /auth/read-key) live in this tab's sessionStorage. Types only from the contract: no zod here.
import type { Role } from '@analytics/schema';

const TOKEN_ITEM = 'analytics.session';
const READ_KEYS_ITEM = 'analytics.sessionReadKeys';

export interface User {
  id: string;
  email: string;
  name: string | null;
}
export interface Membership {
  id: string;
  name: string;
  role: Role;
}
export interface Project {
  id: string;
  name: string;
  allowed_origins: string[];
  retention_days: number;
  /** IANA time zone its days are counted in (issue 47; absent from servers before it: UTC). */
  timezone?: string;
  created_at: string;
  org_id: string | null;
}
export interface AuthConfig {
  setup_required: boolean;
  sso: { name: string } | null;
  password_reset: boolean;
}
export interface SignedIn {
  token: string;
  expires_at: string;
  user: User;
}

export const getToken = () => localStorage.getItem(TOKEN_ITEM);
export const setToken = (token: string) => localStorage.setItem(TOKEN_ITEM, token);
export function forgetSession(): void {
  localStorage.removeItem(TOKEN_ITEM);
  sessionStorage.removeItem(READ_KEYS_ITEM);
}

const WORDS: Record<string, string> = {
  invalid_credentials: 'The email or the password is wrong.',
  invalid_session: 'Your session has ended: sign in again.',
  rate_limited: 'Too many attempts: wait a few minutes and try again.',
  already_set_up: 'This service is set up already: sign in.',
  insufficient_role: 'Your role does not allow this.',
  not_found: 'Not found, or you are no longer a member of its organization.',
  invalid_token: 'This link is used, expired or unknown: ask for a new one.',
  already_member: 'This person is a member already.',
  last_owner: 'The last owner of an organization can be neither demoted nor removed.',
  invalid_payload: 'Something in the form was refused.',
  name_taken: 'This name is taken in this project: choose another.',
  limit_reached: 'This project has as many of these as it may keep (200): delete one first.',
  server_busy: 'The service is busy: try again in a moment.',
  upstream_failed: 'The service cannot reach a store right now.',
  internal_error: 'The service failed to answer.',
};

/** What /auth or /admin said when it refused a call, in words for a person (the code and status kept). */
export class AccountRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(accountWords(status, code, details));
  }
}

function accountWords(status: number, code: string, details: Record<string, unknown>): string {
  let words = WORDS[code] ?? `The service answered ${status}.`;
  if (code === 'insufficient_role' && typeof details['required'] === 'string') words = `Your role (${String(details['role'])}) does not allow this: it needs ${details['required']}.`;
  if (code === 'invalid_payload') {
    const fields = (details['fieldErrors'] ?? {}) as Record<string, string[]>;
    const said = Object.entries(fields).map(([f, m]) => `${f.replace(/_/g, ' ')} ${m[0] ?? 'is invalid'}`);
    if (said.length) words = `${said.join('; ')}.`;
  }
  if (code === 'invalid_token' && details['reason']) words = `This link is ${details['reason'] === 'unknown' ? 'unknown' : details['reason']}: ask for a new one.`;
  return `${words} (${status} ${code})`;
}

/** One call of /auth or /admin with the user token (when there is one). 204 answers undefined. */
export async function call<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, token: string | null = getToken()): Promise<T> {
  const headers: Record<string, string> = {};
  if (token) headers['Authorization'] = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit', cache: 'no-store' });
  if (res.status === 204) return undefined as T;
  const answer = (await res.json().catch(() => ({}))) as { error?: string; details?: Record<string, unknown> };
  if (!res.ok) throw new AccountRefusal(res.status, answer.error ?? 'unknown_error', answer.details);
  return answer as T;
}

interface CachedKey {
  key: string;
  expires_at: string;
}
const readKeys = (): Record<string, CachedKey> => {
  try {
    return JSON.parse(sessionStorage.getItem(READ_KEYS_ITEM) ?? '{}') as Record<string, CachedKey>;
  } catch {
    return {};
  }
};

/** A session read key of the project: this tab's while it has a minute left, else a new one (POST /auth/read-key). */
export async function readKeyFor(projectId: string, fresh = false): Promise<string> {
  const cached = readKeys()[projectId];
  if (!fresh && cached && Date.parse(cached.expires_at) - Date.now() > 60_000) return cached.key;
  const minted = await call<CachedKey>('POST', '/auth/read-key', { project_id: projectId });
  sessionStorage.setItem(READ_KEYS_ITEM, JSON.stringify({ ...readKeys(), [projectId]: { key: minted.key, expires_at: minted.expires_at } }));
  return minted.key;
}

/** base64url(SHA-256(secret)): the binding of an SSO start to this tab's secret. */
export async function bindingOf(secret: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(secret)));
  return btoa(String.fromCharCode(...digest)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** 32 random bytes, base64url. */
export function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export const ROLE_ORDER: readonly Role[] = ['viewer', 'editor', 'admin', 'owner'];
export const atLeast = (role: Role | undefined, required: Role) => role !== undefined && ROLE_ORDER.indexOf(role) >= ROLE_ORDER.indexOf(required);
