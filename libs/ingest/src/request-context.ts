import type { Request } from 'express';
import type { AuthContext } from '@analytics/auth';
import type { RequestContext } from '@analytics/enrichment';

/** The enrichment context of an authenticated request, as ingest-api's routes and MCP's track_event both build it. */
export type RequestContextOf = (req: Request, auth: Pick<AuthContext, 'projectId' | 'kind'>) => RequestContext;

export function requestContexts(ipHashSecret: string, clock: () => number = Date.now): RequestContextOf {
  return (req, { projectId, kind }) => ({
    projectId,
    ip: req.ip,
    userAgent: req.get('user-agent'),
    host: req.get('host'),
    nowMs: clock(),
    ipHashSecret,
    // pk_ callers are browsers that may store nothing on the device: their events without ids get the daily visitor id.
    anonymousIds: kind === 'pk' ? 'derived' : 'random',
  });
}
