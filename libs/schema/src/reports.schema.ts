import { z } from 'zod';
import { emailSchema } from './accounts.schema';

// Scheduled email reports (issue 48, docs/alerts-and-reports.md "Scheduled reports"): a project's admin saves a report
// (weekly or monthly, its recipients, optionally a saved segment); the scheduler mails it on Monday (weekly) or the 1st
// (monthly) at 08:00 in the project's time zone, once per recipient and period.

export const REPORT_FREQUENCIES = ['weekly', 'monthly'] as const;
export type ReportFrequency = (typeof REPORT_FREQUENCIES)[number];

/** Recipients per report, reports per project (the 21st is 409 limit_reached). */
export const REPORT_LIMITS = { recipients: 50, perProject: 20 } as const;

const frequencySchema = z.enum(REPORT_FREQUENCIES).describe('weekly: Monday 08:00, the previous Monday-Sunday; monthly: the 1st 08:00, the previous month (both in the project\'s time zone).');
const recipientsSchema = z
  .array(z.unknown())
  .min(1, { error: 'at least one recipient' })
  .max(REPORT_LIMITS.recipients, { error: `at most ${REPORT_LIMITS.recipients} recipients` })
  .pipe(z.array(emailSchema))
  .transform((list) => [...new Set(list)])
  .describe(`1 to ${REPORT_LIMITS.recipients} email addresses (case-insensitive; repeats count once).`);
const segmentSchema = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, { error: 'a saved segment\'s id (GET /admin/projects/{id}/segments)' })
  .transform((s) => s.toLowerCase())
  .describe("A saved segment's id: the report's figures are held to its filters.");

export const reportInputSchema = z
  .object({ frequency: frequencySchema, recipients: recipientsSchema, segment: segmentSchema.nullable().optional() })
  .strict()
  .describe('A scheduled email report.');
export const reportPatchSchema = z
  .object({ frequency: frequencySchema.optional(), recipients: recipientsSchema.optional(), segment: segmentSchema.nullable().optional().describe('A saved segment\'s id, or null for none.') })
  .strict()
  .refine((v) => Object.keys(v).length > 0, { error: 'nothing to change: give frequency, recipients or segment' })
  .describe('Any subset of the report\'s fields.');
export type ReportInput = z.output<typeof reportInputSchema>;
export type ReportPatch = z.output<typeof reportPatchSchema>;

export const reportSchema = z
  .object({
    id: z.string().describe('Report id (UUID).'),
    project_id: z.string(),
    frequency: z.enum(REPORT_FREQUENCIES),
    recipients: z.array(z.string()).describe('Who receives it, in alphabetical order (those who unsubscribed are gone from the list).'),
    segment: z.string().nullable(),
    created_by: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    next_send_at: z.string().describe('When the next scheduled send is due (ISO 8601, UTC), computed in the project\'s time zone.'),
    last_sent_at: z.string().nullable().describe('When a scheduled send last went out to a recipient (previews not counted).'),
  })
  .describe('A scheduled email report.');
export type ReportAnswer = z.input<typeof reportSchema>;
export const reportResponseSchema = z.object({ report: reportSchema });
export const reportListResponseSchema = z.object({ reports: z.array(reportSchema) }).describe("The project's reports, oldest first.");
export const reportPreviewResponseSchema = z
  .object({ ok: z.literal(true), period: z.object({ from: z.string(), to: z.string() }).describe('The period the preview covers: the latest full period (local dates [from, to)), what the last scheduled send covered or would have.'), recipients: z.number().int() })
  .describe('The preview went out to the recipients.');
export const unsubscribePageSchema = z.string().describe('A small HTML page.');
