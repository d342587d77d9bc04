import { ApiError } from '@analytics/schema';
import { clickHouseCodeOf } from '../../client/store-error';
import type { ReadGateLimits } from './read-gate';

/** What one read may cost in the engine, and how reads are admitted (docs/configuration.md: READ_*). */
export interface ReadLimits extends ReadGateLimits {
  maxExecutionS: number;
  maxMemoryBytes: number;
  maxThreads: number;
  /** GET /v1/export: how long one export may run from its turn to its last byte, waits on its client included (EXPORT_MAX_EXECUTION_S). */
  exportMaxExecutionS: number;
  /** GET /v1/export: how long its client may take nothing before it is disconnected (EXPORT_IDLE_TIMEOUT_S). */
  exportIdleTimeoutS: number;
  /** GET /v1/export: exports running at once in the process (EXPORT_CONCURRENCY); one per project. */
  exportConcurrency: number;
}

/** The defaults; `concurrency` 0 means: one at a time on the embedded engine (it runs them so anyway), 8 on a server. */
export const DEFAULT_READ_LIMITS: ReadLimits = {
  maxExecutionS: 10,
  maxMemoryBytes: 1024 * 1024 * 1024,
  maxThreads: 4,
  concurrency: 0,
  perProject: 4,
  queuePerProject: 128,
  queueWaitMs: 10_000,
  exportMaxExecutionS: 300,
  exportIdleTimeoutS: 30,
  exportConcurrency: 2,
};

/** The SETTINGS clause every read ends with (numbers only: the limits are validated integers). */
export function readSettingsClause(limits: ReadLimits): string {
  return `SETTINGS max_execution_time = ${limits.maxExecutionS}, max_memory_usage = ${limits.maxMemoryBytes}, max_threads = ${limits.maxThreads}`;
}

/** The SETTINGS clause of an export: the read limits, with the export's own time limit. */
export function exportSettingsClause(limits: ReadLimits): string {
  // One thread: the rows are read in the table's order, and more threads only add streams merged back into that order,
  // each with blocks in flight (measured: at 1.5M events, 1 thread adds 99 MB at its peak, 2 threads 162 MB, 4 214 MB,
  // at the same rows/s). Blocks of at most 16,384 rows: each is one chunk on its way to the socket.
  return `${readSettingsClause({ ...limits, maxExecutionS: limits.exportMaxExecutionS, maxThreads: 1 })}, max_block_size = 16384`;
}

// ClickHouse error codes of a read stopped by its limits.
const LIMIT_OF_CODE: Record<number, 'max_execution_time' | 'max_memory_usage'> = {
  159: 'max_execution_time', // TIMEOUT_EXCEEDED
  160: 'max_execution_time', // TOO_SLOW: the estimated time is over the limit
  241: 'max_memory_usage', // MEMORY_LIMIT_EXCEEDED
};

/** A read stopped by a limit, as the 400 the caller can act on (narrow the range or the filters); else null. */
export function readLimitError(e: unknown, limits: ReadLimits): ApiError | null {
  const code = clickHouseCodeOf(e);
  const limit = code === undefined ? undefined : LIMIT_OF_CODE[code];
  return limit ? tooExpensive(limit, limits, e) : null;
}

function tooExpensive(limit: 'max_execution_time' | 'max_memory_usage', limits: ReadLimits, cause: unknown): ApiError {
  const bound = limit === 'max_execution_time' ? `${limits.maxExecutionS} s` : `${Math.round(limits.maxMemoryBytes / 2 ** 20)} MiB`;
  return new ApiError('query_too_expensive', { details: { limit, bound, message: `the query needs more than the ${bound} a read may use: narrow the time range or add filters` } }, { cause });
}

/** An export stopped by a limit (its own time limit, EXPORT_MAX_EXECUTION_S), as readLimitError; else null. */
export function exportLimitError(e: unknown, limits: ReadLimits): ApiError | null {
  return readLimitError(e, { ...limits, maxExecutionS: limits.exportMaxExecutionS });
}

/** An export whose wall time reached EXPORT_MAX_EXECUTION_S: the engine's own limit, as exportLimitError names it. */
export function exportDeadlineError(limits: ReadLimits): ApiError {
  return tooExpensive('max_execution_time', { ...limits, maxExecutionS: limits.exportMaxExecutionS }, undefined);
}

/**
 * An export whose client took nothing for the idle bound (EXPORT_IDLE_TIMEOUT_S, or less while another export waits
 * for a turn: read-side.ts). Always after the first byte (only a write waits on the client): the connection is cut.
 */
export class ExportIdleError extends Error {
  constructor(readonly idleMs: number) {
    super(`the export's client took nothing for ${idleMs} ms`);
    this.name = 'ExportIdleError';
  }
}
