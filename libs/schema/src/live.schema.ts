import { z } from 'zod';

/** GET /v1/live takes no parameters (the window is fixed: the last 5 and 30 minutes up to now). */
export const liveParamsSchema = z.object({});

/** How many rows `top_pages`, `top_sources` and `events` of a live message hold at most. */
export const LIVE_TOP_LIMIT = 10;
export const LIVE_EVENTS_LIMIT = 20;
/** The minutes `pageviews_per_minute` spans (oldest first, the current minute last) and the visitors' window. */
export const LIVE_MINUTES = 30;
export const LIVE_VISITOR_MINUTES = 5;

/**
 * One message of GET /v1/live (a `data:` line of the event stream every 5 s), and the MCP get_live result. Bots
 * (device_type bot) are left out of every figure, as the dashboard leaves them out. `events` never carries a visitor's
 * anonymous_id or user_id.
 */
export const liveMessageSchema = z.object({
  at: z.string().describe('When the snapshot was taken (ISO 8601, UTC).'),
  visitors: z.number().int().describe('Distinct visitors (anonymous_id) with an event in the last 5 minutes.'),
  pageviews_per_minute: z.array(z.number().int()).describe('$pageview events per minute of the last 30 minutes, oldest first; the last is the current minute so far.'),
  top_pages: z.array(z.object({ path: z.string().nullable(), visitors: z.number().int() })).describe('Pages of $pageview events of the last 30 minutes by distinct visitors, most first (10 at most).'),
  top_sources: z
    .array(z.object({ source: z.string(), visitors: z.number().int() }))
    .describe('Visitors of the last 30 minutes by the source of their first event in that window, most first (10 at most).'),
  events: z
    .array(z.object({ event_name: z.string(), path: z.string().nullable(), source: z.string(), country: z.string(), timestamp: z.string() }))
    .describe('The newest events of the last 30 minutes, newest first (20 at most); no visitor ids.'),
});
export type LiveMessage = z.infer<typeof liveMessageSchema>;
