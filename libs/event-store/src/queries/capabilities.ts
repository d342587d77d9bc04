import type { CapabilityInput, CapabilityResult, ReadCapability } from '@analytics/schema';
import { queryFunnel } from './funnel.query';
import { queryInsights } from './insights.query';
import { queryProperties } from './properties.query';
import { queryEvents } from './query-events.query';
import { queryRetention } from './retention.query';
import { type SourcesReader, querySources } from './sources.query';
import { queryStats } from './stats.query';

/** How one read capability runs: the key's project, the route's parsed input, its success answer. */
export type ReadRunner<K extends ReadCapability> = (reader: SourcesReader, projectId: string, input: CapabilityInput<K>) => Promise<CapabilityResult<K>>;

/**
 * Each read capability of libs/schema's `routes` (every read-api route but the streamed export) bound once to its
 * query: read-api serves each at its declared route, and the MCP gateway's tool of it (`mcp` in the declaration) calls
 * the same function. A read route declared without its function here is a compile error.
 */
export const readCapabilities: { readonly [K in ReadCapability]: ReadRunner<K> } = {
  query: async (reader, projectId, input) => ({ rows: await queryEvents(reader, projectId, input) }),
  stats: async (reader, projectId, input) => {
    const { metric, rows } = await queryStats(reader, projectId, input);
    return { metric, rows };
  },
  sources: async (reader, projectId, input) => {
    const { breakdown, rows } = await querySources(reader, projectId, input);
    return { breakdown, rows };
  },
  insights: queryInsights,
  funnel: queryFunnel,
  retention: queryRetention,
  properties: queryProperties,
};

/** The read capabilities' names. */
export const READ_CAPABILITIES = Object.keys(readCapabilities) as ReadCapability[];

/** Whether a capability's name is a read capability's. */
export const isReadCapability = (name: string): name is ReadCapability => Object.hasOwn(readCapabilities, name);
