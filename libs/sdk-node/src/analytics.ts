import type { ErrorCode } from '@analytics/schema';
import type {
  AnnotateInput,
  AnnotationList,
  AnnotationResponse,
  AnnotationsParams,
  BatchResponse,
  ForgetResponse,
  FunnelBody,
  FunnelList,
  FunnelResponse,
  GoalList,
  IdentifyInput,
  IdentifyResponse,
  InsightDimension,
  InsightMetric,
  InsightsBody,
  InsightsResponse,
  Instant,
  PropertiesParams,
  PropertiesResponse,
  QueryParams,
  QueryResponse,
  RetentionBody,
  RetentionResponse,
  SegmentList,
  SourcesParams,
  SourcesResponse,
  StatsGroupBy,
  StatsParams,
  StatsResponse,
  TrackInput,
  TrackResponse,
} from './types';

/** Waits between attempts (the spec's 100, 200, 400, 800 ms): at most 5 attempts in all. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [100, 200, 400, 800];
export const DEFAULT_TIMEOUT_MS = 10_000;

export interface AnalyticsOptions {
  /** Base URL of the service, e.g. `https://analytics.example.com` (no `/v1`). */
  endpoint: string;
  /** `sk_…` to ingest and forget, `rk_…` to read. */
  key: string;
  /** Waits before each retry of a 5xx or network error; `[]` disables retries. Default 100, 200, 400, 800 ms. */
  retryDelaysMs?: readonly number[];
  /** Per-attempt timeout; a timed-out attempt counts as a network error (retried). Default 10 s. */
  timeoutMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

/** `network_error`: no HTTP answer (refused, reset, timed out). `unexpected_response`: an error status without the spec's JSON body. */
export type AnalyticsErrorCode = ErrorCode | 'network_error' | 'unexpected_response' | (string & {});

/** A failed call: `code` is the spec's `error` string (the contract), `status` the HTTP status (0 without an answer). */
export class AnalyticsError extends Error {
  override readonly name = 'AnalyticsError';
  constructor(
    readonly code: AnalyticsErrorCode,
    readonly status: number,
    /** `details` of the error body (validation tree for `invalid_payload`/`invalid_params`). */
    readonly details?: unknown,
    /** Seconds to wait before retrying (`429`): `retry_after_s` of the body, else the `Retry-After` header. */
    readonly retryAfterS?: number,
    /** The whole error body, when there was one. */
    readonly body?: unknown,
    options?: { cause?: unknown },
  ) {
    super(status ? `${status} ${code}` : code, options);
  }
}

type Attempt<T> = { value: T } | { error: AnalyticsError; retryable: boolean };
type QueryValue = string | number | Date | readonly string[] | null | undefined;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const iso = (v: Instant): string => (v instanceof Date ? v.toISOString() : v);

/**
 * Server-side client of the analytics API. One HTTP call per method call (no buffering); 5xx answers and network
 * errors are retried after 100, 200, 400 and 800 ms; 429 and every other 4xx are never retried.
 */
export class Analytics {
  private readonly endpoint: string;
  private readonly key: string;
  private readonly retryDelays: readonly number[];
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;

  constructor(options: AnalyticsOptions) {
    if (!options.endpoint) throw new TypeError('Analytics: endpoint is required');
    if (!options.key) throw new TypeError('Analytics: key is required');
    this.endpoint = options.endpoint.replace(/\/+$/, '');
    this.key = options.key;
    this.retryDelays = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.fetchFn = options.fetch ?? ((...args) => fetch(...args));
  }

  /** `POST /v1/track`: one event. An `event_id` is generated when absent, so a retried write is recognisable. */
  track(event: TrackInput): Promise<TrackResponse> {
    return this.request('POST', '/v1/track', wireEvent(event));
  }

  /** `POST /v1/batch`: 1 to 1000 events in one all-or-nothing request. */
  batch(events: readonly TrackInput[]): Promise<BatchResponse> {
    return this.request('POST', '/v1/batch', { events: events.map(wireEvent) });
  }

  /** `POST /v1/identify`: binds an anonymous id to a user id (stores a `$identify` event with `traits`). */
  identify(input: IdentifyInput): Promise<IdentifyResponse> {
    return this.request('POST', '/v1/identify', input);
  }

  /** `POST /v1/forget` (`sk_` keys): queues deletion of every event of the user. */
  forget(userId: string): Promise<ForgetResponse> {
    return this.request('POST', '/v1/forget', { user_id: userId });
  }

  /** `GET /v1/query` (`rk_` keys): raw events; `properties` of each row is a JSON string. */
  query(params: QueryParams): Promise<QueryResponse> {
    return this.request('GET', '/v1/query', undefined, params);
  }

  /** `GET /v1/stats` (`rk_` keys): counts or unique visitors, grouped and bucketed. */
  stats<G extends StatsGroupBy = never>(params: StatsParams<G>): Promise<StatsResponse<G>> {
    return this.request('GET', '/v1/stats', undefined, params);
  }

  /** `GET /v1/sources` (`rk_` keys): top traffic sources. */
  sources(params: SourcesParams): Promise<SourcesResponse> {
    return this.request('GET', '/v1/sources', undefined, params);
  }

