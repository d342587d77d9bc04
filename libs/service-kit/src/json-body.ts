import zlib from 'node:zlib';
import type { Transform } from 'node:stream';
import type { Request, RequestHandler, Response } from 'express';
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

export interface BodyLimits {
  /** Bytes of request bodies in flight in the whole process (a body's bytes count from their arrival until its response is sent). */
  budget: ByteBudget;
  /** How long a request may wait for room in the budget before it is answered 503 server_busy with Retry-After. */
  waitMs: number;
  /**
   * How long a body may take to arrive whole, from when its route starts reading it; past it, 408 request_timeout. A
   * body arriving at 1 MiB/s or more earns more, up to 3x (bodyReadAllowanceMs).
   */
  readTimeoutMs: number;
}

export const DEFAULT_BODY_BUDGET_BYTES = 32 * 1024 * 1024;
export const DEFAULT_BODY_WAIT_MS = 2_000;
export const DEFAULT_BODY_READ_TIMEOUT_MS = 10_000;
/**
 * A body still arriving at this rate earns more time (1 s per MiB received), up to BODY_READ_MAX_FACTOR times
 * BODY_READ_TIMEOUT_MS in all: the time a busy server takes to read a large body counts as its client's (the server
 * reads no socket while it parses another batch), so a 14 MB batch read beside 63 others must not be cut at the bare
 * deadline, while a trickle (a byte a second) still is. Apache's mod_reqtimeout MinRate, in the same spirit.
 */
export const BODY_READ_MIN_RATE_BYTES_PER_S = 1024 * 1024;
export const BODY_READ_MAX_FACTOR = 3;
/** How long a body of `received` bytes so far may take, in client time, before 408 (see BODY_READ_MIN_RATE_BYTES_PER_S). */
export const bodyReadAllowanceMs = (readTimeoutMs: number, received: number): number =>
  readTimeoutMs + Math.min((BODY_READ_MAX_FACTOR - 1) * readTimeoutMs, (received / BODY_READ_MIN_RATE_BYTES_PER_S) * 1000);

/**
 * The most one project, or one client address, may hold of a body budget of `capacity` bytes: a quarter of it, but
 * never less than the largest body (a legitimate 16 MiB batch must always fit in its own share), and never more than
 * the whole. With the default 32 MiB: 16 MiB, so one project or one address can never take more than half.
 */
export const bodyShareOf = (capacity: number): number => Math.min(capacity, Math.max(Math.floor(capacity / 4), MAX_BODY_BYTES));

/** A body budget of `capacity` bytes with the per-project and per-address share of bodyShareOf. */
export const bodyBudgetOf = (capacity: number): ByteBudget => new ByteBudget(capacity, bodyShareOf(capacity));

/** The budget of an app given no BODY_* limits (shared by such apps in one process). */
export const DEFAULT_BODY_LIMITS: BodyLimits = { budget: bodyBudgetOf(DEFAULT_BODY_BUDGET_BYTES), waitMs: DEFAULT_BODY_WAIT_MS, readTimeoutMs: DEFAULT_BODY_READ_TIMEOUT_MS };

const LIMITS_LOCAL = 'bodyLimits';

/** Mounted by the app factory before the routes: the body limits every route of the app reads through (one budget per process). */
export function withBodyLimits(limits: BodyLimits): RequestHandler {
  return (_req, res, next) => {
    res.locals[LIMITS_LOCAL] = limits;
    next();
  };
}

/**
 * How long a refused body's rest is read and dropped (nginx's lingering close): a client that sends its whole body
 * before it reads the answer (fetch, curl) then gets the 413 or 503 instead of a connection reset (EPIPE). The bytes
 * are dropped as they arrive, never held; what has not arrived by then is cut off with the connection.
 */
const LINGER_MS = 5_000;

/** Reads what is left of a refused request's body and drops it, for at most LINGER_MS; then closes the connection. */
function discardRest(req: Request): void {
  if (req.complete) return;
  const cut = setTimeout(() => req.socket.destroy(), LINGER_MS);
  cut.unref();
  req.once('end', () => clearTimeout(cut)).once('close', () => clearTimeout(cut));
  req.resume();
}

