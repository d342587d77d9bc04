import { STATS_COLUMNS } from './catalog';
import { ApiError } from './errors';
import { DETAILS_LIMITS } from './validate';

/** The columns GET /v1/stats may group by (the spec's allow-list): the catalog's STATS_COLUMNS, in its order. */
export type StatsGroupBy = keyof typeof STATS_COLUMNS;
export const STATS_GROUP_BY = Object.keys(STATS_COLUMNS) as readonly StatsGroupBy[];

/**
 * Parses the comma-separated group_by: items trimmed, empty items ignored, repeats dropped (first one kept).
 * Any other name gives 400 invalid_group_by with the allowed columns (and the first 50 unknown names, each cut to 100 characters).
 */
export function parseGroupBy(raw: string | undefined): StatsGroupBy[] {
  const items = (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = [...new Set(items.filter((i) => !(STATS_GROUP_BY as readonly string[]).includes(i)))];
  if (unknown.length > 0) {
    // The names echoed back are bounded (DETAILS_LIMITS), however many were sent.
    const named = unknown.slice(0, DETAILS_LIMITS.issues).map((u) => (u.length > 100 ? `${u.slice(0, 100)}…` : u));
    throw new ApiError('invalid_group_by', {
      allowed: [...STATS_GROUP_BY],
      details: { unknown: named, ...(named.length < unknown.length ? { truncated: true } : {}), message: `group_by accepts only: ${STATS_GROUP_BY.join(', ')}` },
    });
  }
  return [...new Set(items as StatsGroupBy[])];
}
