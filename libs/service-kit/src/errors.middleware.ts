import type { ErrorRequestHandler } from 'express';
import { ApiError, UpstreamUnavailableError } from '@analytics/schema';
import type { Logger } from './logger';
import { recordErrorCode } from './metrics';
import { redactPath } from './redact';

// Node and driver codes that mean "the store could not be reached", as opposed to "the store said no".
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', '57P01', '57P03',
]);

export function isUnreachable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    if (e instanceof UpstreamUnavailableError) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
    if (e instanceof AggregateError && e.errors.some(isUnreachable)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** Turns anything thrown into an ApiError. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const bodyParser = error as { type?: string; status?: number };
  if (bodyParser?.type === 'entity.too.large') return new ApiError('payload_too_large');
  if (bodyParser?.type === 'encoding.unsupported' || bodyParser?.type === 'charset.unsupported') {
    const what = bodyParser.type === 'encoding.unsupported' ? 'Content-Encoding' : 'charset';
    const supported = what === 'Content-Encoding' ? 'identity, gzip, deflate, br or zstd' : 'utf-8';
    return new ApiError('unsupported_encoding', { details: { formErrors: [`this ${what} is not supported: send ${supported}`], fieldErrors: {} } });
  }
  if (bodyParser?.type === 'entity.parse.failed') {
    return new ApiError('invalid_payload', { details: { formErrors: ['body is not valid JSON'], fieldErrors: {} } });
  }
  if (bodyParser?.status === 400 || bodyParser?.type === 'request.aborted') {
    return new ApiError('invalid_payload', { details: { formErrors: ['malformed request body'], fieldErrors: {} } });
  }
  if (isUnreachable(error)) return new ApiError('upstream_failed', {}, { cause: error });
  return new ApiError('internal_error', {}, { cause: error });
}

/** The one error middleware: `{ error, ...extra }`; 5xx logged with the request id, 4xx are answers, not log errors. */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const apiError = toApiError(err);
    if (apiError.status >= 500) {
      const cause = apiError.code === 'internal_error' || apiError.code === 'upstream_failed' ? (apiError.cause ?? err) : err;
      logger.error({ reqId: res.locals.reqId, method: req.method, path: redactPath(req.path), code: apiError.code, err: cause }, 'request failed');
    }
    if (res.headersSent) return;
    recordErrorCode(res, apiError.code);
    if (typeof apiError.extra.retry_after_s === 'number') {
      res.setHeader('Retry-After', String(apiError.extra.retry_after_s));
    }
    res.status(apiError.status).json(apiError.toBody());
  };
}
