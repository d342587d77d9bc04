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
  /** Where lines go (stdout when unset); tests pass a collector. */
  destination?: NodeJS.WritableStream;
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
  const isTTY = options.isTTY ?? process.stdout.isTTY === true;
  if (logFormatOf(options.format, isTTY) === 'json') return options.destination ? pino(settings, options.destination) : pino(settings);
  // Synchronous, in-process: no worker thread, and lines keep their order with the start-up block printed after them.
  const prettyOptions = { sync: true, colorize: isTTY, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' };
  return pino(settings, pretty(options.destination ? { ...prettyOptions, destination: options.destination } : prettyOptions));
}
