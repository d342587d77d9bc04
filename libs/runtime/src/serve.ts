import { type Server, createServer } from 'node:http';
import type { Express } from 'express';
import { BODY_READ_MAX_FACTOR, type Logger, STOPPING_EVENT } from '@analytics/service-kit';
import type { Env } from './config';

/**
 * The Node server's own timeouts, set here for every app (each main listens through `serve`):
 * - `headersTimeout` 30 s: a client gets 30 s to send its request line and headers (Node's default is 60 s), then
 *   Node answers 408 and closes the connection; headers are small, so 30 s is generous even on a bad mobile link.
 * - `requestTimeout` headersTimeout + 3 x BODY_READ_TIMEOUT_MS + 5 s (65 s by default): only a backstop. It counts
 *   from the request's first byte, and a route reading a body answers `408 request_timeout` (JSON, its budget
 *   released) BODY_READ_TIMEOUT_MS after it starts reading, or up to 3x that for a body still arriving at 1 MiB/s
 *   (libs/service-kit's readJsonBody), so that answer always comes first. Node's limit (plain 408, checked every second: `connectionsCheckingInterval`) closes what no route reads,
 *   such as the body of a request refused before its body was read, which Node discards as it arrives.
 * - `keepAliveTimeout` 65 s: an idle keep-alive connection stays open longer than a load balancer's usual 60 s idle
 *   timeout, so the proxy never reuses a connection Node is closing.
 */
export function serverTimeoutsOf(bodyReadTimeoutMs: number) {
  const headersTimeout = 30_000;
  return { headersTimeout, requestTimeout: headersTimeout + BODY_READ_MAX_FACTOR * bodyReadTimeoutMs + 5_000, keepAliveTimeout: 65_000, connectionsCheckingInterval: 1_000 };
}

/** Listens, and on SIGTERM/SIGINT stops accepting, lets requests finish, then runs `shutdown` (flush writer, close stores). */
export function serve(app: Express, env: Pick<Env, 'PORT' | 'BODY_READ_TIMEOUT_MS'>, logger: Logger, shutdown: () => Promise<void>): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer(serverTimeoutsOf(env.BODY_READ_TIMEOUT_MS), app);
    server.listen(env.PORT, () => {
      const addr = server.address();
      logger.info({ port: typeof addr === 'object' && addr ? addr.port : env.PORT }, 'listening');
      resolve(server);
    });
    // `on`, not `once`: npm forwards the signal the process group already got, so it can arrive twice.
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down');
      const force = setTimeout(() => process.exit(1), 20_000);
      force.unref();
      // Long-lived answers (GET /v1/live's event streams) end themselves on this, so close() need not wait for them.
      app.emit(STOPPING_EVENT);
      server.close(() => {
        shutdown()
          .then(() => process.exit(0))
          .catch((e: unknown) => {
            logger.error({ err: e }, 'shutdown failed');
            process.exit(1);
          });
      });
      server.closeIdleConnections();
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });
}
