import express, { type Request, type RequestHandler, type Response } from 'express';
import { ApiError } from '@analytics/schema';

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

/** The JSON body of a request whose credentials were already checked (handlers call it after authentication). */
export function readJsonBody(req: Request, res: Response): Promise<unknown> {
  return new Promise((resolve, reject) => {
    parseJson(req, res, (err?: unknown) => (err ? reject(err) : resolve(req.body)));
  });
}
