// Request and response types of the API, derived from libs/schema. Type-only imports: the SDK has no runtime
// dependency on the schema lib (or on zod); these vanish when compiled. Built from the schemas' parsed (output)
// types, which stay precise however a schema pre-processes its input.
import type {
  Annotation,
  AnnotationKind,
  AnnotationList,
  BatchResponse,
  EventInput,
  ForgetResponse,
  FunnelCountBy,
  FunnelResponse,
  FunnelStep,
  IdentifyInput as ParsedIdentify,
  IdentifyResponse,
  ForgetInput as ParsedForget,
  InsightDimension,
  InsightFilterOp,
  InsightMetric,
  InsightTimeDimension,
  PropertiesParams as ParsedProperties,
  PropertiesResponse,
  QueryParams as ParsedQuery,
  QueryResponse,
  QueryRow,
  RetentionPeriod,
  RetentionResponse,
  SavedFunnel,
  SavedGoal,
  SavedSegment,
  SourcesParams as ParsedSources,
  SourcesResponse,
  SourcesRow,
  StatsGroupBy,
  StatsParams as ParsedStats,
  StatsResponse as AnyStatsResponse,
  StatsRow as AnyStatsRow,
  TrackResponse,
} from '@analytics/schema';

export type { Annotation, AnnotationKind, AnnotationList, BatchResponse, ForgetResponse, FunnelResponse, FunnelStep, IdentifyResponse, RetentionResponse, InsightDimension, InsightMetric, PropertiesResponse, QueryResponse, QueryRow, SavedFunnel, SavedGoal, SavedSegment, SourcesResponse, SourcesRow, StatsGroupBy, TrackResponse };

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

/** A row of `GET /v1/stats`: one field per `group_by` column (typed when `group_by` is an array), `value`, and `bucket` with an `interval`. */
export type StatsRow<G extends StatsGroupBy = never> = AnyStatsRow & { [K in G]: string | null };
export interface StatsResponse<G extends StatsGroupBy = never> {
  metric: AnyStatsResponse['metric'];
  rows: StatsRow<G>[];
}

/** A condition of `POST /v1/insights` filters: `[op, dimension, [values]]` or `["or", [conditions]]`. */
export type InsightFilter = readonly [InsightFilterOp, Exclude<InsightDimension, InsightTimeDimension>, readonly string[]] | readonly ['or', readonly InsightFilter[]];

/** A goal (insights `goal`, a funnel step, retention `start` / `return`): an event name and/or a path (ending in `*`: a prefix), and conditions on that event. */
export interface Goal {
  event?: string;
  path?: string;
  filters?: readonly InsightFilter[];
}

/** A goal saved for the project (`goals()`), named by its id where a goal is taken (docs/saved-and-shared.md). */
export interface GoalRef {
  id: string;
}

/** Body of `POST /v1/funnel`: 2 to 10 steps in order (inline goals or saved ones' `{ id }`), or `id`, a saved funnel. */
export type FunnelBody = Range &
  ({ steps: readonly (Goal | GoalRef)[]; window_s?: number; count_by?: FunnelCountBy; id?: never } | { id: string; steps?: never; window_s?: never; count_by?: never }) & {
    breakdown?: Exclude<InsightDimension, InsightTimeDimension>;
    filters?: readonly InsightFilter[];
    include_bots?: boolean;
    /** A saved segment's id (`segments()`): its filters hold too. */
    segment?: string;
  };

/** Body of `POST /v1/retention`. */
export type RetentionBody = Range & {
  period: RetentionPeriod;
  count_by?: 'user' | 'visitor';
  start?: Goal | GoalRef;
  return?: Goal | GoalRef;
  filters?: readonly InsightFilter[];
  include_bots?: boolean;
  /** A saved segment's id (`segments()`): its filters hold too. */
  segment?: string;
};

/** Body of `POST /v1/insights`; the metrics and dimensions given as arrays type the answer's rows. */
export type InsightsBody<M extends InsightMetric = 'visitors', D extends InsightDimension = never> = Range & {
  metrics?: readonly M[];
  dimensions?: readonly D[];
  filters?: readonly InsightFilter[];
  compare?: 'previous_period';
  order_by?: ReadonlyArray<readonly [M | D, 'asc' | 'desc']>;
  limit?: number;
  include_bots?: boolean;
  /** Needed by the metrics conversions and conversion_rate: inline, or a saved goal's `{ id }`. */
  goal?: Goal | GoalRef;
  /** A saved segment's id (`segments()`): its filters hold too. */
  segment?: string;
};

/** A row of `POST /v1/insights`: each dimension (null where absent), each metric, and with `compare` the previous period's metrics. */
export type InsightsRow<M extends InsightMetric = 'visitors', D extends InsightDimension = never> = { [K in D]: string | null } & { [K in M]: number } & {
  comparison?: { [K in M]: number };
};
export interface InsightsResponse<M extends InsightMetric = 'visitors', D extends InsightDimension = never> {
  rows: InsightsRow<M, D>[];
  /** With a `time:*` dimension: the range's annotations, oldest first. */
  annotations?: Annotation[];
}

/** Query string of `GET /v1/properties`. */
export type PropertiesParams = Range & Loose<Omit<ParsedProperties, 'from' | 'to'>>;

/** `GET /v1/goals`, `/v1/funnels`, `/v1/segments`: the project's saved definitions, oldest first. */
export interface GoalList {
  goals: SavedGoal[];
}
export interface FunnelList {
  funnels: SavedFunnel[];
}
export interface SegmentList {
  segments: SavedSegment[];
}

/** Body of `POST /v1/annotations` (`sk_` keys): `at` defaults to now; `kind` to `note`. */
export interface AnnotateInput {
  at?: Instant;
  text: string;
  kind?: AnnotationKind;
}
/** `POST /v1/annotations`' answer. */
export interface AnnotationResponse {
  annotation: Annotation;
}
/** Query string of `GET /v1/annotations` (`rk_` keys): the annotations with from <= at < to. */
export type AnnotationsParams = Range;
