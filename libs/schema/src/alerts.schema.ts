import { z } from 'zod';
import { eventNameSchema } from './ingest.schema';
import { goalOrRefSchema, goalRefSchema, isGoalRef } from './insights.schema';
import { goalDefinitionOf, savedNameSchema } from './saved.schema';

// Spike and drop alerts (issue 48, docs/alerts-and-reports.md "Alerts"): kept per project in the key store (libs/auth
// alert-store.ts, migration 015), written by admins (admin routes), evaluated by the scheduler's alerts job
// (libs/alerts), which sends to the channels below.

export const ALERT_METRICS = ['visitors', 'pageviews', 'events', 'conversions'] as const;
export type AlertMetric = (typeof ALERT_METRICS)[number];
export const ALERT_WINDOWS = ['1h', '1d'] as const;
export type AlertWindow = (typeof ALERT_WINDOWS)[number];
export const ALERT_WINDOW_MS: Record<AlertWindow, number> = { '1h': 3_600_000, '1d': 86_400_000 };
export const ALERT_SENSITIVITIES = ['low', 'medium', 'high'] as const;
export type AlertSensitivity = (typeof ALERT_SENSITIVITIES)[number];
export const ALERT_CHANNEL_KINDS = ['email', 'webhook', 'slack'] as const;
export type AlertChannelKind = (typeof ALERT_CHANNEL_KINDS)[number];
export const ALERT_DELIVERY_KINDS = ['fired', 'recovered', 'test'] as const;
export type AlertDeliveryKind = (typeof ALERT_DELIVERY_KINDS)[number];
export const ALERT_DELIVERY_STATUSES = ['pending', 'sent', 'failed'] as const;
export type AlertDeliveryStatus = (typeof ALERT_DELIVERY_STATUSES)[number];

/** The caps of alerts (documented in docs/alerts-and-reports.md). */
export const ALERT_LIMITS = {
  perProject: 50,
  channels: 5,
  emails: 10,
  urlLength: 2048,
  secret: { min: 16, max: 256 },
  deliveriesListed: 100,
  threshold: 1e12,
} as const;

const httpUrl = (what: string, httpsOnly: boolean) =>
  z
    .string()
    .max(ALERT_LIMITS.urlLength, { error: `${what}: at most ${ALERT_LIMITS.urlLength} characters` })
    .refine((v) => {
      if (!URL.canParse(v)) return false;
      const u = new URL(v);
      return (u.protocol === 'https:' || (!httpsOnly && u.protocol === 'http:')) && !u.username && !u.password && u.hostname !== '';
    }, { error: `${what}: an absolute ${httpsOnly ? 'https' : 'http(s)'} URL without credentials` });

const emailChannel = z
  .object({
    email: z
      .array(z.email({ error: 'an email address' }).max(254).transform((s) => s.toLowerCase()))
      .min(1, { error: 'at least one address' })
      .max(ALERT_LIMITS.emails, { error: `at most ${ALERT_LIMITS.emails} addresses` })
      .describe(`1 to ${ALERT_LIMITS.emails} addresses, mailed through SMTP_URL.`),
  })
  .strict();
const webhookChannel = z
  .object({
    webhook: z
      .object({
        url: httpUrl('url', false).describe('Receives a POST of the JSON message (5 s timeout, retried for an hour on 5xx and timeouts).'),
        secret: z
          .string()
          .min(ALERT_LIMITS.secret.min, { error: `secret: ${ALERT_LIMITS.secret.min} to ${ALERT_LIMITS.secret.max} characters` })
          .max(ALERT_LIMITS.secret.max, { error: `secret: ${ALERT_LIMITS.secret.min} to ${ALERT_LIMITS.secret.max} characters` })
          .describe('Key of the X-Signature HMAC-SHA256 of the body; never answered back (has_secret).'),
      })
      .strict(),
  })
  .strict();
const slackChannel = z
  .object({ slack: z.object({ webhook_url: httpUrl('webhook_url', false).describe('A Slack incoming-webhook URL: receives { text }; never answered back.') }).strict() })
  .strict();

/** One channel as given: exactly one of email, webhook, slack. Checked by its key so each answers its own issues. */
const channelSchema = z
  .unknown()
  .transform((v, ctx): AlertChannel => {
    const keys = typeof v === 'object' && v !== null && !Array.isArray(v) ? Object.keys(v) : [];
    const schema = keys.length === 1 ? { email: emailChannel, webhook: webhookChannel, slack: slackChannel }[keys[0]!] : undefined;
    if (!schema) {
      ctx.addIssue({ code: 'custom', message: 'a channel is one of { email: [addresses] }, { webhook: { url, secret } }, { slack: { webhook_url } }' });
      return z.NEVER;
    }
    const r = schema.safeParse(v);
    if (r.success) return r.data as AlertChannel;
    for (const issue of r.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path as Array<string | number> });
    return z.NEVER;
  })
  .meta({ anyOf: [z.toJSONSchema(emailChannel, { io: 'input' }), z.toJSONSchema(webhookChannel, { io: 'input' }), z.toJSONSchema(slackChannel, { io: 'input' })].map(({ $schema: _s, ...rest }) => rest) });

