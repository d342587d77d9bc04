import type { Authenticator } from '@analytics/auth';
import { routes } from '@analytics/schema';
import { ANSWERED, type RouteDefinition, STOPPING_EVENT, defineRoute } from '@analytics/service-kit';
import type { LiveHub } from './live-hub';

/**
 * GET /v1/live: the key's project's live view as Server-Sent Events (LiveHub: a message at once and every tick, pings
 * between, one read per project per tick). Past LIVE_MAX_PER_PROJECT open streams of the project the answer is a JSON
 * 429 rate_limited with Retry-After, before any byte of the stream. `X-Accel-Buffering: no` keeps nginx from holding
 * messages back (the generated proxy config turns buffering off for the route too); no compression touches it.
 */
export function liveRoute(hub: LiveHub, authenticator: Authenticator): RouteDefinition {
  // The apps whose stopping ends this hub's streams (each app serving the route, once).
  const watched = new WeakSet<object>();
  return defineRoute(routes.live, async (_input, auth, { req, res }) => {
    if (!watched.has(req.app)) {
      watched.add(req.app);
      req.app.once(STOPPING_EVENT, () => hub.close());
    }
    const authorization = req.get('authorization');
    const origin = req.get('origin');
    const start = () => {
      res.status(200);
      res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('X-Accel-Buffering', 'no');
      res.setHeader('X-Content-Type-Options', 'nosniff');
    };
    if (req.method === 'HEAD') {
      start();
      res.end();
      return ANSWERED;
    }
    let started = false;
    const remove = hub.add(auth.projectId, {
      send: (chunk) => {
        if (res.writableEnded || res.destroyed) return;
        if (!started) {
          started = true;
          start();
          res.flushHeaders();
        }
        res.write(chunk);
      },
      // The same check as the request's (the key cache honours the revocation epoch): a revoked key ends the stream.
      recheck: async () => {
        await authenticator.authenticate(authorization, 'read', origin);
      },
      end: () => {
        if (!started) {
          started = true;
          start();
        }
        if (!res.writableEnded) res.end();
      },
    });
    // Headers at once, before the first message's read is in: the client knows the stream is open.
    if (!started) {
      started = true;
      start();
      res.flushHeaders();
      res.write(': live\n\n');
    }
    res.on('close', remove);
    return ANSWERED;
  });
}
