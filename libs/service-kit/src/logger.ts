import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

export type LogFormat = 'json' | 'pretty';

export interface LoggerOptions {
  level?: string;
  name?: string;
  /** `json`, `pretty`, or unset: pretty when stdout is a terminal (a person reads it), JSON otherwise. */
  format?: LogFormat;
  /** Whether stdout is a terminal; a parameter so tests can pin it. */
  isTTY?: boolean;
}

/** The format a logger writes: `LOG_FORMAT` when given, else pretty on a terminal and JSON otherwise. */
export function logFormatOf(format: LogFormat | undefined, isTTY: boolean): LogFormat {
  return format ?? (isTTY ? 'pretty' : 'json');
}

/** Structured logs. Request logs never carry IPs, headers or bodies: only method, path, status and timing. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const settings = {
    level: options.level ?? 'info',
    name: options.name,
    base: undefined,
    redact: { paths: ['authorization', '*.authorization', 'headers', '*.headers', 'ip', '*.ip', 'secret', '*.secret'], remove: true },
  };
  if (logFormatOf(options.format, options.isTTY ?? process.stdout.isTTY === true) === 'json') return pino(settings);
  // Synchronous, in-process: no worker thread, and lines keep their order with the start-up block printed after them.
  return pino(settings, pretty({ sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' }));
}
