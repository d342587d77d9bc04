// The read API as the dashboard calls it: same origin, the rk_ key as a bearer token, nothing else sent.
// Response types from the contract (libs/schema); type-only, so none of zod reaches the bundle.
import type { ErrorBody, FunnelBody, FunnelResponse, InsightsBody, InsightsResponse, PropertiesResponse, QueryResponse, RetentionBody, RetentionResponse, StatsResponse } from '@analytics/schema';

/** What the API said when it refused a call: its `error` code, in words for a person. */
export class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(describeError(status, code));
  }
  /** The key itself was refused (sign in again), as opposed to a bad request or a server failure. */
  get keyRefused(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

const WORDS: Record<string, string> = {
  missing_bearer_token: 'No key was sent.',
  malformed_api_key: 'This is not an API key: keys look like rk_live_<prefix>_<secret>.',
  invalid_api_key: 'This key is unknown or revoked, or its secret is wrong.',
  key_kind_mismatch: 'This key is not of the kind its prefix claims.',
  insufficient_scope: 'This key cannot read statistics: the dashboard needs a read key (rk_…); pk_ and sk_ keys only send events.',
  invalid_params: 'The dashboard asked for a range the API refused.',
  invalid_payload: 'The dashboard asked a question the API refused.',
  rate_limited: 'Too many requests; try again in a moment.',
  query_too_expensive: 'This range needs more than a read may use: choose a shorter range.',
  upstream_failed: 'The service cannot reach its event store right now.',
  internal_error: 'The service failed to answer.',
};

export function describeError(status: number, code: string): string {
  return `${WORDS[code] ?? `The service answered ${status}.`} (${status} ${code})`;
}

type Params = Record<string, string | number | undefined>;

export function createApi(key: string) {
  async function get<T>(path: string, params: Params): Promise<T> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined) qs.set(k, String(v));
    const res = await fetch(`${path}?${qs.toString()}`, { headers: { Authorization: `Bearer ${key}` }, credentials: 'omit', cache: 'no-store' });
    const body = (await res.json().catch(() => ({}))) as Partial<ErrorBody>;
    if (!res.ok) throw new ApiRefusal(res.status, body.error ?? 'unknown_error');
    return body as T;
  }
  /** POST /v1/insights, /v1/funnel, /v1/retention: the body as the contract types it. */
  async function post<T>(path: string, body: unknown): Promise<T> {
    const res = await fetch(path, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body), credentials: 'omit', cache: 'no-store' });
    const answer = (await res.json().catch(() => ({}))) as Partial<ErrorBody>;
    if (!res.ok) throw new ApiRefusal(res.status, answer.error ?? 'unknown_error');
    return answer as T;
  }
  /** GET /v1/export as a file: its bytes and the name the server gave it (Content-Disposition). */
  async function file(path: string, params: Params, fallbackName: string): Promise<{ blob: Blob; name: string }> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined) qs.set(k, String(v));
    const res = await fetch(`${path}?${qs.toString()}`, { headers: { Authorization: `Bearer ${key}` }, credentials: 'omit', cache: 'no-store' });
    if (!res.ok) {
      const body = (await res.json().catch(() => ({}))) as Partial<ErrorBody>;
      throw new ApiRefusal(res.status, body.error ?? 'unknown_error');
    }
    const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName;
    return { blob: await res.blob(), name };
  }
  return {
    /** Every event of the range (and event filter) as CSV, for the Export button. */
    exportCsv: (params: Params) => file('/v1/export', { ...params, format: 'csv' }, 'events.csv'),
    stats: (params: Params) => get<StatsResponse>('/v1/stats', params),
    insights: (body: InsightsBody) => post<InsightsResponse>('/v1/insights', body),
    funnel: (body: FunnelBody) => post<FunnelResponse>('/v1/funnel', body),
    retention: (body: RetentionBody) => post<RetentionResponse>('/v1/retention', body),
    properties: (params: Params) => get<PropertiesResponse>('/v1/properties', params),
    query: (params: Params) => get<QueryResponse>('/v1/query', params),
    /** GET /v1/live: the live view's event stream (read by live.ts); the key in the header, never in the URL. */
    live: (signal: AbortSignal) => fetch('/v1/live', { headers: { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' }, credentials: 'omit', cache: 'no-store', signal }),
    /** GET /v1/goals, /v1/funnels, /v1/segments (issue 46): the project's saved ones, read with the key. */
    saved: <T>(plural: 'goals' | 'funnels' | 'segments') => get<T>(`/v1/${plural}`, {}),
    /** GET /v1/project (issue 47): the key's project, with the time zone its days are counted in. */
    project: () => get<{ project: { id: string; name: string; timezone: string } }>('/v1/project', {}),
  };
}

export type Api = ReturnType<typeof createApi>;
