import { ApiError, type FilterIssue, type ShareScope, parseFilters } from '@analytics/schema';

// The saved lists (GET /v1/goals, /v1/funnels, /v1/segments), the project (GET /v1/project: its name and time zone)
// and its annotations (GET /v1/annotations): no event read for a segment to hold.
const NO_EVENTS: ReadonlySet<string> = new Set(['goals', 'funnels', 'segments', 'project', 'annotations']);

/**
 * A read through a share link's credential (docs/saved-and-shared.md, "Share links and embeds"): the segment the link
 * was made with is ANDed to the request's own filters, server-side, so a caller cannot remove it (a saved id or
 * `segment` the request names only narrows further: their conditions are added beside these). A link without a
 * segment reads as the project's rk_ key would; with one, a read that takes no filters (stats, sources, properties)
 * is refused: fail closed, a new read is refused too until it takes filters.
 */
export function heldToShare(name: string, input: unknown, share: ShareScope): unknown {
  const segment = share.segment;
  if (!segment || segment.filters.length === 0) return input;
  // A read without a query or body (GET /v1/project) has no input at all.
  const own = typeof input === 'object' && input !== null ? (input as { filters?: unknown }).filters : undefined;
  if (Array.isArray(own)) {
    const issues: FilterIssue[] = [];
    const filters = parseFilters(segment.filters as unknown[][], ['segment'], issues);
    // The snapshot was a valid saved segment; one that no longer parses (a dimension since removed) reads nothing rather than everything.
    if (!filters) throw new ApiError('invalid_payload', { details: { formErrors: [`the link's segment no longer applies: ${issues.map((i) => i.message).join('; ')}`], fieldErrors: {} } });
    return { ...(input as object), filters: [...own, ...filters] };
  }
  if (NO_EVENTS.has(name)) return input;
  throw new ApiError('insufficient_scope', { required: 'read', got: 'share', details: 'a share link with a segment reads /v1/insights, /v1/funnel and /v1/retention (and the saved lists and the project) only: this read cannot apply its filters' });
}
