import { z } from 'zod';
import { eventNameSchema, toWellFormed, userIdSchema } from './ingest.schema';
import { type RangeBound, clampToAcceptedRange, isoBoundParam, isoDateParam, readRangeOf } from './iso-date';
import { timeZoneSchema } from './time-zone';
import { STATS_GROUP_BY, type StatsGroupBy, parseGroupBy } from './group-by';
import { segmentRefSchema } from './insights.schema';
import { LIMITS } from './limits';
import { STATS_COLUMNS, STATS_METRICS, STATS_METRIC_CATALOG } from './catalog';

/** The finite group_by columns' values: "channel is one of direct, ...". */
const statsValuesText = () =>
  Object.entries(STATS_COLUMNS)
    .flatMap(([name, c]) => ('values' in c ? [`${name} is one of ${c.values.join(', ')}.`] : []))
    .join(' ');

const limit = (max: number, dflt: number) => z.coerce.number().int().min(1).max(max).default(dflt).describe('Maximum rows.');
const optionalText = (max: number) => z.string().min(1).max(max).transform(toWellFormed).optional();

/** `from` (inclusive) and `to` (exclusive), both ISO 8601, `to` after `from`. */
const range = z.object({ from: isoDateParam().describe('Start of the range, ISO 8601, inclusive.'), to: isoDateParam().describe('End of the range, ISO 8601, exclusive.') });
const rangeIsOrdered = (v: { from: number; to: number }) => v.to > v.from;
const rangeMessage = { message: '`to` must be after `from`', path: ['to'] };
/** Cut to the accepted timestamps (after the order check, on what was sent): a wider range reads the same events. */
const clampRange = <T extends { from: number; to: number }>(v: T): T => ({ ...v, from: clampToAcceptedRange(v.from), to: clampToAcceptedRange(v.to) });

/**
 * The range of /v1/stats and /v1/sources, with the additive `tz` (issue 47): UTC by default (the spec); with a zone,
 * buckets and dates sent alone are counted in it.
 */
const zonedRange = z.object({
  from: isoBoundParam().describe('Start of the range, ISO 8601, inclusive.'),
  to: isoBoundParam().describe('End of the range, ISO 8601, exclusive.'),
  tz: timeZoneSchema.optional().describe('IANA time zone of buckets and dates (default UTC).'),
});
const boundsOrdered = (v: { from: RangeBound; to: RangeBound }) => v.to.ms > v.from.ms;
const zonedRangeOf = <T extends { from: RangeBound; to: RangeBound }>({ from, to, ...rest }: T) => ({ ...rest, ...readRangeOf(from, to) });

/** The equality filters of raw-event reads (/v1/query, /v1/export). */
const eventFilters = {
  event: eventNameSchema.optional(),
  source: optionalText(256).describe('Only events of this traffic source (e.g. google, direct, newsletter).'),
  medium: optionalText(256).describe('Only events of this medium (e.g. paid, organic, social, email, referral, direct).'),
  user_id: userIdSchema.optional(),
};

export const queryParamsSchema = range
  .extend({
    ...eventFilters,
    limit: limit(LIMITS.queryLimit.max, LIMITS.queryLimit.default),
  })
  .refine(rangeIsOrdered, rangeMessage)
  .transform(clampRange);

/** group_by's length at most: every column named, and room for repeats and spaces. */
const GROUP_BY_MAX_CHARS = 256;

/** group_by parsed into typed columns, once the rest of the query string is valid (so invalid_params comes first). */
const withParsedGroupBy = <T extends { group_by?: string }>({ group_by, ...rest }: T): Omit<T, 'group_by'> & { group_by?: StatsGroupBy[] } =>
  group_by === undefined ? rest : { ...rest, group_by: parseGroupBy(group_by) };

export const statsParamsSchema = zonedRange
  .extend({
    metric: z.enum(STATS_METRICS).default('count').describe(STATS_METRICS.map((m) => `${m}: ${STATS_METRIC_CATALOG[m].description}`).join(' ')),
    event: eventNameSchema.optional(),
    group_by: z.string().max(GROUP_BY_MAX_CHARS).optional().describe(`Columns to group by, comma-separated: ${STATS_GROUP_BY.join(', ')}. ${statsValuesText()}`),
    interval: z.enum(['hour', 'day', 'week']).optional().describe('hour, day or week (weeks start Monday, in tz): adds a bucket column "YYYY-MM-DD HH:MM:SS".'),
    limit: limit(LIMITS.statsLimit.max, LIMITS.statsLimit.default),
  })
  .refine(boundsOrdered, rangeMessage)
  .transform(zonedRangeOf)
  .transform(withParsedGroupBy);

/**
 * A yes/no query parameter: `true` or `false` in a query string, a JSON boolean from an MCP tool call (whose arguments
 * are parsed with the same schema).
 */
const queryBoolean = (dflt: boolean) =>
  z
    .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')], { error: 'true or false expected' })
    .default(dflt);

/**
 * /v1/sources counts every stored event by default, bots included (the spec's answer: `events` is every event of the
 * group); `include_bots=false` leaves out events whose device_type is bot, as insights and the dashboard do.
 */
export const SOURCES_INCLUDE_BOTS_DEFAULT = true;

export const sourcesParamsSchema = zonedRange
  .extend({
    breakdown: z.enum(['source_medium', 'source']).default('source_medium').describe('source_medium (default: one row per source and medium) or source.'),
    include_bots: queryBoolean(SOURCES_INCLUDE_BOTS_DEFAULT).describe(
      'true (default, the answer /v1/sources always gave): every stored event counts, device_type bot included. false: events of device_type bot are left out (a session is then its other events, entered by the first of them), as POST /v1/insights and the dashboard count by default.',
    ),
    limit: limit(LIMITS.sourcesLimit.max, LIMITS.sourcesLimit.default),
  })
  .refine(boundsOrdered, rangeMessage)
  .transform(zonedRangeOf);

/** GET /v1/export: the range and filters of /v1/query, no row limit, and the file format. */
export const EXPORT_FORMATS = ['ndjson', 'csv', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const exportParamsSchema = range
  .extend({
    ...eventFilters,
    format: z.enum(EXPORT_FORMATS).default('ndjson').describe('ndjson (default: one JSON object a line), csv (RFC 4180, a header row) or parquet.'),
    segment: segmentRefSchema.optional(),
  })
  .refine(rangeIsOrdered, rangeMessage)
  .transform(clampRange);

export type QueryParams = z.output<typeof queryParamsSchema>;
export type ExportParams = z.output<typeof exportParamsSchema>;
export type StatsParams = z.output<typeof statsParamsSchema>;
export type SourcesParams = z.output<typeof sourcesParamsSchema>;
