import { z } from 'zod';
import { CHANNEL_VALUES, DEVICE_TYPE_VALUES } from './catalog';
import { eventNameSchema, idSchema, propertiesSchema, toWellFormed, userIdSchema } from './ingest.schema';
import { isoDate } from './iso-date';
import { LIMITS } from './limits';

// POST /admin/projects/{id}/import (issue 50): a batch of rows of our own export (GET /v1/export, a /v1/query row each)
// written as they were stored, the enrichment columns included; the public ingest routes keep ignoring those
// (the spec). Every column is checked as the store holds it: the enums, the lengths the ingest path allows.

const text = (max: number) => z.string().max(max).transform(toWellFormed);
/** A nullable column: null, or absent (an older export without it), is null. */
const nullableText = (max: number) => text(max).nullable().default(null);

/** The classified columns hold what the classifier made of a url of at most 2048 characters (utm_* values, hosts). */
const CLASSIFIED_MAX = LIMITS.urlLike;
/** browser and os: a name parsed from the User-Agent (or the product token of a bot). */
const DEVICE_NAME_MAX = 256;

/** properties as exported: the stored JSON text of an object, at most 8 KB (as at ingest); kept as that very text. */
const propertiesText = z
  .string()
  .transform((raw, ctx) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be the JSON text of an object (as exported)' });
      return z.NEVER;
    }
    const checked = propertiesSchema.safeParse(parsed);
    if (!checked.success || Array.isArray(parsed)) {
      ctx.addIssue({ code: 'custom', message: checked.success ? 'must be the JSON text of an object, not an array' : `must be the JSON text of an object: ${checked.error.issues[0]!.message}` });
      return z.NEVER;
    }
    return toWellFormed(raw);
  })
  .default('{}');

/** One exported row (GET /v1/export, any format, as a JSON object): the stored columns, ip_hash and the rule id excepted. */
export const importedEventSchema = z.object({
  timestamp: isoDate().describe('ISO 8601 (the export writes UTC with milliseconds).'),
  event_name: eventNameSchema,
  event_id: idSchema.describe('The stored event id (1-128 chars).'),
  anonymous_id: text(LIMITS.id).describe('The stored anonymous id: 0-128 chars (empty for an event sent with a user_id only).'),
  user_id: userIdSchema.nullable().default(null),
  session_id: idSchema.describe('The stored session id (1-128 chars).'),
  source: text(CLASSIFIED_MAX).describe('Kept as exported, not classified again.'),
  medium: text(CLASSIFIED_MAX).describe('Kept as exported.'),
  campaign: nullableText(CLASSIFIED_MAX),
  source_confidence: z.enum(['low', 'medium', 'high']),
  channel: z.enum(CHANNEL_VALUES),
  referrer: nullableText(LIMITS.urlLike),
  url: nullableText(LIMITS.urlLike),
  path: nullableText(LIMITS.urlLike),
  country: z
    .string()
    .regex(/^(?:[A-Z]{2})?$/, 'must be a two-letter country code in capitals, or empty (unknown)')
    .describe('Kept as exported: a two-letter code, or empty.'),
  device_type: z.enum(DEVICE_TYPE_VALUES).describe('Kept as exported: bot stays bot (left out of insights and the dashboard).'),
  browser: text(DEVICE_NAME_MAX),
  os: text(DEVICE_NAME_MAX),
  properties: propertiesText.describe('The exported JSON text of an object (at most 8 KB), stored as it is.'),
});

export const importBatchInputSchema = z.object({
  events: z.array(importedEventSchema).min(1).max(LIMITS.batchMax).describe(`1 to ${LIMITS.batchMax} rows of an export (the import tool sends them as it reads the file).`),
});

export const importResponseSchema = z
  .object({
    ok: z.literal(true),
    count: z.number().int().describe('Rows written.'),
    skipped: z.number().int().describe('Rows left out: the project already holds a row with the same event_id and timestamp (a batch sent again).'),
  })
  .describe('The batch is stored: count rows written, skipped already there.');

export type ImportedEvent = z.output<typeof importedEventSchema>;
export type ImportBatchInput = z.output<typeof importBatchInputSchema>;
export type ImportResponse = z.output<typeof importResponseSchema>;
