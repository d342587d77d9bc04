import pino, { type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs. Request logs never carry IPs, headers or bodies: only method, path, status and timing. */
export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  return pino({
    level: options.level ?? 'info',
    name: options.name,
    base: undefined,
    redact: { paths: ['authorization', '*.authorization', 'headers', '*.headers', 'ip', '*.ip', 'secret', '*.secret'], remove: true },
  });
}
