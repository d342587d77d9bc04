import { z } from 'zod';
import { finiteValuesText } from './catalog';
import { INSIGHT_FILTER_OPS } from './insights.schema';
import { STATS_GROUP_BY } from './group-by';
import { statsParamsSchema } from './read.schema';

/**
 * What the MCP tool declarations of `routes` (api-routes.ts, `mcp`) use beside the route's own schemas: the tool
 * hints, the portable JSON of filters and goals, and the arguments get_stats takes beyond GET /v1/stats.
 */

/** The MCP spec's ToolAnnotations this server sets. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint: boolean;
}
// Reads touch nothing; track_event adds a row (no dedup: not idempotent); neither reaches beyond this service.
export const READ_TOOL: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
export const WRITE_TOOL: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

/** get_stats takes group_by as an array too (its length counted before any entry is looked at). */
export const getStatsArgsSchema = z.preprocess((v, ctx) => {
  if (v && typeof v === 'object' && Array.isArray((v as { group_by?: unknown }).group_by)) {
    const g = (v as { group_by: unknown[] }).group_by;
    if (g.length > STATS_GROUP_BY.length) {
      ctx.addIssue({ code: 'custom', message: `group_by: at most ${STATS_GROUP_BY.length} columns`, path: ['group_by'] });
      return z.NEVER;
    }
    return { ...v, group_by: g.every((x) => typeof x === 'string') ? g.join(',') : g };
  }
  return v;
}, statsParamsSchema);

// A result cut to the response-size cap says so; rows are open to new columns, as the API adds them within /v1.
export const truncated = z.boolean().optional();

// Filters and goals in few bytes, portable: conditions are tuples, written as plain arrays (prefixItems and recursion
// are not portable); the goal's filters are the same.
export const FILTERS_JSON = {
  type: 'array',
  items: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'array' }] } }] } },
  description: `All hold. [op, dimension, [values]] (op: ${INSIGHT_FILTER_OPS.join(', ')}) or ["or", [conditions]]. is/is_not take only these values (${finiteValuesText()}).`,
};
export const GOAL_JSON = {
  type: 'object',
  properties: { event: { type: 'string' }, path: { type: 'string', description: 'Ending in * : a prefix.' }, filters: { type: 'array', items: FILTERS_JSON.items } },
  additionalProperties: false,
  description: 'Event and/or path, filters on that event.',
};

/** A goal inline or a saved one's `{ id }` (list_goals): where a tool takes a goal. */
export const GOAL_OR_ID_JSON = {
  anyOf: [{ type: 'object', properties: { id: { type: 'string', description: 'A saved goal\'s id (list_goals).' } }, required: ['id'], additionalProperties: false }, { ...GOAL_JSON, description: undefined }],
  type: undefined,
};
