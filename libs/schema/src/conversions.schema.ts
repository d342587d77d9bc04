import { z } from 'zod';
import { type RangeBound, type ReadRange, clampToAcceptedRange, isoBoundParam, readRangeOf } from './iso-date';
import type { InsightTimeDimension } from './catalog';
import { type FilterIssue, type InsightCondition, type InsightDimension, SAVED_ID_MAX, filterListSchema, goalOrRefSchema, goalSchema, isInsightDimension, parseFilters, segmentRefSchema, valueBytesIssues } from './insights.schema';

// POST /v1/funnel and POST /v1/retention (issue 31). The meanings: docs/conversions.md.

export const FUNNEL_LIMITS = { steps: { min: 2, max: 10 }, window_s: { min: 1, max: 2_592_000, default: 86_400 }, breakdownValues: 100 } as const;
/** Periods a retention range may span (a year of days, 7 years of weeks, 30 years of months): bounds the answer's size. */
export const RETENTION_MAX_PERIODS = 370;
const DAY = 86_400_000;
/** How many periods of the kind start in [from, to) counting the one holding `from`. */
function periodsIn(from: number, to: number, period: 'day' | 'week' | 'month'): number {
  if (period === 'month') {
    const [a, b] = [new Date(from), new Date(to)];
    return (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth() + 1;
  }
  return Math.ceil((to - from) / (period === 'week' ? 7 * DAY : DAY)) + 1;
}
export const FUNNEL_COUNT_BY = ['visitor', 'user', 'session'] as const;
export const RETENTION_COUNT_BY = ['user', 'visitor'] as const;
export const RETENTION_PERIODS = ['day', 'week', 'month'] as const;
export type FunnelCountBy = (typeof FUNNEL_COUNT_BY)[number];
export type RetentionPeriod = (typeof RETENTION_PERIODS)[number];

const FILTERS_TEXT = 'Conditions every counted event must meet, as /v1/insights `filters`.';
const range = {
  from: isoBoundParam().describe('Start of the range, ISO 8601, inclusive.'),
  to: isoBoundParam().describe('End of the range, ISO 8601, exclusive.'),
};
const filtersField = filterListSchema(FILTERS_TEXT);
const includeBots = z.boolean().default(false).describe('Count events of device_type bot too (left out by default).');

const stepsText = (more: string) => `2 to 10 steps, in order, each a goal { event?, path?, filters? }${more}.`;
const stepsOf = <G extends z.ZodType>(goal: G) =>
  z
    .array(goal)
    .min(FUNNEL_LIMITS.steps.min, { error: `a funnel has ${FUNNEL_LIMITS.steps.min} to ${FUNNEL_LIMITS.steps.max} steps` })
    .max(FUNNEL_LIMITS.steps.max, { error: `a funnel has ${FUNNEL_LIMITS.steps.min} to ${FUNNEL_LIMITS.steps.max} steps` });
const windowField = z
  .number()
  .int()
  .min(FUNNEL_LIMITS.window_s.min)
  .max(FUNNEL_LIMITS.window_s.max)
  .describe('Seconds from an entity\'s step 1 within which its later steps count (1 to 2592000, default 86400).');
const countByField = z.enum(FUNNEL_COUNT_BY, { error: `count_by: allowed are ${FUNNEL_COUNT_BY.join(', ')}` }).describe('visitor (anonymous_id, default), user (user_id) or session (session_id).');
const breakdownField = z
  .string()
  .refine((d) => isInsightDimension(d, true), { error: 'unknown breakdown: one dimension of /v1/insights but time:*' })
  .transform((d) => d as Exclude<InsightDimension, InsightTimeDimension>)
  .optional()
  .describe('One /v1/insights dimension (not time:*): the funnel once per value of it on each entity\'s step-1 event.');

/** The filters of each goal (inline) of a list: what the value-bytes bound counts beside the request's filters. */
const filtersOfGoals = (goals: ReadonlyArray<object | undefined>) => goals.map((g) => (g && 'filters' in g ? (g.filters as InsightCondition[]) : undefined));

/**
 * A funnel's definition as a saved funnel keeps it (docs/saved-and-shared.md): the steps, window, entity and filters of
 * a POST /v1/funnel body, the defaults applied.
 */
export const funnelDefinitionFields = {
  steps: stepsOf(goalSchema).describe(stepsText('')),
  window_s: windowField.default(FUNNEL_LIMITS.window_s.default),
  count_by: countByField.default('visitor'),
  filters: filtersField,
};
/** The value-bytes bound over a funnel's filters and its steps' (the definition's checks beside the fields'). */
export function checkFunnelFilters(v: { filters: unknown[][]; steps?: ReadonlyArray<object> }, ctx: z.RefinementCtx): void {
  const issues: FilterIssue[] = [];
  issues.push(...valueBytesIssues([parseFilters(v.filters, ['filters'], issues), ...filtersOfGoals(v.steps ?? [])]));
  for (const issue of issues) ctx.addIssue({ code: 'custom', ...issue });
}

const checkRange = (v: { from: RangeBound; to: RangeBound }, ctx: z.RefinementCtx) => {
  if (v.to.ms <= v.from.ms) ctx.addIssue({ code: 'custom', message: '`to` must be after `from`', path: ['to'] });
};

/** A funnel read with every step inline: what queryFunnel runs. */
export const funnelBodySchema = z
  .object({
    ...range,
    ...funnelDefinitionFields,
    breakdown: breakdownField,
    include_bots: includeBots,
  })
  .strict()
  .superRefine((v, ctx) => {
    checkRange(v, ctx);
    checkFunnelFilters(v, ctx);
  })
  .transform((v) => ({ ...v, ...readRangeOf(v.from, v.to), filters: parseFilters(v.filters, ['filters'], [])! }));

/** What a saved funnel brings itself: refused beside `id`. */
const SAVED_FUNNEL_FIELDS = ['steps', 'window_s', 'count_by'] as const;

/**
 * POST /v1/funnel as sent: `steps` (each inline or a saved goal's `{ id }`), or `id`, a saved funnel (its steps,
 * window_s, count_by and filters; `filters` sent hold beside its own); `segment` a saved segment's id. Resolved in the
 * capability layer into a funnelBodySchema read.
 */
export const funnelRequestSchema = z
  .object({
    ...range,
    id: z.string().min(1).max(SAVED_ID_MAX).optional().describe('The id of a funnel saved for the project (GET /v1/funnels), instead of steps: its steps, window_s, count_by and filters.'),
    steps: stepsOf(goalOrRefSchema).optional().describe(stepsText(', or { id } of a saved goal; required without `id`')),
    window_s: windowField.optional().describe('Seconds from an entity\'s step 1 within which its later steps count (1 to 2592000, default 86400; not with `id`).'),
    count_by: countByField.optional().describe('visitor (anonymous_id, default), user (user_id) or session (session_id); not with `id`.'),
    breakdown: breakdownField,
    filters: filtersField,
    include_bots: includeBots,
    segment: segmentRefSchema.optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    checkRange(v, ctx);
    if (v.id === undefined && v.steps === undefined) ctx.addIssue({ code: 'custom', message: 'a funnel takes `steps`, or `id` of a saved funnel', path: ['steps'] });
    if (v.id !== undefined)
      for (const field of SAVED_FUNNEL_FIELDS)
        if (v[field] !== undefined) ctx.addIssue({ code: 'custom', message: `${field} comes from the saved funnel: leave it out beside \`id\``, path: [field] });
    checkFunnelFilters(v, ctx);
  })
  .transform((v) => ({ ...v, ...readRangeOf(v.from, v.to), filters: parseFilters(v.filters, ['filters'], [])! }));
export type FunnelRequest = z.output<typeof funnelRequestSchema>;
export type FunnelBody = z.input<typeof funnelBodySchema>;
export type FunnelQuery = z.output<typeof funnelBodySchema>;

export const funnelStepSchema = z.object({
  index: z.number().int().describe('1 for the first step.'),
  count: z.number().int().describe('Entities that reached this step (did steps 1..index in order, within window_s of their step 1).'),
  conversion_rate: z.number().describe('count / the first step\'s count, 0..1 (0 when nobody did step 1).'),
  drop_off: z.number().int().describe('Entities of the previous step that did not reach this one (0 for step 1).'),
  median_time_to_convert_s: z.number().nullable().describe('Median seconds from the previous step to this one, over the entities that reached it; null for step 1 and when nobody reached it.'),
});
export type FunnelStep = z.output<typeof funnelStepSchema>;
const notesField = z.array(z.string()).optional().describe('Caveats about the answer, e.g. daily visitor ids counted by visitor over more than one day.');
export const funnelResponseSchema = z
  .object({
    steps: z.array(funnelStepSchema).describe('Every step, over every entity.'),
    breakdown: z
      .array(z.object({ value: z.string().nullable().describe('The breakdown value (null: absent).'), steps: z.array(funnelStepSchema) }))
      .optional()
      .describe(`With \`breakdown\`: the steps per value, most entities at step 1 first (ties by value), at most ${FUNNEL_LIMITS.breakdownValues} values.`),
    notes: notesField,
  })
  .describe('The funnel: entities per step, in order.');
export type FunnelResponse = z.output<typeof funnelResponseSchema>;

const retentionFields = {
  ...range,
  period: z.enum(RETENTION_PERIODS, { error: `period: allowed are ${RETENTION_PERIODS.join(', ')}` }).describe("day, week (Monday to Sunday) or month, in the project's time zone (UTC by default)."),
  count_by: z.enum(RETENTION_COUNT_BY, { error: `count_by: allowed are ${RETENTION_COUNT_BY.join(', ')}` }).default('user').describe('user (user_id, default) or visitor (anonymous_id).'),
  filters: filtersField,
  include_bots: includeBots,
};
function checkRetention(v: { from: RangeBound; to: RangeBound; period: RetentionPeriod; filters: unknown[][]; start?: object; return?: object }, ctx: z.RefinementCtx): void {
  if (v.to.ms <= v.from.ms) ctx.addIssue({ code: 'custom', message: '`to` must be after `from`', path: ['to'] });
  else if (periodsIn(clampToAcceptedRange(v.from.ms), clampToAcceptedRange(v.to.ms), v.period) > RETENTION_MAX_PERIODS)
    ctx.addIssue({ code: 'custom', message: `at most ${RETENTION_MAX_PERIODS} periods between from and to: narrow the range or take a longer period`, path: ['to'] });
  const issues: FilterIssue[] = [];
  issues.push(...valueBytesIssues([parseFilters(v.filters, ['filters'], issues), ...filtersOfGoals([v.start, v.return])]));
  for (const issue of issues) ctx.addIssue({ code: 'custom', ...issue });
}
const finishRetention = <T extends { from: RangeBound; to: RangeBound; filters: unknown[][] }>(v: T): Omit<T, 'filters' | 'from' | 'to'> & ReadRange & { filters: InsightCondition[] } => ({ ...v, ...readRangeOf(v.from, v.to), filters: parseFilters(v.filters, ['filters'], [])! });

/** A retention read with every goal inline: what queryRetention runs. */
export const retentionBodySchema = z
  .object({
    ...retentionFields,
    start: goalSchema.optional().describe('What puts an entity in a cohort (default: any event).'),
    return: goalSchema.optional().describe('What counts as coming back (default: any event).'),
  })
  .strict()
  .superRefine(checkRetention)
  .transform(finishRetention);

/** POST /v1/retention as sent: start and return may be saved goals' `{ id }`, `segment` a saved segment's id. */
export const retentionRequestSchema = z
  .object({
    ...retentionFields,
    start: goalOrRefSchema.optional().describe('What puts an entity in a cohort (default: any event): a goal, or { id } of a saved goal.'),
    return: goalOrRefSchema.optional().describe('What counts as coming back (default: any event): a goal, or { id } of a saved goal.'),
    segment: segmentRefSchema.optional(),
  })
  .strict()
  .superRefine(checkRetention)
  .transform(finishRetention);
export type RetentionRequest = z.output<typeof retentionRequestSchema>;
export type RetentionBody = z.input<typeof retentionBodySchema>;
export type RetentionQuery = z.output<typeof retentionBodySchema>;

export const retentionResponseSchema = z
  .object({
    cohorts: z.array(
      z.object({
        cohort: z.string().describe("The first day of the cohort's period, YYYY-MM-DD (in the project's time zone)."),
        size: z.number().int().describe('Entities whose first start event in the range falls in this period.'),
        returned: z.array(z.number().int()).describe('returned[k]: the cohort\'s entities with a return event in period cohort + k, for each k whose period starts before `to`.'),
      }),
    ),
    notes: notesField,
  })
  .describe('Cohorts by the period of their first start event, oldest first.');
export type RetentionResponse = z.output<typeof retentionResponseSchema>;
