import type { CapabilityInput, CapabilityResult, ReadCapability } from '@analytics/schema';
import { queryFunnel } from './funnel.query';
import { queryInsights } from './insights.query';
import { queryProperties } from './properties.query';
import { queryEvents } from './query-events.query';
import { queryRetention } from './retention.query';
import { type SourcesReader, querySources } from './sources.query';
import { queryStats } from './stats.query';

/**
 * What a read learns beside its input from the key that asked (issue 47): the project's name and time zone, and the
 * time of the request (a test's clock; "now" for the like-for-like previous period of insights).
 */
export interface ReadScope {
  project: { id: string; name: string; timezone: string };
  now: number;
}

/** The scope of a read by a key's project at `now` (the capability layer's clock; Date.now() unless a test passes one). */
export const readScopeOf = (project: { id: string; name: string; timezone?: string }, now: number = Date.now()): ReadScope => ({
  project: { id: project.id, name: project.name, timezone: project.timezone ?? 'UTC' },
  now,
});

/** How one read capability runs: the key's project, the route's parsed input, its scope (time zone, now), its success answer. */
export type ReadRunner<K extends ReadCapability> = (reader: SourcesReader, projectId: string, input: CapabilityInput<K>, scope: ReadScope) => Promise<CapabilityResult<K>>;

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
  insights: (reader, projectId, input, scope) => queryInsights(reader, projectId, input, { timezone: scope.project.timezone, now: scope.now }),
  funnel: (reader, projectId, input, scope) => queryFunnel(reader, projectId, input, { timezone: scope.project.timezone }),
  retention: (reader, projectId, input, scope) => queryRetention(reader, projectId, input, { timezone: scope.project.timezone }),
  properties: queryProperties,
  project: async (_reader, _projectId, _input, scope) => ({ project: scope.project }),
};

/** The read capabilities' names. */
export const READ_CAPABILITIES = Object.keys(readCapabilities) as ReadCapability[];

/** Whether a capability's name is a read capability's. */
export const isReadCapability = (name: string): name is ReadCapability => Object.hasOwn(readCapabilities, name);