/** Stops reading the request: the connection is closed once the answer is sent. */
function closeAfterAnswer(req: Request, res: Response): void {
  res.setHeader('Connection', 'close');
  req.pause();
}

/** An error of body-parser's shape (`type`), which toApiError maps to the API's codes. */
const readError = (type: 'entity.too.large' | 'encoding.unsupported' | 'charset.unsupported' | 'entity.parse.failed' | 'request.aborted', message: string) =>
  Object.assign(new Error(message), { type });

function decoderOf(req: Request): Transform | undefined {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity') return undefined;
  if (encoding === 'gzip') return zlib.createGunzip();
  if (encoding === 'deflate') return zlib.createInflate();
  if (encoding === 'br') return zlib.createBrotliDecompress();
  // zstd where this Node has it (22.15+), as body-parser did.
  const zstd = (zlib as unknown as { createZstdDecompress?: () => Transform }).createZstdDecompress;
  if (encoding === 'zstd' && zstd) return zstd();
  throw readError('encoding.unsupported', `unsupported content encoding "${encoding}"`);
}

function decoded(body: Buffer, req: Request): string {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase() ?? 'utf-8';
  if (!charset.startsWith('utf-')) throw readError('charset.unsupported', `unsupported charset "${charset}"`);
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    throw readError('charset.unsupported', `unsupported charset "${charset}"`);
  }
}

/**
 * Reads the body of `req` within `limits`, its bytes counted in the budget as they arrive, for the request and for
 * each of `holders` (its project, its client address). A compressed body counts both its bytes on the wire and the
 * bytes it inflates to, as the decoder produces them (what sits in memory), and is cut at MAX_BODY_BYTES inflated.
 * A chunk with no room waits for it with the socket paused (at most BODY_WAIT_MS, then 503 server_busy); a body whose
 * client has not sent it whole within `readTimeoutMs` (the time it waited for room not counted) is 408 request_timeout. Every refusal releases the request's bytes at once and closes
 * the connection after the answer (the rest of the body is never read); otherwise they are released when the
 * response is sent.
 */
