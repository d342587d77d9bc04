import type { Server } from 'node:http';
import type { Express } from 'express';
import type { Logger } from '@analytics/service-kit';

/** Listens, and on SIGTERM/SIGINT stops accepting, lets requests finish, then runs `shutdown` (flush writer, close stores). */
export function serve(app: Express, port: number, logger: Logger, shutdown: () => Promise<void>): Promise<Server> {
  return new Promise((resolve) => {
    const server = app.listen(port, () => {
      const addr = server.address();
      logger.info({ port: typeof addr === 'object' && addr ? addr.port : port }, 'listening');
      resolve(server);
    });
    server.keepAliveTimeout = 65_000;
    // `on`, not `once`: npm forwards the signal the process group already got, so it can arrive twice.
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down');
      const force = setTimeout(() => process.exit(1), 20_000);
      force.unref();
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
