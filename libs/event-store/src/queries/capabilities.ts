import { type CapabilityInput, type CapabilityResult, type ReadCapability, type SnapshotCapability, type SavedKind, type SavedLookup, rangeInZone, savedAnswer } from '@analytics/schema';
import { queryFunnel } from './funnel.query';
import { queryInsights } from './insights.query';
import { queryLive } from './live.query';
import { queryProperties } from './properties.query';
import { queryEvents } from './query-events.query';
import { queryRetention } from './retention.query';
import { resolveFunnel, resolveInsights, resolveRetention } from './saved-ids';
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

/**
 * How one read capability runs: the key's project, the route's parsed input, its success answer. `saved`: the
 * project's saved goals, funnels and segments (the key store's, passed in by the wiring): the ids a read names are
 * resolved through it, and the lists read it. `scope`: the key's project (time zone) and the time of the request.
 */
export type ReadRunner<K extends ReadCapability> = (reader: SourcesReader, projectId: string, input: CapabilityInput<K>, saved: SavedLookup, scope: ReadScope) => Promise<CapabilityResult<K>>;

const listOf = async (saved: SavedLookup, projectId: string, kind: SavedKind) => (await saved.list(projectId, kind)).map(savedAnswer) as never[];

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
  insights: async (reader, projectId, input, saved, scope) => {
    const answer = await queryInsights(reader, projectId, await resolveInsights(saved, projectId, input), { timezone: scope.project.timezone, now: scope.now });
    // A time series carries the range's annotations beside its rows (issue 48): what may explain a spike or a dip.
    if (!input.dimensions?.some((d) => d.startsWith('time:'))) return answer;
    const range = rangeInZone(input, scope.project.timezone);
    const { annotations } = saved.annotations ? await saved.annotations.list(projectId, range) : { annotations: [] };
    return { ...answer, annotations };
  },
  funnel: async (reader, projectId, input, saved, scope) => queryFunnel(reader, projectId, await resolveFunnel(saved, projectId, input), { timezone: scope.project.timezone }),
  retention: async (reader, projectId, input, saved, scope) => queryRetention(reader, projectId, await resolveRetention(saved, projectId, input), { timezone: scope.project.timezone }),
  properties: queryProperties,
  goals: async (_reader, projectId, _input, saved) => ({ goals: await listOf(saved, projectId, 'goal') }),
  funnels: async (_reader, projectId, _input, saved) => ({ funnels: await listOf(saved, projectId, 'funnel') }),
  segments: async (_reader, projectId, _input, saved) => ({ segments: await listOf(saved, projectId, 'segment') }),
  project: async (_reader, _projectId, _input, _saved, scope) => ({ project: scope.project }),
  annotations: async (_reader, projectId, input, saved) => (saved.annotations ? saved.annotations.list(projectId, input) : { annotations: [] }),
};

/** The read capabilities' names. */
export const READ_CAPABILITIES = Object.keys(readCapabilities) as ReadCapability[];

/** Whether a capability's name is a read capability's. */
export const isReadCapability = (name: string): name is ReadCapability => Object.hasOwn(readCapabilities, name);

/**
 * The streamed reads that are MCP tools too, each bound to the function of one of its messages: GET /v1/live sends
 * its answer at once and every tick (apps/read-api's live hub, one call per project per tick), get_live answers one.
 */
export const snapshotCapabilities: { readonly [K in SnapshotCapability]: (reader: SourcesReader, projectId: string, input: CapabilityInput<K>) => Promise<CapabilityResult<K>> } = {
  live: (reader, projectId) => queryLive(reader, projectId),
};

/** Whether a capability's name is a streamed read's with a snapshot function. */
export const isSnapshotCapability = (name: string): name is SnapshotCapability => Object.hasOwn(snapshotCapabilities, name);