function readBody(req: Request, res: Response, limits: BodyLimits, holders: readonly string[]): Promise<Buffer> {
  const { budget, waitMs, readTimeoutMs } = limits;
  const decoder = decoderOf(req);
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let received = 0; // bytes off the wire, for the deadline's allowance
    let waiting = 0; // chunks waiting for room in the budget
    // The deadline counts the client's time only: while a chunk waits for room, the socket is paused by us.
    const started = Date.now();
    let waitedMs = 0;
    let waitingSince = 0;
    let ended = false;
    let settled = false;
    const releases: Array<() => void> = [];
    const releaseAll = () => {
      for (const release of releases.splice(0)) release();
    };
    res.once('close', releaseAll);

    const done = (error?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      req.off('data', onWire).off('end', onWireEnd).off('error', onAborted).off('close', onClose);
      decoder?.off('data', onBody).off('end', onBodyEnd);
      if (error === undefined) return resolve(Buffer.concat(chunks, size));
      releaseAll();
      chunks.length = 0;
      decoder?.on('error', () => undefined).destroy();
      // A client too slow or gone is cut off, and so is a body refused because the budget is full (reading it away
      // would spend the time and memory the refusal saves: 64 senders of 14 MB then met 408s); any other refusal reads
      // the rest of the body away, so its client gets the answer rather than a reset.
      if (error instanceof ApiError && (error.code === 'request_timeout' || error.code === 'server_busy')) closeAfterAnswer(req, res);
      else discardRest(req);
      reject(error);
    };
    const maybeDone = () => {
      if (ended && waiting === 0) done();
    };

    /** Counts `bytes` for this request and its holders, pausing the socket while they wait for room. */
    const count = (bytes: number) => {
      const now = budget.tryAcquire(bytes, holders);
      if (now) return void releases.push(now);
      if (waiting++ === 0) waitingSince = Date.now();
      req.pause();
      void budget.acquire(bytes, waitMs, holders).then((release) => {
        if (settled) return release?.();
        if (!release) return done(new ApiError('server_busy', { retry_after_s: 1 }));
        releases.push(release);
        if (--waiting === 0) {
          waitedMs += Date.now() - waitingSince;
          req.resume();
          maybeDone();
        }
      });
    };

    const onBody = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return done(readError('entity.too.large', 'request entity too large'));
      chunks.push(chunk);
      if (decoder) count(chunk.length); // inflated bytes; bytes off the wire are counted in onWire
    };
    const onBodyEnd = () => {
      ended = true;
      maybeDone();
    };
    const onWire = (chunk: Buffer) => {
      received += chunk.length;
      count(chunk.length);
      if (decoder) decoder.write(chunk);
      else onBody(chunk);
    };
    // The client's part is done once the last byte arrived: what follows (inflating, waiting for room) is ours, and is
    // bounded by MAX_BODY_BYTES and BODY_WAIT_MS, never answered 408.
    const onWireEnd = () => {
      clearTimeout(deadline);
      if (decoder) decoder.end();
      else onBodyEnd();
    };
    const onAborted = () => done(readError('request.aborted', 'request aborted'));
    const onClose = () => {
      if (!req.complete) onAborted();
    };

    const timedOut = () => new ApiError('request_timeout', { details: { formErrors: [`the body did not arrive whole within ${Math.round(bodyReadAllowanceMs(readTimeoutMs, received))} ms (${readTimeoutMs} ms, plus 1 s per MiB received): send it at once (this connection is closed)`], fieldErrors: {} } });
    // Time spent waiting for room is ours (bounded by BODY_WAIT_MS per wait, then 503): the deadline moves by it.
    const clientMs = () => Date.now() - started - waitedMs - (waiting > 0 ? Date.now() - waitingSince : 0);
    const onDeadline = () => {
      const left = bodyReadAllowanceMs(readTimeoutMs, received) - clientMs();
      if (left > 0) deadline = setTimeout(onDeadline, left);
      else done(timedOut());
    };
    let deadline = setTimeout(onDeadline, readTimeoutMs);
    decoder?.on('data', onBody).on('end', onBodyEnd).on('error', () => done(Object.assign(new Error('the body could not be decompressed'), { status: 400 })));
    req.on('data', onWire).on('end', onWireEnd).on('error', onAborted).on('close', onClose);
  });
}

/**
 * The JSON body of a request whose credentials were already checked (handlers call it after authentication), read
 * through the process's body budget (readBody: bytes counted as they arrive, a deadline, a share per holder). A body
 * over MAX_BODY_BYTES by its Content-Length is 413 before any byte is read; a missing body or a non-JSON Content-Type
 * is a 400 that says how to send it, not a schema error about `undefined`. An empty chunked body is `{}`.
 *
 * `holder`: who the body counts against besides its client address (`project:<id>` on key routes).
 */
export async function readJsonBody(req: Request, res: Response, holder?: string): Promise<unknown> {
  if (!hasBody(req)) throw bodyError('the request has no body: send a JSON object with Content-Type: application/json');
  if (!req.is(JSON_TYPES)) {
    const got = req.get('content-type');
    throw bodyError(`the body must be sent as JSON with Content-Type: application/json (or text/plain holding JSON, as sendBeacon sends); got ${got ? `Content-Type: ${got}` : 'no Content-Type'}`);
  }
  if (Number(req.headers['content-length']) > MAX_BODY_BYTES) {
    discardRest(req); // never held: read away while the 413 goes out
    throw readError('entity.too.large', 'request entity too large');
  }
  const limits = (res.locals[LIMITS_LOCAL] as BodyLimits | undefined) ?? DEFAULT_BODY_LIMITS;
  const holders = [`address:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`, ...(holder === undefined ? [] : [holder])];
  const text = decoded(await readBody(req, res, limits, holders), req);
  if (text.length === 0) return (req.body = {});
  try {
    return (req.body = JSON.parse(text) as unknown);
  } catch {
    throw readError('entity.parse.failed', 'body is not valid JSON');
  }
}
