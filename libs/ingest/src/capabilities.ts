import type { CapabilityInput, CapabilityResult, WriteCapability } from '@analytics/schema';
import type { RequestContext } from '@analytics/enrichment';
import type { IngestService } from './ingest.service';

/** How one write capability runs: the caller's request context, the route's parsed input, its success answer. */
export type WriteRunner<K extends WriteCapability> = (ingest: IngestService, context: RequestContext, input: CapabilityInput<K>) => Promise<CapabilityResult<K>>;

/**
 * Each write capability an MCP tool exposes (a route of libs/schema's `routes` declared with `mcp`, served by
 * ingest-api) bound once: ingest-api's route and the MCP gateway's tool both call it. A missing one is a compile error.
 */
export const writeCapabilities: { readonly [K in WriteCapability]: WriteRunner<K> } = {
  track: async (ingest, context, input) => {
    const { event_id } = await ingest.track(context, input);
    return { ok: true, event_id };
  },
};
