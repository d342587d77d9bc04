import type { ImportResponse, ImportedEvent } from '@analytics/schema';
import { importedRow } from '@analytics/enrichment';
import { type EventStore, queryStoredEventKeys, storedEventKey } from '@analytics/event-store';

/**
 * POST /admin/projects/{id}/import: rows of our own export written as they were stored (importedRow), each row whose
 * (event_id, timestamp) the project already holds left out, so a batch sent again (the import tool resends the batch
 * it was not told had landed) or a file imported twice writes nothing twice. Rows repeated within one batch are all
 * written, as /v1/batch writes them (the spec: no deduplication by event_id on ingest).
 */
export async function importEvents(store: EventStore, projectId: string, events: readonly ImportedEvent[]): Promise<ImportResponse> {
  const stored = await queryStoredEventKeys(store, projectId, { events });
  const fresh = events.filter((e) => !stored.has(storedEventKey(e.event_id, e.timestamp)));
  if (fresh.length > 0) await store.write(fresh.map((e) => importedRow(projectId, e)));
  return { ok: true, count: fresh.length, skipped: events.length - fresh.length };
}
