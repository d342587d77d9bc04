import { z } from 'zod';
import { clampToAcceptedRange, isoBoundParam, readRangeOf } from './iso-date';
import type { InsightTimeDimension } from './catalog';
import { type FilterIssue, type InsightDimension, filterListSchema, goalSchema, isInsightDimension, parseFilters, valueBytesIssues } from './insights.schema';

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

export const funnelBodySchema = z
  .object({
    ...range,
    steps: z
      .array(goalSchema)
      .min(FUNNEL_LIMITS.steps.min, { error: `a funnel has ${FUNNEL_LIMITS.steps.min} to ${FUNNEL_LIMITS.steps.max} steps` })
      .max(FUNNEL_LIMITS.steps.max, { error: `a funnel has ${FUNNEL_LIMITS.steps.min} to ${FUNNEL_LIMITS.steps.max} steps` })
      .describe('2 to 10 steps, in order, each a goal { event?, path?, filters? }.'),
    window_s: z
      .number()
      .int()
      .min(FUNNEL_LIMITS.window_s.min)
      .max(FUNNEL_LIMITS.window_s.max)
      .default(FUNNEL_LIMITS.window_s.default)
      .describe('Seconds from an entity\'s step 1 within which its later steps count (1 to 2592000, default 86400).'),
    count_by: z.enum(FUNNEL_COUNT_BY, { error: `count_by: allowed are ${FUNNEL_COUNT_BY.join(', ')}` }).default('visitor').describe('visitor (anonymous_id, default), user (user_id) or session (session_id).'),
    breakdown: z
      .string()
      .refine((d) => isInsightDimension(d, true), { error: 'unknown breakdown: one dimension of /v1/insights but time:*' })
      .transform((d) => d as Exclude<InsightDimension, InsightTimeDimension>)
      .optional()
      .describe('One /v1/insights dimension (not time:*): the funnel once per value of it on each entity\'s step-1 event.'),
    filters: filtersField,
    include_bots: includeBots,
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.to.ms <= v.from.ms) ctx.addIssue({ code: 'custom', message: '`to` must be after `from`', path: ['to'] });
    const issues: FilterIssue[] = [];
    issues.push(...valueBytesIssues([parseFilters(v.filters, ['filters'], issues), ...v.steps.map((s) => s.filters)]));
    for (const issue of issues) ctx.addIssue({ code: 'custom', ...issue });
  })
  .transform((v) => ({ ...v, ...readRangeOf(v.from, v.to), filters: parseFilters(v.filters, ['filters'], [])! }));
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

export const retentionBodySchema = z
  .object({
    ...range,
    period: z.enum(RETENTION_PERIODS, { error: `period: allowed are ${RETENTION_PERIODS.join(', ')}` }).describe("day, week (Monday to Sunday) or month, in the project's time zone (UTC by default)."),
    count_by: z.enum(RETENTION_COUNT_BY, { error: `count_by: allowed are ${RETENTION_COUNT_BY.join(', ')}` }).default('user').describe('user (user_id, default) or visitor (anonymous_id).'),
    start: goalSchema.optional().describe('What puts an entity in a cohort (default: any event).'),
    return: goalSchema.optional().describe('What counts as coming back (default: any event).'),
    filters: filtersField,
    include_bots: includeBots,
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.to.ms <= v.from.ms) ctx.addIssue({ code: 'custom', message: '`to` must be after `from`', path: ['to'] });
    else if (periodsIn(clampToAcceptedRange(v.from.ms), clampToAcceptedRange(v.to.ms), v.period) > RETENTION_MAX_PERIODS)
      ctx.addIssue({ code: 'custom', message: `at most ${RETENTION_MAX_PERIODS} periods between from and to: narrow the range or take a longer period`, path: ['to'] });
    const issues: FilterIssue[] = [];
    issues.push(...valueBytesIssues([parseFilters(v.filters, ['filters'], issues), v.start?.filters, v.return?.filters]));
    for (const issue of issues) ctx.addIssue({ code: 'custom', ...issue });
  })
  .transform((v) => ({ ...v, ...readRangeOf(v.from, v.to), filters: parseFilters(v.filters, ['filters'], [])! }));
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
