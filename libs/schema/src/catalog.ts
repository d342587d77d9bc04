// The catalog of metrics and dimensions (issue 44): every name a read request may use, its kind, what it means and,
// where the set is finite, the values it can hold. The request schemas (their enums and describe() texts), the OpenAPI
// document and the MCP tool descriptions are made from it here; the SQL of each name lives in libs/event-store
// (queries/dimension-sql.ts, insights.query.ts, stats.planner.ts), in records keyed by these names, so a name added
// here without its SQL there is a compile error. No zod here: plain data that any lib may import.

/**
 * The channels an event can have, declared here once: libs/classifier's CHANNELS is this list, and its channelOf
 * computes one at ingest (events stored before migration 008 get one of them from CHANNEL_DEFAULT_SQL).
 */
export const CHANNEL_VALUES = [
  'direct',
  'internal',
  'organic_search',
  'paid_search',
  'organic_social',
  'paid_social',
  'email',
  'ai_assistant',
  'referral',
  'paid_other',
] as const;
export type ChannelValue = (typeof CHANNEL_VALUES)[number];

/** The device types enrichment gives (libs/enrichment's DeviceType; catalog.spec.ts holds the two equal). */
export const DEVICE_TYPE_VALUES = ['desktop', 'mobile', 'tablet', 'bot', 'other'] as const;

/** What a metric counts over: events, visits (sessions), or visitors completing a goal. */
export type MetricKind = 'event' | 'visit' | 'goal';
export interface MetricEntry {
  readonly kind: MetricKind;
  readonly description: string;
}

/** POST /v1/insights' metrics, in the order the API lists them. */
export const INSIGHT_METRICS = ['events', 'pageviews', 'visitors', 'visits', 'bounce_rate', 'visit_duration', 'views_per_visit', 'conversions', 'conversion_rate'] as const;
export type InsightMetric = (typeof INSIGHT_METRICS)[number];

export const METRIC_CATALOG: Record<InsightMetric, MetricEntry> = {
  events: { kind: 'event', description: 'Events counted.' },
  pageviews: { kind: 'event', description: 'Events named $pageview.' },
  visitors: { kind: 'event', description: 'Distinct anonymous_id (an estimate, exact up to 4,096; exact beside conversion_rate).' },
  visits: { kind: 'visit', description: 'Distinct visits (sessions), exact.' },
  bounce_rate: { kind: 'visit', description: 'Share (0..1) of visits whose only event is one $pageview.' },
  visit_duration: { kind: 'visit', description: 'Mean seconds from a visit\'s first event to its last.' },
  views_per_visit: { kind: 'visit', description: '$pageviews per visit.' },
  conversions: { kind: 'goal', description: 'Distinct visitors with an event completing the goal (needs goal).' },
  conversion_rate: { kind: 'goal', description: 'conversions / visitors, 0..1 (needs goal).' },
};

/** The metrics of a kind, in INSIGHT_METRICS' order. */
export const metricsOfKind = (kind: MetricKind): InsightMetric[] => INSIGHT_METRICS.filter((m) => METRIC_CATALOG[m].kind === kind);

/**
 * A dimension's kind: an `event` dimension is a value of each event; a `visit` dimension one value per visit (its entry
 * or its exit); `time` a bucket of the event's time; `property` a key of the event's properties.
 */
export type DimensionKind = 'event' | 'visit' | 'time' | 'property';
export interface DimensionEntry {
  readonly kind: DimensionKind;
  readonly description: string;
  /** Every value the dimension can hold, when that set is finite: `is`/`is_not` with another value is refused. */
  readonly values?: readonly string[];
}

/**
 * The column dimensions of /v1/insights (and funnel breakdowns and every filter), by name. The SQL of each is
 * libs/event-store's DIMENSION_SQL, a Record over these names.
 */
export const COLUMN_DIMENSIONS = {
  event_name: { kind: 'event', description: 'The event\'s name.' },
  source: { kind: 'visit', description: 'The visit\'s entry traffic source (as /v1/sources).' },
  medium: { kind: 'visit', description: 'The visit\'s entry medium.' },
  campaign: { kind: 'visit', description: 'The visit\'s entry utm_campaign (null without).' },
  channel: { kind: 'visit', description: 'The visit\'s entry channel.', values: CHANNEL_VALUES },
  country: { kind: 'event', description: 'ISO country code from geo-IP, empty when unknown.' },
  device_type: { kind: 'event', description: 'Device type from the User-Agent.', values: DEVICE_TYPE_VALUES },
  browser: { kind: 'event', description: 'Browser name, or unknown.' },
  os: { kind: 'event', description: 'Operating system, or unknown.' },
  path: { kind: 'event', description: 'The page path (null when absent).' },
  entry_path: { kind: 'visit', description: 'The path of the visit\'s first $pageview (null without one).' },
  exit_path: { kind: 'visit', description: 'The path of the visit\'s last $pageview (null without one).' },
} as const satisfies Record<string, DimensionEntry & { kind: 'event' | 'visit' }>;
export type InsightColumnDimension = keyof typeof COLUMN_DIMENSIONS;

