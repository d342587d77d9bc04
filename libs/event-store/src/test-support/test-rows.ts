import type { EventRow } from '@analytics/schema';
import { toClickHouseTime } from '../primitives/clickhouse-time';

let seq = 0;

/** A stored event row for the store's own tests (`at`: epoch ms); unique ascending event_ids, every other field overridable. */
export function testRow(projectId: string, o: Partial<EventRow> & { at: number }): EventRow {
  const { at, ...rest } = o;
  seq++;
  return {
    project_id: projectId, timestamp: toClickHouseTime(at), event_id: `e-${String(seq).padStart(5, '0')}`, event_name: '$pageview', anonymous_id: 'anon-1',
    user_id: null, session_id: 'sess-1', source: 'direct', medium: 'direct', campaign: null, source_confidence: 'high', source_rule_id: 'direct', channel: 'direct',
    referrer: null, url: null, path: '/', country: 'GB', device_type: 'desktop', browser: 'Chrome', os: 'Linux', ip_hash_hex: 'ab'.repeat(16),
    properties: '{}', ...rest,
  };
}
