import { z } from 'zod';
import { toWellFormed } from './ingest.schema';
import { clampToAcceptedRange, isoDate, isoDateParam } from './iso-date';

// Annotations (issue 48, docs/alerts-and-reports.md "Annotations"): dated notes on a project's timeline (a deploy, a
// campaign, an incident), kept in the key store (libs/auth annotations.ts), written by the project's sk_ key (a CI
// deploy marker) or an editor, read by its rk_ key, a share link and the members, and drawn on the dashboard's chart.

export const ANNOTATION_KINDS = ['note', 'deploy', 'campaign', 'incident'] as const;
export type AnnotationKind = (typeof ANNOTATION_KINDS)[number];

/**
 * `text`: 1 to 500 characters once trimmed. A project holds at most 10,000 annotations (the next is 409
 * limit_reached); a list answers at most 1,000 of its range, the oldest, with `truncated: true` when more lie in it.
 */
export const ANNOTATION_LIMITS = { text: 500, perProject: 10_000, listed: 1_000 } as const;

const textSchema = z
  .string()
  .transform((s) => toWellFormed(s.trim()))
  .pipe(z.string().min(1, { error: `text has 1 to ${ANNOTATION_LIMITS.text} characters (spaces around it are trimmed)` }).max(ANNOTATION_LIMITS.text, { error: `text has 1 to ${ANNOTATION_LIMITS.text} characters` }))
  .describe(`What happened: 1 to ${ANNOTATION_LIMITS.text} characters (trimmed).`);

/** POST /v1/annotations and POST /admin/projects/{id}/annotations: `at` parses to epoch ms within the accepted timestamps. */
export const annotationInputSchema = z
  .object({
    at: isoDate().describe('When it happened: ISO 8601 (a date alone is that UTC midnight), within the timestamps events may have.'),
    text: textSchema,
    kind: z.enum(ANNOTATION_KINDS).default('note').describe(`One of ${ANNOTATION_KINDS.join(', ')} (default note).`),
  })
  .strict()
  .describe('{ at, text, kind? }: one dated note on the project\'s timeline.');
export type AnnotationInput = z.output<typeof annotationInputSchema>;

/** GET /v1/annotations and GET /admin/projects/{id}/annotations: the annotations with from <= at < to (another parameter: ignored, named in `warnings`, as the reads do). */
export const annotationListQuerySchema = z
  .object({
    from: isoDateParam().describe('Start of the range, ISO 8601, inclusive.'),
    to: isoDateParam().describe('End of the range, ISO 8601, exclusive.'),
  })
  .refine((v) => v.to > v.from, { message: '`to` must be after `from`', path: ['to'] })
  .transform((v) => ({ from: clampToAcceptedRange(v.from), to: clampToAcceptedRange(v.to) }));
export type AnnotationListQuery = z.output<typeof annotationListQuerySchema>;

export const annotationSchema = z
  .object({
    id: z.string().describe('UUID.'),
    at: z.string().describe('ISO 8601 (UTC, milliseconds).'),
    text: z.string(),
    kind: z.enum(ANNOTATION_KINDS),
    created_by: z
      .string()
      .nullable()
      .describe('Who made it: a member\'s user id, `key:<prefix>` for a project key (sk_ or ak_), null for the operator (ADMIN_TOKEN).'),
    created_at: z.string().describe('ISO 8601.'),
  })
  .describe('One annotation of the project\'s timeline.');
export type Annotation = z.infer<typeof annotationSchema>;

export const annotationResponseSchema = z.object({ annotation: annotationSchema });
export const annotationListSchema = z
  .object({
    annotations: z.array(annotationSchema).describe(`Oldest first (by at, then id); at most ${ANNOTATION_LIMITS.listed}.`),
    truncated: z.boolean().optional().describe(`true when the range holds more than ${ANNOTATION_LIMITS.listed}: narrow it to see the later ones.`),
  })
  .describe("The project's annotations in [from, to), oldest first.");
export type AnnotationList = z.infer<typeof annotationListSchema>;

/** The port the reads list annotations through (libs/auth Annotations is one): scoped by project, [from, to) in epoch ms. */
export interface AnnotationLookup {
  list(projectId: string, range: { from: number; to: number }): Promise<AnnotationList>;
}

/** How an sk_/ak_ key is named in `created_by`: the only key that may delete the annotation through DELETE /v1/annotations/{id}. */
export const keyCreator = (prefix: string): string => `key:${prefix}`;
