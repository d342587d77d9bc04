import {
  ApiError,
  FUNNEL_LIMITS,
  type FunnelQuery,
  type FunnelRequest,
  type Goal,
  type GoalRef,
  type InsightCondition,
  type InsightsQuery,
  type InsightsRequest,
  type Issue,
  type RetentionQuery,
  type RetentionRequest,
  type SavedKind,
  type SavedLookup,
  detailsOf,
  goalSchema,
  isGoalRef,
  parseFilters,
} from '@analytics/schema';

// The saved ids a read may name (docs/saved-and-shared.md): a goal `{ id }`, a funnel `id`, a `segment` id, each
// resolved from the project's saved definitions (the SavedLookup port: libs/auth's SavedDefinitions, passed in by the
// wiring, since the event store does not reach the key store) into the inline read the queries run. An id the project
// does not have (unknown, deleted, another project's) is a 400 naming the field, as any other invalid field.

type Path = Array<string | number>;

/** Resolves the ids of one request, collecting every unknown one before answering. */
class Resolution {
  readonly issues: Issue[] = [];
  constructor(
    private readonly saved: SavedLookup,
    private readonly projectId: string,
  ) {}

  private async definition(kind: SavedKind, id: string, path: Path): Promise<Record<string, unknown> | undefined> {
    const record = await this.saved.get(this.projectId, kind, id);
    if (!record) this.issues.push({ path, message: `no ${kind} of this project has the id ${JSON.stringify(id.slice(0, 64))} (GET /v1/${kind}s lists them)` });
    return record?.definition;
  }

  /** A goal inline as it is, a reference as its saved definition. */
  async goal(g: Goal | GoalRef, path: Path): Promise<Goal> {
    if (!isGoalRef(g)) return g;
    const def = await this.definition('goal', g.id, [...path, 'id']);
    return def ? goalOf(def) : { event: '', prefix: false, filters: [] };
  }

  async optionalGoal(g: Goal | GoalRef | undefined, path: Path): Promise<Goal | undefined> {
    return g === undefined ? undefined : this.goal(g, path);
  }

  /** The segment's conditions (none without one). */
  async segment(id: string | undefined, path: Path = ['segment']): Promise<InsightCondition[]> {
    if (id === undefined) return [];
    const def = await this.definition('segment', id, path);
    return def ? conditionsOf(def.filters) : [];
  }

  async funnel(id: string, path: Path): Promise<{ steps: Goal[]; window_s: number; count_by: FunnelQuery['count_by']; filters: InsightCondition[] } | undefined> {
    const def = await this.definition('funnel', id, path);
    if (!def) return undefined;
    return {
      steps: (def.steps as unknown[]).map((s) => goalOf(s)),
      window_s: Number(def.window_s),
      count_by: def.count_by as FunnelQuery['count_by'],
      filters: conditionsOf(def.filters),
    };
  }

  /** Throws the 400 when an id was not found. */
  check(): void {
    if (this.issues.length > 0) throw new ApiError('invalid_payload', { details: detailsOf(this.issues) });
  }
}

/** A stored definition was checked when saved: parsing it again cannot fail short of a corrupted row (then a 500). */
const goalOf = (def: unknown): Goal => goalSchema.parse(def);
function conditionsOf(filters: unknown): InsightCondition[] {
  const parsed = parseFilters((filters ?? []) as unknown[][], ['filters'], []);
  if (!parsed) throw new Error('a saved definition holds filters that no longer parse');
  return parsed;
}

/** POST /v1/insights: its goal and segment resolved (the segment's conditions beside the request's own). */
export async function resolveInsights(saved: SavedLookup, projectId: string, input: InsightsRequest): Promise<InsightsQuery> {
  const r = new Resolution(saved, projectId);
  const { segment, goal, ...rest } = input;
  const [resolvedGoal, segmentFilters] = await Promise.all([r.optionalGoal(goal, ['goal']), r.segment(segment)]);
  r.check();
  return { ...rest, filters: [...rest.filters, ...segmentFilters], ...(resolvedGoal ? { goal: resolvedGoal } : {}) };
}

/** POST /v1/funnel: a saved funnel by id, or its steps' goal references; the segment's conditions beside its filters. */
export async function resolveFunnel(saved: SavedLookup, projectId: string, input: FunnelRequest): Promise<FunnelQuery> {
  const r = new Resolution(saved, projectId);
  const { segment, id, steps, window_s, count_by, ...rest } = input;
  const [definition, inlineSteps, segmentFilters] = await Promise.all([
    id !== undefined ? r.funnel(id, ['id']) : undefined,
    steps ? Promise.all(steps.map((s, i) => r.goal(s, ['steps', i]))) : undefined,
    r.segment(segment),
  ]);
  r.check();
  const base = definition ?? { steps: inlineSteps ?? [], window_s: window_s ?? FUNNEL_LIMITS.window_s.default, count_by: count_by ?? 'visitor', filters: [] };
  return { ...rest, steps: base.steps, window_s: base.window_s, count_by: base.count_by, filters: [...base.filters, ...rest.filters, ...segmentFilters] };
}

/** POST /v1/retention: its start and return goals resolved; the segment's conditions beside its filters. */
export async function resolveRetention(saved: SavedLookup, projectId: string, input: RetentionRequest): Promise<RetentionQuery> {
  const r = new Resolution(saved, projectId);
  const { segment, start, return: ret, ...rest } = input;
  const [s, t, segmentFilters] = await Promise.all([r.optionalGoal(start, ['start']), r.optionalGoal(ret, ['return']), r.segment(segment)]);
  r.check();
  return { ...rest, filters: [...rest.filters, ...segmentFilters], ...(s ? { start: s } : {}), ...(t ? { return: t } : {}) };
}

/** A segment's conditions for GET /v1/export (`segment` of its query string: an unknown id is 400 invalid_params). */
export async function resolveSegmentFilters(saved: SavedLookup, projectId: string, segment: string | undefined): Promise<InsightCondition[]> {
  const r = new Resolution(saved, projectId);
  const filters = await r.segment(segment);
  if (r.issues.length > 0) throw new ApiError('invalid_params', { details: detailsOf(r.issues) });
  return filters;
}
