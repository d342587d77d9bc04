import { z } from 'zod';
import type { AnnotationLookup } from './annotations.schema';
import { FUNNEL_LIMITS, checkFunnelFilters, funnelDefinitionFields } from './conversions.schema';
import { toWellFormed } from './ingest.schema';
import { type FilterIssue, type Goal, type InsightCondition, filterListSchema, goalSchema, parseFilters, valueBytesIssues } from './insights.schema';

// Saved goals, funnels and segments (issue 46, docs/saved-and-shared.md): kept per project in the key store (libs/auth
// saved-definitions.ts), written by editors (admin routes), listed with the project's rk_ key (GET /v1/goals, ...),
// and named by id in /v1/insights, /v1/funnel, /v1/retention and /v1/export.

export const SAVED_KINDS = ['goal', 'funnel', 'segment'] as const;
export type SavedKind = (typeof SAVED_KINDS)[number];

/** A name: 1 to 100 characters once trimmed, unique per project and kind (409 name_taken); 200 of each kind per project (409 limit_reached). */
export const SAVED_LIMITS = { name: 100, perKind: 200 } as const;

export const savedNameSchema = z
  .string()
  .transform((s) => toWellFormed(s.trim()))
  .pipe(z.string().min(1, { error: 'a name has 1 to 100 characters (spaces around it are trimmed)' }).max(SAVED_LIMITS.name, { error: `a name has 1 to ${SAVED_LIMITS.name} characters` }))
  .describe(`1 to ${SAVED_LIMITS.name} characters (trimmed), unique among the project's definitions of this kind.`);

/** A checked condition written back as the request writes it: `[op, dimension, [values]]` or `["or", [...]]`. */
export const conditionTuple = (c: InsightCondition): unknown[] => (c.op === 'or' ? ['or', c.conditions.map(conditionTuple)] : [c.op, c.dimension, c.values]);

/** A goal's stored form: the request's (`path` with its `*` again), every string well-formed, filters as tuples. */
export interface GoalDefinition {
  event?: string;
  path?: string;
  filters: unknown[][];
}
export const goalDefinitionOf = (g: Goal): GoalDefinition => ({
  ...(g.event !== undefined ? { event: g.event } : {}),
  ...(g.path !== undefined ? { path: g.prefix ? `${g.path}*` : g.path } : {}),
  filters: g.filters.map(conditionTuple),
});

export interface FunnelDefinition {
  steps: GoalDefinition[];
  window_s: number;
  count_by: 'visitor' | 'user' | 'session';
  filters: unknown[][];
}
export interface SegmentDefinition {
  filters: unknown[][];
}
export type SavedDefinition = GoalDefinition | FunnelDefinition | SegmentDefinition;

const SEGMENT_FILTERS_TEXT = 'The conditions the segment stands for, as /v1/insights `filters` (at least one): a read naming the segment keeps only the events they hold for, beside its own filters.';

/** Each kind's definition: its fields, checked as the reads check them, and written in the stored form. */
export const savedDefinitionSchemas = {
  goal: goalSchema.transform(goalDefinitionOf),
  funnel: z
    .object(funnelDefinitionFields)
    .strict()
    .superRefine(checkFunnelFilters)
    .transform((v): FunnelDefinition => ({ steps: v.steps.map(goalDefinitionOf), window_s: v.window_s, count_by: v.count_by, filters: parseFilters(v.filters, ['filters'], [])!.map(conditionTuple) })),
  segment: z
    .object({ filters: filterListSchema(SEGMENT_FILTERS_TEXT) })
    .strict()
    .superRefine((v, ctx) => {
      const issues: FilterIssue[] = [];
      if (v.filters.length === 0) issues.push({ path: ['filters'], message: 'a segment has at least one condition' });
      issues.push(...valueBytesIssues([parseFilters(v.filters, ['filters'], issues)]));
      for (const issue of issues) ctx.addIssue({ code: 'custom', ...issue });
    })
    .transform((v): SegmentDefinition => ({ filters: parseFilters(v.filters, ['filters'], [])!.map(conditionTuple) })),
} as const;

type Shape = Record<string, z.ZodType>;
const goalFields: Shape = {
  event: z.string().optional().describe('The event name (e.g. "signup", "$pageview").'),
  path: z.string().optional().describe('The path, exactly; ending in `*`: any path starting with what precedes it.'),
  filters: filterListSchema("Conditions the event must also meet, as /v1/insights' `filters`."),
};
// The fields as the body's shape (documented, checked for their type); each kind's definition schema then checks them
// as a whole (a funnel's steps are goals: their checks are the goal schema's, run once there).
const funnelFields: Shape = {
  steps: z.array(z.looseObject({})).describe(`${FUNNEL_LIMITS.steps.min} to ${FUNNEL_LIMITS.steps.max} steps, in order, each a goal { event?, path?, filters? }.`),
  window_s: funnelDefinitionFields.window_s,
  count_by: funnelDefinitionFields.count_by,
  filters: funnelDefinitionFields.filters,
};
const FIELDS: Record<SavedKind, Shape> = { goal: goalFields, funnel: funnelFields, segment: { filters: filterListSchema(SEGMENT_FILTERS_TEXT) } };

/** The issues of `schema` on `value` added to `ctx` (the body's paths), or its output. */
function delegate<S extends z.ZodType>(schema: S, value: unknown, ctx: z.RefinementCtx): z.output<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  for (const issue of r.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path as Array<string | number> });
  return z.NEVER;
}

