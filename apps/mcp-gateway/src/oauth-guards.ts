import cors from 'cors';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { InvalidClientError, InvalidRequestError, type OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { CLIENT_METADATA_LIMITS, type ClientAuthentication, type OAuthStore, clientMetadataProblem, redirectUriProblem } from '@analytics/auth';

// Checks the SDK's mcpAuthRouter does not make, mounted before it on the same paths; its parsers find the body read and skip it.

const oauthError = (res: Response, error: { error: string; error_description?: string }) => res.status(400).set('Cache-Control', 'no-store').json(error);
const answer = (res: Response, e: OAuthError) => oauthError(res, e.toResponseObject());

/** Runs an express body parser, handing its error to `onError` instead of the app's error middleware. */
const parseWith = (parser: RequestHandler, onError: (res: Response, err: unknown) => void) => (req: Request, res: Response, next: NextFunction) =>
  parser(req, res, (err?: unknown) => (err ? onError(res, err) : next()));

const isTooLarge = (err: unknown) => (err as { type?: unknown }).type === 'entity.too.large';

/** The form body of /authorize, /token and /revoke, as the SDK's handlers read it. */
const formBody = () => parseWith(express.urlencoded({ extended: false }), (res) => answer(res, new InvalidRequestError('the form could not be read')));

/** POST /register: RFC 7591 refusals for over-size metadata and unsafe redirect URIs, before anything is stored. */
export function registrationGuard(): RequestHandler[] {
  const parse = parseWith(express.json({ limit: CLIENT_METADATA_LIMITS.bytes }), (res, err) =>
    oauthError(res, { error: 'invalid_client_metadata', error_description: isTooLarge(err) ? `the client metadata is over ${CLIENT_METADATA_LIMITS.bytes} bytes` : 'the client metadata is not a JSON object' }),
  );
  const check: RequestHandler = (req, res, next) => {
    if (req.body === undefined) return next();
    const refusal = clientMetadataProblem(req.body);
    if (refusal) return void oauthError(res, { error: refusal.error, error_description: refusal.description });
    next();
  };
  return [cors(), parse, check];
}

/**
 * GET|POST /authorize: the redirect URI the code would go to must pass the registration rules too (clients registered
 * before them included). Refused here as a plain 400: the SDK would report later errors by redirecting to that URI.
 */
export function authorizeGuard(store: OAuthStore): RequestHandler[] {
  const check: RequestHandler = async (req, res, next) => {
    const params = (req.method === 'POST' ? req.body : req.query) as Record<string, unknown> | undefined;
    const clientId = params?.['client_id'];
    const requested = params?.['redirect_uri'];
    if (typeof clientId !== 'string' || (requested !== undefined && typeof requested !== 'string')) return next();
    const registered = (await store.getClient(clientId))?.['redirect_uris'];
    const uri = requested ?? (Array.isArray(registered) && registered.length === 1 ? registered[0] : undefined);
    const problem = typeof uri === 'string' ? redirectUriProblem(uri) : undefined;
    if (problem) return void answer(res, new InvalidRequestError(`redirect_uri ${problem}`));
    next();
  };
  return [formBody(), check];
}

const CLIENT_REFUSALS: Record<Extract<ClientAuthentication, { refused: string }>['refused'], string> = {
  unknown_client: 'Invalid client_id',
  secret_required: 'Client secret is required',
  wrong_secret: 'Invalid client_secret',
  secret_expired: 'Client secret has expired',
};

/**
 * POST /token and /revoke: client authentication against the stored secret hash (constant time). The clients store
 * hands the SDK metadata without a secret, so the SDK's own check (a plain-text comparison) has nothing to compare.
 */
export function clientAuthentication(store: OAuthStore): RequestHandler[] {
  const check: RequestHandler = async (req, res, next) => {
    const { client_id: clientId, client_secret: secret } = (req.body ?? {}) as Record<string, unknown>;
    if (typeof clientId !== 'string') return next();
    const outcome = await store.authenticateClient(clientId, typeof secret === 'string' ? secret : undefined);
    if ('refused' in outcome) return void answer(res, new InvalidClientError(CLIENT_REFUSALS[outcome.refused]));
    next();
  };
  return [cors(), formBody(), check];
}