export type AlertChannel = { email: string[] } | { webhook: { url: string; secret: string } } | { slack: { webhook_url: string } };

const threshold = z.number({ error: 'a number' }).min(0, { error: 'a threshold is 0 or more' }).max(ALERT_LIMITS.threshold);
const CONDITIONS = {
  above: z.object({ above: threshold.describe('Holds while the value is above n.') }).strict(),
  below: z.object({ below: threshold.positive({ error: 'below: more than 0 (nothing is below 0)' }).describe('Holds while the value is below n.') }).strict(),
  anomaly: z.object({ anomaly: z.object({ sensitivity: z.enum(ALERT_SENSITIVITIES, { error: 'sensitivity: allowed are low, medium, high' }).default('medium') }).strict() }).strict(),
};
const CONDITION_TEXT = 'condition: one of { above: n }, { below: n }, { anomaly: { sensitivity: "low" | "medium" | "high" } }';
/** A condition, checked by its one key so each answers its own issues (not a union's "Invalid input"). */
export const alertConditionSchema = z
  .unknown()
  .transform((v, ctx): AlertCondition => {
    const keys = typeof v === 'object' && v !== null && !Array.isArray(v) ? Object.keys(v) : [];
    const schema = keys.length === 1 && Object.hasOwn(CONDITIONS, keys[0]!) ? CONDITIONS[keys[0] as keyof typeof CONDITIONS] : undefined;
    if (!schema) {
      ctx.addIssue({ code: 'custom', message: CONDITION_TEXT });
      return z.NEVER;
    }
    const r = schema.safeParse(v);
    if (r.success) return r.data as AlertCondition;
    for (const issue of r.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path as Array<string | number> });
    return z.NEVER;
  })
  .meta({ anyOf: Object.values(CONDITIONS).map((c) => z.toJSONSchema(c, { io: 'input' })).map(({ $schema: _s, ...rest }) => rest) })
  .describe('{ above: n }, { below: n }, or { anomaly: { sensitivity } }: a deviation from the same window of the week in the last four weeks (docs/alerts-and-reports.md).');
export type AlertCondition = { above: number } | { below: number } | { anomaly: { sensitivity: AlertSensitivity } };

/** What an alert watches and when it holds: stored as given (the goal in its saved form, or { id }). */
export interface AlertDefinition {
  metric: AlertMetric;
  event?: string;
  goal?: Record<string, unknown>;
  window: AlertWindow;
  condition: AlertCondition;
}

const definitionFields = {
  metric: z.enum(ALERT_METRICS, { error: 'metric: allowed are visitors, pageviews, events, conversions' }).describe('visitors, pageviews, events (optionally of `event` only) or conversions (of `goal`).'),
  event: eventNameSchema.optional().describe('With events or visitors: only events of this name (visitors: who sent one).'),
  goal: goalOrRefSchema.optional().describe('With conversions (required): { event?, path?, filters? } as /v1/insights takes a goal, or { id } of a saved goal.'),
  window: z.enum(ALERT_WINDOWS, { error: 'window: allowed are 1h, 1d' }).describe('The value is the last hour (1h) or the last 24 hours (1d), ending at the last evaluation point.'),
  condition: alertConditionSchema,
};

/** The definition's fields checked together: a goal with conversions only (and required there), event with events and visitors. */
function checkDefinition(v: { metric?: AlertMetric; event?: unknown; goal?: unknown }, ctx: z.RefinementCtx): void {
  if (v.metric === 'conversions' && v.goal === undefined) ctx.addIssue({ code: 'custom', path: ['goal'], message: 'conversions need a `goal`: { event?, path?, filters? } or { id } of a saved goal' });
  if (v.metric !== undefined && v.metric !== 'conversions' && v.goal !== undefined) ctx.addIssue({ code: 'custom', path: ['goal'], message: 'a goal goes with the metric conversions only' });
  if (v.event !== undefined && v.metric !== undefined && v.metric !== 'events' && v.metric !== 'visitors') ctx.addIssue({ code: 'custom', path: ['event'], message: 'event goes with the metrics events and visitors only' });
}

const storedGoal = (g: unknown): Record<string, unknown> | undefined => {
  if (g === undefined) return undefined;
  const goal = g as Parameters<typeof isGoalRef>[0];
  return isGoalRef(goal) ? { id: goal.id } : (goalDefinitionOf(goal) as unknown as Record<string, unknown>);
};

