import { z } from 'zod';
import { isoDate, parseIsoDate } from './iso-date';
import { LIMITS } from './limits';

// Optional fields accept null as "absent": SDKs commonly serialise unset values that way.
const optional = <T extends z.ZodTypeAny>(schema: T) => z.preprocess((v) => (v === null ? undefined : v), schema.optional());
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/**
 * Lone UTF-16 surrogates (a JSON "\ud800" escape) become U+FFFD, as invalid UTF-8 bytes in a body already do:
 * ClickHouse refuses them, and one such value used to fail the whole group-committed INSERT (a 500 for every request in it).
 */
export const toWellFormed = (s: string): string => s.replace(LONE_SURROGATE, '\uFFFD');
const text = (max: number) => z.string().max(max).transform(toWellFormed);
const boundedString = (min: number, max: number) => z.string().min(min).max(max).transform(toWellFormed);

export const eventNameSchema = boundedString(1, LIMITS.eventName).describe(
  'Event name, 1-128 chars; snake_case by convention (e.g. agent_task_started, tool_called). Names starting with $ are reserved.',
);
export const userIdSchema = boundedString(1, LIMITS.userId).describe('Known user id (1-256 chars).');
export const idSchema = boundedString(1, LIMITS.id);

const urlSchema = z
  .string()
  .max(LIMITS.urlLike)
  .refine((v) => URL.canParse(v), { message: 'must be a valid absolute URL' })
  .transform(toWellFormed);

/** Whether a parsed JSON value nests deeper than `max` levels; iterative, so any depth is safe to measure. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (depth > max) return true;
    for (const child of Object.values(v as object)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

// The 8 KB check stringifies properties anyway: enrichment reuses that text instead of stringifying them again.
const stringified = new WeakMap<object, string>();

/** properties/traits as stored: the JSON text the validation already made, or made now. */
export function propertiesJson(value: Record<string, unknown>): string {
  return stringified.get(value) ?? JSON.stringify(value);
}

/** Free-form JSON object, at most 8 KB once stringified. */
export const propertiesSchema = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  // JSON.stringify recurses: a deeply nested body (JSON.parse is iterative) would overflow the stack as a 500.
  if (nestedDeeperThan(value, LIMITS.propertiesDepth)) {
    ctx.addIssue({ code: 'custom', message: `must be nested at most ${LIMITS.propertiesDepth} levels deep` });
    return;
  }
  const json = JSON.stringify(value);
  stringified.set(value, json);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > LIMITS.propertiesBytes) {
    ctx.addIssue({ code: 'custom', message: `must be at most ${LIMITS.propertiesBytes} bytes once stringified (got ${bytes})` });
  }
});

/** Body of POST /v1/track and each element of POST /v1/batch. Unknown keys (incl. server-computed ones) are dropped. */
export const eventInputSchema = z.object({
  event: eventNameSchema,
  event_id: optional(idSchema.describe('Optional id (join key); a UUID is generated when omitted. No deduplication.')),
  timestamp: optional(isoDate().describe('ISO 8601; defaults to the server clock at arrival.')),
  anonymous_id: optional(idSchema.describe('Caller-supplied anonymous id (1-128 chars); generated when neither it nor user_id is sent.')),
  user_id: optional(userIdSchema),
  session_id: optional(idSchema.describe('Session id; defaults to <anonymous_id>-<30-minute bucket>.')),
  url: optional(urlSchema.describe('Page or resource URL (valid URL, <= 2048 chars); utm_* and click ids in it drive source classification.')),
  path: optional(text(LIMITS.urlLike).describe('Path (<= 2048 chars); defaults to the url path.')),
  referrer: optional(text(LIMITS.urlLike).describe('Referrer URL (<= 2048 chars).')),
  properties: optional(propertiesSchema.describe('Free-form JSON object, at most 8 KB once stringified. Never put emails, names or addresses here.')),
});

/** When the client sent the batch, by the same clock that stamped its events: any year, so a wrong clock is still read. */
const sentAtSchema = z
  .string()
  .max(64)
  .transform((raw, ctx) => {
    const ms = parseIsoDate(raw.trim());
    if (ms !== null) return ms;
    ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 date-time: when the client sent the batch, by its own clock' });
    return z.NEVER;
  })
  .describe(
    `Optional (additive): when the client sent this batch, ISO 8601 by the clock that stamped its events. When it differs from the arrival time by more than ${LIMITS.clockSkewToleranceMs / 1000} s, every sent timestamp of the batch is moved by that difference (a device with a wrong clock); without it timestamps stay as sent.`,
  );

export const batchInputSchema = z.object({
  events: z.array(eventInputSchema).min(1).max(LIMITS.batchMax),
  sent_at: optional(sentAtSchema),
});

export const identifyInputSchema = z.object({
  anonymous_id: z.string({ error: (i) => (i.input === undefined ? 'required (only a pk_ key may omit it)' : undefined) }).pipe(idSchema),
  user_id: userIdSchema,
  traits: optional(propertiesSchema),
});

/** Identify from a pk_ key: anonymous_id may be omitted, the server then binds the caller's daily visitor id. */
export const browserIdentifyInputSchema = identifyInputSchema.extend({ anonymous_id: optional(idSchema) });

export const forgetInputSchema = z.object({
  user_id: userIdSchema,
});

export type EventInput = z.output<typeof eventInputSchema>;
export type BatchInput = z.output<typeof batchInputSchema>;
export type IdentifyInput = z.output<typeof identifyInputSchema>;
export type BrowserIdentifyInput = z.output<typeof browserIdentifyInputSchema>;
export type ForgetInput = z.output<typeof forgetInputSchema>;
