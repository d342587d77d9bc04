import { randomUUID } from 'node:crypto';
import { channelOf, classify } from '@analytics/classifier';
import { type EventInput, type EventRow, SESSION_BUCKET_MS, propertiesJson, toClickHouseTime } from '@analytics/schema';
import { countryOf } from './geo';
import { dailyAnonymousId, ipHash } from './ip-hash';
import { parseUserAgent } from './user-agent';

export { SESSION_BUCKET_MS };

/** What enrichment needs from the request; computed once per request, not per event. */
export interface RequestContext {
  projectId: string;
  /** Caller IP (socket, or X-Forwarded-For through trusted proxies). Hashed here, never stored. */
  ip: string | undefined;
  userAgent: string | undefined;
  /** Host header: the request host for the classifier when an event has no url. */
  host: string | undefined;
  /** Arrival time, the default timestamp. */
  nowMs: number;
  ipHashSecret: string;
  /**
   * How the anonymous_id of an event with neither id is made: `random` (the default) a UUID v4; `derived` the daily
   * visitor id of (project, IP, user agent), for pk_ requests from browsers that store nothing on the device.
   */
  anonymousIds?: 'random' | 'derived';
}

/** The daily visitor id of a `derived` request, else undefined. */
export function derivedAnonymousId(ctx: RequestContext): string | undefined {
  return ctx.anonymousIds === 'derived' ? dailyAnonymousId(ctx.projectId, ctx.ip ?? '', ctx.userAgent ?? '', ctx.ipHashSecret, ctx.nowMs) : undefined;
}

/**
 * The session id of an event sent without one, by its own timestamp's 30-minute bucket. IngestService replaces it for
 * events near their arrival by the visit by inactivity (libs/ingest/src/visits.ts), same form, the bucket of the
 * visit's first event; events far from arrival (imports, backfills) keep this one.
 */
export function defaultSessionId(owner: string, timestampMs: number): string {
  return `${owner}-${Math.floor(timestampMs / SESSION_BUCKET_MS)}`;
}

function pathOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).pathname;
  } catch {
    return null;
  }
}

/** Per-request enrichment: IP hash, country and device are computed once and shared by every event of the request. */
export function createEnricher(ctx: RequestContext) {
  const hash = ipHash(ctx.ip ?? '', ctx.ipHashSecret, ctx.nowMs);
  const country = countryOf(ctx.ip);
  const device = parseUserAgent(ctx.userAgent);
  // Derived on first need, then shared by every event of the request (a batch of 1000 hashes once).
  let derived: string | undefined;
  const newAnonymousId = () => (derived ??= derivedAnonymousId(ctx)) ?? randomUUID();

  return (input: EventInput): EventRow => {
    const timestamp = input.timestamp ?? ctx.nowMs;
    // anonymous_id is generated only when neither it nor user_id is sent (the event is then still attributable).
    const anonymousId = input.anonymous_id ?? (input.user_id ? '' : newAnonymousId());
    const classifyInput = { url: input.url, referrer: input.referrer, requestHost: ctx.host };
    const c = classify(classifyInput);
    return {
      project_id: ctx.projectId,
      timestamp: toClickHouseTime(timestamp),
      event_id: input.event_id ?? randomUUID(),
      event_name: input.event,
      anonymous_id: anonymousId,
      user_id: input.user_id ?? null,
      session_id: input.session_id ?? defaultSessionId(anonymousId || input.user_id!, timestamp),
      source: c.source,
      medium: c.medium,
      campaign: c.campaign ?? null,
      source_confidence: c.confidence,
      source_rule_id: c.rule_id,
      channel: channelOf(c, classifyInput),
      referrer: input.referrer || null,
      url: input.url ?? null,
      path: input.path ?? pathOf(input.url),
      country,
      device_type: device.device_type,
      browser: device.browser,
      os: device.os,
      ip_hash_hex: hash,
      properties: input.properties ? propertiesJson(input.properties) : '{}',
    };
  };
}
