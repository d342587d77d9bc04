import { once } from 'node:events';
import type { Response } from 'express';
import { type EventStore, ExportIdleError, exportEvents, resolveSegmentFilters } from '@analytics/event-store';
import { type ExportFormat, type ExportParams, type SavedLookup, routes } from '@analytics/schema';
import { ANSWERED, type Logger, type RouteDefinition, defineRoute } from '@analytics/service-kit';

const CONTENT_TYPE: Record<ExportFormat, string> = {
  ndjson: 'application/x-ndjson',
  csv: 'text/csv; charset=utf-8',
  parquet: 'application/vnd.apache.parquet',
};
const EXTENSION: Record<ExportFormat, string> = { ndjson: 'ndjson', csv: 'csv', parquet: 'parquet' };

/** `<project>-<from>-<to>.<ext>`, of safe characters only (the project's name may hold anything). */
export function exportFileName(projectName: string, params: Pick<ExportParams, 'from' | 'to' | 'format'>): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+|_+$/g, '').slice(0, 64) || 'project';
  const stamp = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z').replace(/:/g, '');
  return `${safe(projectName)}-${stamp(params.from)}-${stamp(params.to)}.${EXTENSION[params.format]}`;
}

/**
 * GET /v1/export: every matching event of the key's project, streamed from ClickHouse's own output format to the
 * socket. The status and headers go out with the first chunk, so how an export ends depends on whether it sent them:
 * before, a refusal or a limit (429, 400 query_too_expensive at EXPORT_MAX_EXECUTION_S) is a JSON error answer; after,
 * a failure, the wall-time limit or a client that took nothing for EXPORT_IDLE_TIMEOUT_S cuts the connection (the
 * client sees an incomplete transfer, never a file that looks whole). A client that goes away aborts the export: its
 * query is cancelled. `segment` (a saved segment's id) is resolved before anything is sent: an unknown one is a 400.
 */
export function exportRoute(events: EventStore, saved: SavedLookup, logger?: Logger): RouteDefinition {
  return defineRoute(routes.export, async ({ query }, auth, { req, res }) => {
    const gone = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) gone.abort();
    };
    res.on('close', onClose);
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      res.status(200);
      res.setHeader('Content-Type', CONTENT_TYPE[query.format]);
      res.setHeader('Content-Disposition', `attachment; filename="${exportFileName(auth.project.name, query)}"`);
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('X-Content-Type-Options', 'nosniff');
    };
    const segment = await resolveSegmentFilters(saved, auth.projectId, query.segment);
    // HEAD (express serves it with the GET route): the headers of the file, without running the export for nothing.
    if (req.method === 'HEAD') {
      start();
      res.end();
      return ANSWERED;
    }
    try {
      await exportEvents(events, auth.projectId, query, { signal: gone.signal, write: (chunk) => write(res, gone.signal, start, chunk) }, segment);
    } catch (e) {
      if (!started) throw e;
      // An idle client is the client's doing (a warning, its statement already killed); anything else is a failure.
      if (e instanceof ExportIdleError) logger?.warn({ reqId: res.locals['reqId'], path: '/v1/export', idle_ms: e.idleMs }, 'export client took nothing: disconnected');
      else logger?.error({ reqId: res.locals['reqId'], path: '/v1/export', err: e }, 'export failed after its first byte: connection cut');
      // A reset, not a FIN queued behind unsent bytes: a client that reads nothing learns it at once, and the kernel
      // drops the megabytes it held for it.
      res.socket?.resetAndDestroy();
      res.destroy(e instanceof Error ? e : new Error(String(e)));
      return ANSWERED;
    } finally {
      res.off('close', onClose);
    }
    if (gone.signal.aborted) return ANSWERED;
    start();
    res.end();
    return ANSWERED;
  });
}

async function write(res: Response, signal: AbortSignal, start: () => void, chunk: Uint8Array): Promise<void> {
  start();
  if (res.write(chunk) || signal.aborted) return;
  // Backpressure: the next chunk is fetched once the socket took this one (or the client is gone).
  await once(res, 'drain', { signal }).catch(() => undefined);
}
