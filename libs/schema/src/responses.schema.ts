import { z } from 'zod';
import { EVENT_COLUMNS, QUERY_SELECT_COLUMNS, type QueryEventRow } from './event-columns';
import { ERROR_STATUS } from './errors';
import { STATS_GROUP_BY, type StatsGroupBy } from './group-by';
import { STATS_METRICS } from './catalog';

/** Every error the API answers: `{ error: <code>, ... }`; the code is the contract. */
export const errorBodySchema = z
  .object({
    error: z.enum(Object.keys(ERROR_STATUS) as [keyof typeof ERROR_STATUS, ...(keyof typeof ERROR_STATUS)[]]).describe('Stable error code (see the error table).'),
    details: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Validation errors: the flattened tree (`formErrors`, `fieldErrors`) and each issue with its path; the first 50 issues, 16 KB at most, `truncated: true` when issues were left out; on ingest and read routes `warnings` names unknown fields with the ones they likely meant.'),
    retry_after_s: z.number().int().optional().describe('rate_limited only: seconds to wait, also sent as Retry-After.'),
    allowed: z.array(z.string()).optional().describe('invalid_group_by: the columns group_by accepts; method_not_allowed: the methods the path takes.'),
    required: z.string().optional().describe('insufficient_scope only: the scope the route needs.'),
    got: z.string().optional().describe('insufficient_scope only: the scope of the key presented.'),
    checks: z.record(z.string(), z.string()).optional().describe('not_ready only: each store and its outcome (ok, failed, timeout).'),
  })
  .describe('Error envelope.');

export const trackResponseSchema = z
  .object({ ok: z.literal(true), event_id: z.string().describe('The event id sent, or the one generated (a UUID).') })
  .describe('The event is written (202 means the row is already in the store).');

export const batchResponseSchema = z
  .object({ ok: z.literal(true), count: z.number().int().min(1).describe('Events written.') })
  .describe('Every event of the batch is written (all or nothing).');

export const identifyResponseSchema = z.object({ ok: z.literal(true) }).describe('The $identify event is written.');

export const forgetResponseSchema = z
  .object({ ok: z.literal(true), queued: z.literal(true) })
  .describe('Deletion of every event of the user_id in this project is queued; it completes within seconds.');

const columnByName = new Map(EVENT_COLUMNS.map((c) => [c.name as string, c]));
/** One column of a query row, typed and described from the event-column descriptor. */
const queryCell = (name: (typeof QUERY_SELECT_COLUMNS)[number]) => {
  const column = columnByName.get(name)!;
  const base = z.string().describe(name === 'timestamp' ? 'ISO 8601 UTC with milliseconds.' : column.meaning);
  return column.type.startsWith('Nullable(') ? base.nullable() : base;
};

export const queryRowSchema = z
  .object(Object.fromEntries(QUERY_SELECT_COLUMNS.map((c) => [c, queryCell(c)])) as { [K in keyof QueryEventRow]: null extends QueryEventRow[K] ? z.ZodNullable<z.ZodString> : z.ZodString })
  .describe('A stored event (never ip_hash); `properties` is a JSON string the client parses.');

export const queryResponseSchema = z.object({ rows: z.array(queryRowSchema).describe('Newest first.') }).describe('Raw events of the key\'s project.');

export const statsRowSchema = z
  .object({
    value: z.number().describe('Event count, or distinct anonymous_id (an estimate) for metric=uniques.'),
    bucket: z.string().optional().describe('With an interval: the bucket start, `YYYY-MM-DD HH:MM:SS` UTC.'),
    ...(Object.fromEntries(STATS_GROUP_BY.map((c) => [c, z.string().nullable().optional().describe(`With group_by=${c}: the group's ${c}.`)])) as Record<
      StatsGroupBy,
      z.ZodOptional<z.ZodNullable<z.ZodString>>
    >),
  })
  .describe('One group: one field per group_by column, and value.');

export const statsResponseSchema = z
  .object({ metric: z.enum(STATS_METRICS).describe('The metric asked for.'), rows: z.array(statsRowSchema) })
  .describe('Aggregate statistics.');

export const sourcesRowSchema = z
  .object({
    source: z.string().describe('Entry source of the sessions.'),
    medium: z.string().optional().describe('Entry medium (breakdown=source_medium only).'),
    events: z.number().int().describe('Events in the group.'),
    uniques: z.number().int().describe('Distinct anonymous_id (an estimate).'),
    paid_share: z.number().min(0).max(1).describe('Share of the events with medium paid, 0 to 1.'),
  })
  .describe('One traffic source (and medium).');

export const sourcesResponseSchema = z
  .object({ breakdown: z.enum(['source_medium', 'source']).describe('The breakdown asked for.'), rows: z.array(sourcesRowSchema) })
  .describe('Top traffic sources by sessions\' entry source and medium.');

export const retentionRunResponseSchema = z
  .object({
    ok: z.literal(true),
    projects: z.number().int().describe('Projects checked.'),
    mutations: z.number().int().describe('Projects with rows past their retention, each submitted as one delete mutation.'),
    dropped_partitions: z.array(z.string()).describe('Whole month partitions dropped (every row past every project\'s retention).'),
  })
  .describe('One retention pass over every project.');

export const healthResponseSchema = z.object({ ok: z.literal(true), service: z.string().describe('The app that answered.') }).describe('Liveness: the process answers.');

export const readyResponseSchema = z
  .object({ ok: z.literal(true), service: z.string(), checks: z.record(z.string(), z.literal('ok')).describe('Each store this app uses, answered.') })
  .describe('Readiness: every store this app uses answered in time.');

export type ErrorBody = z.output<typeof errorBodySchema>;
export type TrackResponse = z.output<typeof trackResponseSchema>;
export type BatchResponse = z.output<typeof batchResponseSchema>;
export type IdentifyResponse = z.output<typeof identifyResponseSchema>;
export type ForgetResponse = z.output<typeof forgetResponseSchema>;
export type QueryRow = z.output<typeof queryRowSchema>;
export type QueryResponse = z.output<typeof queryResponseSchema>;
export type StatsRow = z.output<typeof statsRowSchema>;
export type StatsResponse = z.output<typeof statsResponseSchema>;
export type SourcesRow = z.output<typeof sourcesRowSchema>;
export type SourcesResponse = z.output<typeof sourcesResponseSchema>;
export type RetentionRunResponse = z.output<typeof retentionRunResponseSchema>;
