// Request and response types of the API, derived from libs/schema. Type-only imports: the SDK has no runtime
// dependency on the schema lib (or on zod); these vanish when compiled. Built from the schemas' parsed (output)
// types, which stay precise however a schema pre-processes its input.
import type {
  EventInput,
  EventRow,
  IdentifyInput as ParsedIdentify,
  ForgetInput as ParsedForget,
  QUERY_ROW_COLUMNS,
  QueryParams as ParsedQuery,
  SourcesParams as ParsedSources,
  SourcesRow,
  StatsGroupBy,
  StatsParams as ParsedStats,
} from '@analytics/schema';

export type { SourcesRow, StatsGroupBy };

/** An instant as the API takes it: an ISO 8601 string, or a Date (sent as `toISOString()`). */
export type Instant = string | Date;

/** Every key optional; `null` means absent, as the server reads it. */
type Loose<T> = { [K in keyof T]?: T[K] | null };
type Range = { from: Instant; to: Instant };

/** One event (`POST /v1/track`, each element of `POST /v1/batch`). `timestamp` may also be a Date. */
export type TrackInput = Pick<EventInput, 'event'> & Loose<Omit<EventInput, 'event' | 'timestamp'>> & { timestamp?: Instant | null };

/** Body of `POST /v1/identify`. */
export type IdentifyInput = Pick<ParsedIdentify, 'anonymous_id' | 'user_id'> & Loose<Omit<ParsedIdentify, 'anonymous_id' | 'user_id'>>;

/** Body of `POST /v1/forget`. */
export type ForgetInput = Pick<ParsedForget, 'user_id'>;

/** Query string of `GET /v1/query`. */
export type QueryParams = Range & Loose<Omit<ParsedQuery, 'from' | 'to'>>;

/** Query string of `GET /v1/stats`; `group_by` may be an array of the allowed columns or the comma-separated string. */
export type StatsParams<G extends StatsGroupBy = StatsGroupBy> = Range & Loose<Omit<ParsedStats, 'from' | 'to' | 'group_by'>> & { group_by?: readonly G[] | string };

/** Query string of `GET /v1/sources`. */
export type SourcesParams = Range & Loose<Omit<ParsedSources, 'from' | 'to'>>;

export interface TrackResponse {
  ok: true;
  event_id: string;
}
export interface BatchResponse {
  ok: true;
  count: number;
}
export interface IdentifyResponse {
  ok: true;
}
export interface ForgetResponse {
  ok: true;
  queued: true;
}

/** A row of `GET /v1/query`: the spec's columns (`properties` is a JSON string) plus what the server adds. */
export type QueryRow = Pick<EventRow, (typeof QUERY_ROW_COLUMNS)[number]> & Partial<Pick<EventRow, 'event_id' | 'session_id' | 'browser' | 'os'>>;
export interface QueryResponse {
  rows: QueryRow[];
}

/** A row of `GET /v1/stats`: one field per `group_by` column (typed when `group_by` is an array), `value`, and `bucket` with an `interval`. */
export type StatsRow<G extends StatsGroupBy = never> = { [K in G]: string | null } & Partial<Record<StatsGroupBy, string | null>> & { value: number; bucket?: string };
export interface StatsResponse<G extends StatsGroupBy = never> {
  metric: ParsedStats['metric'];
  rows: StatsRow<G>[];
}

export interface SourcesResponse {
  breakdown: ParsedSources['breakdown'];
  rows: SourcesRow[];
}
