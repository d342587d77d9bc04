import express, { type Request, type RequestHandler, type Response } from 'express';
import { ApiError } from '@analytics/schema';
import { ByteBudget } from './byte-budget';

/** Largest body: a 1000-event batch with every field at its limit (8 KB properties, three 2 KB URLs, ids) fits. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

// sendBeacon can only send text/plain without a preflight, so that type is JSON too.
const JSON_TYPES = ['application/json', 'application/*+json', 'text/plain'];

const bodyError = (message: string) => new ApiError('invalid_payload', { details: { formErrors: [message], fieldErrors: {} } });

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * JSON bodies up to MAX_BODY_BYTES. Mounted on each route AFTER its credential check, so a refused request's body is
 * never buffered or parsed (Node discards the unread rest). A missing body or a non-JSON Content-Type is a 400 that
 * says how to send it, not a schema error about `undefined`.
 */
export function jsonBody(): RequestHandler {
  const parse = express.json({ limit: MAX_BODY_BYTES, type: JSON_TYPES, strict: false });
  return (req, res, next) => {
    if (!hasBody(req)) return next(bodyError('the request has no body: send a JSON object with Content-Type: application/json'));
    if (!req.is(JSON_TYPES)) {
      const got = req.get('content-type');
      return next(bodyError(`the body must be sent as JSON with Content-Type: application/json (or text/plain holding JSON, as sendBeacon sends); got ${got ? `Content-Type: ${got}` : 'no Content-Type'}`));
    }
    return parse(req, res, next);
  };
}

const parseJson = jsonBody();

export interface BodyLimits {
  /** Bytes of request bodies in flight in the whole process (a body counts until its response is sent). */
  budget: ByteBudget;
  /** How long a request may wait for its share before it is answered 503 server_busy with Retry-After. */
  waitMs: number;
}

export const DEFAULT_BODY_BUDGET_BYTES = 32 * 1024 * 1024;
export const DEFAULT_BODY_WAIT_MS = 2_000;
/** The budget of an app given no BODY_* limits (shared by such apps in one process). */
export const DEFAULT_BODY_LIMITS: BodyLimits = { budget: new ByteBudget(DEFAULT_BODY_BUDGET_BYTES), waitMs: DEFAULT_BODY_WAIT_MS };

const LIMITS_LOCAL = 'bodyLimits';

/** Mounted by the app factory before the routes: the body limits every route of the app reads through (one budget per process). */
export function withBodyLimits(limits: BodyLimits): RequestHandler {
  return (_req, res, next) => {
    res.locals[LIMITS_LOCAL] = limits;
    next();
  };
}

/**
 * What a body may become in memory: its Content-Length, or the largest body the parser admits when that says nothing
 * of the parsed size: a chunked body, or a compressed one (gzip inflates ~1000x; the parser's limit counts inflated bytes).
 */
function reservedBytes(req: Request, declared: number): number {
  const encoding = req.headers['content-encoding'];
  const compressed = encoding !== undefined && encoding.trim().toLowerCase() !== 'identity';
  return Number.isFinite(declared) && !compressed ? declared : MAX_BODY_BYTES;
}

/**
 * The JSON body of a request whose credentials were already checked (handlers call it after authentication). What it
 * may become (reservedBytes) is taken from the process's budget until the response is sent; a request that cannot get
 * it in time is 503 server_busy, never an out-of-memory crash.
 */
export async function readJsonBody(req: Request, res: Response): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  // Bodies over the limit are refused by the parser from their Content-Length alone, before any byte is read.
  if (!(declared > MAX_BODY_BYTES)) {
    const { budget, waitMs } = (res.locals[LIMITS_LOCAL] as BodyLimits | undefined) ?? DEFAULT_BODY_LIMITS;
    const release = await budget.acquire(reservedBytes(req, declared), waitMs);
    if (!release) throw new ApiError('server_busy', { retry_after_s: 1 });
    res.once('close', release);
  }
  return new Promise((resolve, reject) => {
    parseJson(req, res, (err?: unknown) => (err ? reject(err) : resolve(req.body)));
  });
}