export const INSIGHT_TIME_DIMENSIONS = ['time:hour', 'time:day', 'time:week', 'time:month'] as const;
export type InsightTimeDimension = (typeof INSIGHT_TIME_DIMENSIONS)[number];
export const TIME_DIMENSIONS: Record<InsightTimeDimension, DimensionEntry> = {
  'time:hour': { kind: 'time', description: 'The hour, "YYYY-MM-DD HH:00:00" in the project\'s time zone.' },
  'time:day': { kind: 'time', description: 'The day, in the project\'s time zone.' },
  'time:week': { kind: 'time', description: 'The week, from Monday, in the project\'s time zone.' },
  'time:month': { kind: 'time', description: 'The month, from the 1st, in the project\'s time zone.' },
};
export const PROPERTY_DIMENSION: DimensionEntry = { kind: 'property', description: 'prop:<key>: a top-level key of properties, as a string (null when absent).' };

/** The values of each dimension whose set is finite (channel, device_type), by dimension. */
export const FINITE_DIMENSION_VALUES = Object.fromEntries(
  Object.entries(COLUMN_DIMENSIONS).flatMap(([name, d]) => ('values' in d ? [[name, d.values]] : [])),
) as Partial<Record<InsightColumnDimension, readonly string[]>>;

/** "channel: direct, internal, ...; device_type: desktop, ...": the finite dimensions' values, for descriptions. */
export const finiteValuesText = (): string =>
  Object.entries(FINITE_DIMENSION_VALUES)
    .map(([name, values]) => `${name}: ${values!.join(', ')}`)
    .join('; ');

/** GET /v1/stats' metrics. */
export const STATS_METRICS = ['count', 'uniques'] as const;
export type StatsMetric = (typeof STATS_METRICS)[number];
export const STATS_METRIC_CATALOG: Record<StatsMetric, MetricEntry> = {
  count: { kind: 'event', description: 'Events (the default).' },
  uniques: { kind: 'event', description: 'Distinct anonymous_id, an estimate.' },
};

/**
 * The columns GET /v1/stats may group by (the spec's allow-list): each event's own value (source and medium of the
 * event, not of its visit's entry as in /v1/insights). The SQL of each is libs/event-store's STATS_COLUMN_SQL.
 */
export const STATS_COLUMNS = {
  event_name: { kind: 'event', description: 'The event\'s name.' },
  source: { kind: 'event', description: 'The event\'s traffic source.' },
  medium: { kind: 'event', description: 'The event\'s medium.' },
  country: { kind: 'event', description: COLUMN_DIMENSIONS.country.description },
  device_type: { kind: 'event', description: COLUMN_DIMENSIONS.device_type.description, values: DEVICE_TYPE_VALUES },
  browser: { kind: 'event', description: COLUMN_DIMENSIONS.browser.description },
  os: { kind: 'event', description: COLUMN_DIMENSIONS.os.description },
  path: { kind: 'event', description: COLUMN_DIMENSIONS.path.description },
  channel: { kind: 'event', description: 'The event\'s channel.', values: CHANNEL_VALUES },
} as const satisfies Record<string, DimensionEntry>;

/** "events (Events counted.), pageviews (...)": each metric with its meaning, for describe() texts. */
export const metricsText = (): string => INSIGHT_METRICS.map((m) => `${m} (${METRIC_CATALOG[m].description})`).join(', ');

const namesOfKind = (kind: 'event' | 'visit') => (Object.keys(COLUMN_DIMENSIONS) as InsightColumnDimension[]).filter((d) => COLUMN_DIMENSIONS[d].kind === kind);
/** The dimensions by kind in one line, for describe() texts: event, visit (entry or exit), prop:<key>, time:*. */
export const dimensionsText = (withTime: boolean): string =>
  [
    `event dimensions ${namesOfKind('event').join(', ')}, prop:<key>`,
    `visit dimensions (the visit's entry, or its entry/exit page) ${namesOfKind('visit').join(', ')}`,
    ...(withTime ? [`time buckets ${INSIGHT_TIME_DIMENSIONS.join(', ')}`] : []),
  ].join('; ');