const channelsSchema = z
  .array(channelSchema)
  .min(1, { error: 'at least one channel' })
  .max(ALERT_LIMITS.channels, { error: `at most ${ALERT_LIMITS.channels} channels` })
  .describe(`1 to ${ALERT_LIMITS.channels} channels, each { email: [addresses] }, { webhook: { url, secret } } or { slack: { webhook_url } }.`);

export const alertNameSchema = savedNameSchema;

/** POST /admin/projects/:id/alerts. */
export const alertInputSchema = z
  .object({ name: alertNameSchema, ...definitionFields, channels: channelsSchema })
  .strict()
  .superRefine(checkDefinition)
  .transform((v) => ({
    name: v.name,
    definition: { metric: v.metric, ...(v.event !== undefined ? { event: v.event } : {}), ...(v.goal !== undefined ? { goal: storedGoal(v.goal)! } : {}), window: v.window, condition: v.condition as AlertCondition } satisfies AlertDefinition,
    channels: v.channels,
  }))
  .describe('{ name, metric, event?, goal?, window, condition, channels }.');
export type AlertInput = z.output<typeof alertInputSchema>;

/**
 * PATCH /admin/projects/:id/alerts/:alert_id: any subset of the fields (`event` and `goal` may be null: removed);
 * `channels`, when given, replace the alert's (secrets included). The route checks the merged whole as a create.
 */
export const alertPatchSchema = z
  .object({
    name: alertNameSchema.optional(),
    metric: z.unknown().optional().describe(definitionFields.metric.description ?? 'metric'),
    event: z.unknown().optional().describe('null removes it.'),
    goal: z.unknown().optional().describe('null removes it.'),
    window: z.unknown().optional().describe(definitionFields.window.description ?? 'window'),
    condition: z.unknown().optional().describe('As on create.'),
    channels: z.unknown().optional().describe('Replaces every channel (secrets given again).'),
  })
  .strict()
  .describe('Any subset of the fields of the create body; the alert they make is checked as a whole.');

/** A stored alert merged with a PATCH body, as a create body: checked whole by alertInputSchema. */
export function alertPatched(stored: { name: string; definition: AlertDefinition; channels: AlertChannel[] }, patch: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { name: stored.name, ...stored.definition, channels: stored.channels };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else if (value !== undefined) merged[key] = value;
  }
  return merged;
}

/** A channel as answered: no secret (a webhook's URL, a Slack webhook's host only). */
export function redactedChannel(c: AlertChannel): Record<string, unknown> {
  if ('email' in c) return { email: c.email };
  if ('webhook' in c) return { webhook: { url: c.webhook.url, has_secret: true } };
  return { slack: { host: new URL(c.slack.webhook_url).hostname, has_secret: true } };
}

const goalAnswer = z.union([goalRefSchema, z.object({ event: z.string().optional(), path: z.string().optional(), filters: z.array(z.array(z.unknown())) })]);
export const alertSchema = z
  .object({
    id: z.string().describe('UUID.'),
    name: z.string(),
    metric: z.enum(ALERT_METRICS),
    event: z.string().optional(),
    goal: goalAnswer.optional(),
    window: z.enum(ALERT_WINDOWS),
    condition: z.record(z.string(), z.unknown()).describe('As given (anomaly with its sensitivity).'),
    channels: z.array(z.record(z.string(), z.unknown())).describe('As given, without secrets: a webhook { url, has_secret }, a Slack webhook { host, has_secret }.'),
    state: z.enum(['ok', 'firing']).describe('firing from the evaluation that found the condition holding to the one that found it not.'),
    state_since: z.string().nullable().describe('ISO 8601: when the state began (null before the first evaluation).'),
    last_evaluated_at: z.string().nullable().describe('ISO 8601: the end of the last window evaluated.'),
    last_value: z.number().nullable().describe('The value of that window.'),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .describe('An alert, its channels without secrets, and its state.');
export const alertResponseSchema = z.object({ alert: alertSchema });
export const alertListSchema = z.object({ alerts: z.array(alertSchema) }).describe("The project's alerts, oldest first.");
export const alertDeliverySchema = z.object({
  at: z.string().describe('ISO 8601: when the message was made.'),
  channel: z.enum(ALERT_CHANNEL_KINDS),
  kind: z.enum(ALERT_DELIVERY_KINDS),
  status: z.enum(ALERT_DELIVERY_STATUSES).describe('pending (being sent or retried), sent, or failed (refused, or given up after an hour).'),
  attempts: z.number().int(),
  error: z.string().optional().describe('The last failure, when any.'),
});
export const alertDeliveriesSchema = z.object({ deliveries: z.array(alertDeliverySchema) }).describe(`The alert's messages, newest first, at most ${ALERT_LIMITS.deliveriesListed}.`);
export const alertTestResponseSchema = z.object({ deliveries: z.array(alertDeliverySchema) }).describe('The test messages queued, one per channel: sent at once, retried as any.');
