import { z } from 'zod';
import { toWellFormed } from './ingest.schema';
import { clampToAcceptedRange, isoDateParam } from './iso-date';
import { type StatsGroupBy, parseGroupBy } from './group-by';
import { LIMITS } from './limits';

const limit = (max: number, dflt: number) => z.coerce.number().int().min(1).max(max).default(dflt);
const optionalText = (max: number) => z.string().min(1).max(max).transform(toWellFormed).optional();

/** `from` (inclusive) and `to` (exclusive), both ISO 8601, `to` after `from`. */
const range = z.object({ from: isoDateParam(), to: isoDateParam() });
const rangeIsOrdered = (v: { from: number; to: number }) => v.to > v.from;
const rangeMessage = { message: '`to` must be after `from`', path: ['to'] };
/** Cut to the accepted timestamps (after the order check, on what was sent): a wider range reads the same events. */
const clampRange = <T extends { from: number; to: number }>(v: T): T => ({ ...v, from: clampToAcceptedRange(v.from), to: clampToAcceptedRange(v.to) });

export const queryParamsSchema = range
  .extend({
    event: optionalText(128),
    source: optionalText(256),
    medium: optionalText(256),
    user_id: optionalText(256),
    limit: limit(LIMITS.queryLimit.max, LIMITS.queryLimit.default),
  })
  .refine(rangeIsOrdered, rangeMessage)
  .transform(clampRange);

/** group_by parsed into typed columns, once the rest of the query string is valid (so invalid_params comes first). */
const withParsedGroupBy = <T extends { group_by?: string }>({ group_by, ...rest }: T): Omit<T, 'group_by'> & { group_by?: StatsGroupBy[] } =>
  group_by === undefined ? rest : { ...rest, group_by: parseGroupBy(group_by) };

export const statsParamsSchema = range
  .extend({
    metric: z.enum(['count', 'uniques']).default('count'),
    event: optionalText(128),
    group_by: z.string().optional(),
    interval: z.enum(['hour', 'day', 'week']).optional(),
    limit: limit(LIMITS.statsLimit.max, LIMITS.statsLimit.default),
  })
  .refine(rangeIsOrdered, rangeMessage)
  .transform(clampRange)
  .transform(withParsedGroupBy);

export const sourcesParamsSchema = range
  .extend({
    breakdown: z.enum(['source_medium', 'source']).default('source_medium'),
    limit: limit(LIMITS.sourcesLimit.max, LIMITS.sourcesLimit.default),
  })
  .refine(rangeIsOrdered, rangeMessage)
  .transform(clampRange);

export type QueryParams = z.output<typeof queryParamsSchema>;
export type StatsParams = z.output<typeof statsParamsSchema>;
export type SourcesParams = z.output<typeof sourcesParamsSchema>;