  /** `POST /v1/insights` (`rk_` keys): metrics by up to 3 dimensions, filtered, optionally against the previous period. */
  insights<M extends InsightMetric = 'visitors', D extends InsightDimension = never>(body: InsightsBody<M, D>): Promise<InsightsResponse<M, D>> {
    return this.request('POST', '/v1/insights', { ...body, from: iso(body.from), to: iso(body.to) });
  }

  /** `POST /v1/funnel` (`rk_` keys): entities reaching each of 2 to 10 ordered steps within `window_s` of step 1, optionally broken down. */
  funnel(body: FunnelBody): Promise<FunnelResponse> {
    return this.request('POST', '/v1/funnel', { ...body, from: iso(body.from), to: iso(body.to) });
  }

  /** `POST /v1/retention` (`rk_` keys): cohorts by the period of each entity's first start event, and how many came back in each later period. */
  retention(body: RetentionBody): Promise<RetentionResponse> {
    return this.request('POST', '/v1/retention', { ...body, from: iso(body.from), to: iso(body.to) });
  }

  /** `GET /v1/goals` (`rk_` keys): the project's saved goals; pass one as `goal: { id }` (insights), a step or `start`/`return`. */
  goals(): Promise<GoalList> {
    return this.request('GET', '/v1/goals');
  }

  /** `GET /v1/funnels` (`rk_` keys): the project's saved funnels; run one with `funnel({ id, from, to })`. */
  funnels(): Promise<FunnelList> {
    return this.request('GET', '/v1/funnels');
  }

  /** `GET /v1/segments` (`rk_` keys): the project's saved segments; pass one's id as `segment` to insights, funnel or retention. */
  segments(): Promise<SegmentList> {
    return this.request('GET', '/v1/segments');
  }

  /**
   * `POST /v1/annotations` (`sk_` keys): a dated note on the project's timeline, a deploy marker from CI for instance
   * (`kind`: note, deploy, campaign or incident; `at` defaults to now). Drawn on the dashboard's chart.
   */
  annotate(input: AnnotateInput): Promise<AnnotationResponse> {
    return this.request('POST', '/v1/annotations', { ...input, at: iso(input.at ?? new Date()) });
  }

  /** `DELETE /v1/annotations/{id}` (`sk_` keys): deletes an annotation this same key made (another's is `not_found`). */
  async deleteAnnotation(id: string): Promise<void> {
    await this.request('DELETE', `/v1/annotations/${encodeURIComponent(id)}`);
  }

  /** `GET /v1/annotations` (`rk_` keys): the project's annotations in [from, to), oldest first (at most 1,000: `truncated` beyond). */
  annotations(params: AnnotationsParams): Promise<AnnotationList> {
    return this.request('GET', '/v1/annotations', undefined, params);
  }

  /** `GET /v1/properties` (`rk_` keys): property keys most used first, or with `key` that key's values. */
  properties(params: PropertiesParams): Promise<PropertiesResponse> {
    return this.request('GET', '/v1/properties', undefined, params);
  }

  private async request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, query?: object): Promise<T> {
    let url = this.endpoint + path;
    if (query) url += `?${toSearch(query as Record<string, QueryValue>)}`;
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const payload = body === undefined ? undefined : JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt<T>(url, { method, headers, body: payload });
      if ('value' in outcome) return outcome.value;
      const delay = this.retryDelays[attempt];
      if (!outcome.retryable || delay === undefined) throw outcome.error;
      await sleep(delay);
    }
  }

  private async attempt<T>(url: string, init: RequestInit): Promise<Attempt<T>> {
    let status = 0;
    try {
      const res = await this.fetchFn(url, { ...init, signal: AbortSignal.timeout(this.timeoutMs) });
      status = res.status;
      const text = await res.text();
      const json = parseJson(text);
      if (res.ok) return { value: json as T };
      return { error: errorOf(res, json), retryable: res.status >= 500 };
    } catch (e) {
      // No answer, or the answer broke off: both are network errors, retried like a 5xx.
      const message = e instanceof Error ? e.message : String(e);
      return { error: new AnalyticsError('network_error', status, undefined, undefined, undefined, { cause: e instanceof Error ? e : new Error(message) }), retryable: true };
    }
  }
}

function wireEvent(e: TrackInput): object {
  return { ...e, event_id: e.event_id ?? globalThis.crypto.randomUUID(), timestamp: e.timestamp == null ? undefined : iso(e.timestamp) };
}

function toSearch(query: Record<string, QueryValue>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    search.set(name, value instanceof Date ? value.toISOString() : Array.isArray(value) ? value.join(',') : String(value));
  }
  return search.toString();
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function errorOf(res: Response, json: unknown): AnalyticsError {
  const body = json && typeof json === 'object' ? (json as Record<string, unknown>) : undefined;
  const code = typeof body?.error === 'string' ? body.error : 'unexpected_response';
  const header = Number(res.headers.get('retry-after'));
  const retryAfterS = typeof body?.retry_after_s === 'number' ? body.retry_after_s : res.headers.has('retry-after') && Number.isFinite(header) ? header : undefined;
  return new AnalyticsError(code, res.status, body?.details, retryAfterS, json);
}
