/** Every error code the API can answer with, and its HTTP status. The `error` string is the contract. */
export const ERROR_STATUS = {
  invalid_payload: 400,
  invalid_params: 400,
  invalid_group_by: 400,
  query_too_expensive: 400,
  invalid_token: 400,
  missing_bearer_token: 401,
  malformed_api_key: 401,
  invalid_api_key: 401,
  key_kind_mismatch: 401,
  invalid_session: 401,
  unauthorized: 401,
  invalid_credentials: 401,
  origin_not_allowed: 403,
  insufficient_scope: 403,
  forget_requires_secret_key: 403,
  insufficient_role: 403,
  not_found: 404,
  method_not_allowed: 405,
  // A body not whole within BODY_READ_TIMEOUT_MS of when its route started reading it; the connection is closed after it.
  request_timeout: 408,
  already_set_up: 409,
  not_empty: 409,
  last_owner: 409,
  already_member: 409,
  // Saved goals, funnels and segments (docs/saved-and-shared.md): a name the kind already has in the project, and the
  // 201st definition of a kind in a project.
  name_taken: 409,
  limit_reached: 409,
  payload_too_large: 413,
  unsupported_encoding: 415,
  rate_limited: 429,
  internal_error: 500,
  forget_failed: 500,
  upstream_failed: 502,
  not_ready: 503,
  server_busy: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The one error type of the service: rendered as `{ error: code, ...extra }` with the code's status. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly extra: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    // An answer, not a fault: no stack trace to capture (a flood of refused keys made that its largest cost); a 5xx
    // keeps the stack of its cause.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(code, options);
    Error.stackTraceLimit = limit;
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }

  toBody(): Record<string, unknown> {
    return { error: this.code, ...this.extra };
  }
}

/**
 * A backing store (event store, key store) could not be reached or stopped answering, as opposed to an answer it gave:
 * the error middleware maps it to 502 upstream_failed with `instanceof`.
 */
export class UpstreamUnavailableError extends Error {
  constructor(
    readonly store: 'event store' | 'key store',
    cause: unknown,
  ) {
    super(`${store} unreachable`, { cause });
    this.name = 'UpstreamUnavailableError';
  }
}
