/** One row of the `events` table as the writer sends it (ip_hash travels as hex into an EPHEMERAL column). */
export interface EventRow {
  project_id: string;
  timestamp: string; // 'YYYY-MM-DD HH:MM:SS.mmm' UTC
  event_id: string;
  event_name: string;
  anonymous_id: string;
  user_id: string | null;
  session_id: string;
  source: string;
  medium: string;
  campaign: string | null;
  source_confidence: string;
  source_rule_id: string;
  referrer: string | null;
  url: string | null;
  path: string | null;
  country: string;
  device_type: string;
  browser: string;
  os: string;
  ip_hash_hex: string;
  properties: string;
}

/** Columns of a row returned by GET /v1/query, in the spec's order. */
export const QUERY_ROW_COLUMNS = [
  'timestamp', 'event_name', 'anonymous_id', 'user_id', 'source', 'medium', 'campaign', 'source_confidence',
  'referrer', 'url', 'path', 'country', 'device_type', 'properties',
] as const;