/** POST /admin/projects/:id/<kind>s: `{ name, ...the kind's fields }` -> `{ name, definition }` in the stored form. */
const createSchemaOf = <K extends SavedKind>(kind: K) =>
  z
    .object({ name: savedNameSchema, ...FIELDS[kind] })
    .loose()
    .transform((v, ctx) => {
      const { name, ...fields } = v as { name: string } & Record<string, unknown>;
      return { name, definition: delegate(savedDefinitionSchemas[kind], fields, ctx) as SavedDefinition };
    });

/**
 * PATCH /admin/projects/:id/<kind>s/:id: any subset of the fields (a goal's `event` or `path` may be null: removed).
 * The route merges them into the stored definition and checks the whole (savedDefinitionSchemas).
 */
const patchSchemaOf = (kind: SavedKind) =>
  z
    .object({
      name: savedNameSchema.optional(),
      ...Object.fromEntries(Object.entries(FIELDS[kind]).map(([k, s]) => [k, kind === 'goal' && k !== 'filters' ? s.nullable().optional() : z.unknown().optional().describe(s.description ?? k)])),
    })
    .loose()
    .describe('Any subset of the fields of the create body; the definition they make is checked as a whole.');

export const savedGoalInputSchema = createSchemaOf('goal').describe('{ name, event?, path?, filters? }: the goal shape /v1/insights accepts, and a name.');
export const savedFunnelInputSchema = createSchemaOf('funnel').describe(`{ name, steps, window_s?, count_by?, filters? }: the shapes POST /v1/funnel accepts (${FUNNEL_LIMITS.steps.min} to ${FUNNEL_LIMITS.steps.max} steps), and a name.`);
export const savedSegmentInputSchema = createSchemaOf('segment').describe('{ name, filters }: /v1/insights filters (at least one condition), and a name.');
export const savedInputSchemas = { goal: savedGoalInputSchema, funnel: savedFunnelInputSchema, segment: savedSegmentInputSchema } as const;
export const savedPatchSchemas = { goal: patchSchemaOf('goal'), funnel: patchSchemaOf('funnel'), segment: patchSchemaOf('segment') } as const;

const condition = z.array(z.unknown()).describe('[op, dimension, [values]] or ["or", [conditions]].');
const stamps = {
  created_at: z.string().describe('ISO 8601.'),
  updated_at: z.string().describe('ISO 8601: the last rename or change.'),
};
const goalShape = { event: z.string().optional(), path: z.string().optional(), filters: z.array(condition) };
export const savedGoalSchema = z.object({ id: z.string().describe('UUID.'), name: z.string(), ...goalShape, ...stamps }).describe('A saved goal: { event?, path?, filters } as /v1/insights takes a goal.');
export const savedFunnelSchema = z
  .object({ id: z.string().describe('UUID.'), name: z.string(), steps: z.array(z.object(goalShape)), window_s: z.number().int(), count_by: z.enum(['visitor', 'user', 'session']), filters: z.array(condition), ...stamps })
  .describe('A saved funnel: the steps, window_s, count_by and filters of a POST /v1/funnel body.');
export const savedSegmentSchema = z.object({ id: z.string().describe('UUID.'), name: z.string(), filters: z.array(condition), ...stamps }).describe('A saved segment: /v1/insights filters.');

export const savedGoalResponseSchema = z.object({ goal: savedGoalSchema });
export const savedFunnelResponseSchema = z.object({ funnel: savedFunnelSchema });
export const savedSegmentResponseSchema = z.object({ segment: savedSegmentSchema });
export const savedGoalListSchema = z.object({ goals: z.array(savedGoalSchema) }).describe("The project's saved goals, oldest first.");
export const savedFunnelListSchema = z.object({ funnels: z.array(savedFunnelSchema) }).describe("The project's saved funnels, oldest first.");
export const savedSegmentListSchema = z.object({ segments: z.array(savedSegmentSchema) }).describe("The project's saved segments, oldest first.");
export type SavedGoal = z.infer<typeof savedGoalSchema>;
export type SavedFunnel = z.infer<typeof savedFunnelSchema>;
export type SavedSegment = z.infer<typeof savedSegmentSchema>;

/** A stored definition as the API answers it: `{ id, name, ...definition, created_at, updated_at }`. */
export function savedAnswer(record: { id: string; name: string; definition: Record<string, unknown>; created_at: string; updated_at: string }): Record<string, unknown> {
  return { id: record.id, name: record.name, ...record.definition, created_at: record.created_at, updated_at: record.updated_at };
}

/** The list answers' keys and the single answers' by kind. */
export const SAVED_PLURAL = { goal: 'goals', funnel: 'funnels', segment: 'segments' } as const;

/** The port the reads resolve saved ids through (libs/auth SavedDefinitions is one): scoped by project. */
export interface SavedLookup {
  list(projectId: string, kind: SavedKind): Promise<Array<{ id: string; name: string; definition: Record<string, unknown>; created_at: string; updated_at: string }>>;
  get(projectId: string, kind: SavedKind, id: string): Promise<{ id: string; name: string; definition: Record<string, unknown>; created_at: string; updated_at: string } | undefined>;
  /** The project's annotations (issue 48; libs/auth Annotations): GET /v1/annotations and the time series of insights. Unset: none. */
  annotations?: AnnotationLookup;
}

/** A lookup with nothing saved: every list empty, every id unknown (a read router wired without the key store's). */
export const NO_SAVED: SavedLookup = { list: async () => [], get: async () => undefined };
