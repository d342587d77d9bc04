import { classify } from '@analytics/classifier';
import { type EventRow, type ImportedEvent, toClickHouseTime } from '@analytics/schema';

/**
 * The ip_hash of an imported row: the export does not carry the stored hash (reads never return it), and the
 * importing machine's address says nothing about the visitor, so an imported row holds 16 zero bytes ("not known").
 */
export const IMPORTED_IP_HASH_HEX = '0'.repeat(32);

/** source_rule_id of an imported row whose url and referrer no longer classify to its kept source and medium. */
export const IMPORTED_RULE_ID = 'imported';

/**
 * A row of our own export (POST /admin/projects/{id}/import, validated by importedEventSchema) as the events table
 * stores it: every exported column as it was stored (no classification, geo-IP or User-Agent parsing again). The two
 * columns the export does not carry: source_rule_id, the classifier's rule for the row's url and referrer when it
 * gives the kept source and medium (else `imported`), and ip_hash, zeros (IMPORTED_IP_HASH_HEX).
 */
export function importedRow(projectId: string, e: ImportedEvent): EventRow {
  const c = classify({ url: e.url, referrer: e.referrer });
  return {
    project_id: projectId,
    timestamp: toClickHouseTime(e.timestamp),
    event_id: e.event_id,
    event_name: e.event_name,
    anonymous_id: e.anonymous_id,
    user_id: e.user_id,
    session_id: e.session_id,
    source: e.source,
    medium: e.medium,
    campaign: e.campaign,
    source_confidence: e.source_confidence,
    source_rule_id: c.source === e.source && c.medium === e.medium ? c.rule_id : IMPORTED_RULE_ID,
    channel: e.channel,
    referrer: e.referrer,
    url: e.url,
    path: e.path,
    country: e.country,
    device_type: e.device_type,
    browser: e.browser,
    os: e.os,
    ip_hash_hex: IMPORTED_IP_HASH_HEX,
    properties: e.properties,
  };
}
