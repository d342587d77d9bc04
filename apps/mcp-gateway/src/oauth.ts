import { type RequestHandler, type Response, Router } from 'express';
import { LRUCache } from 'lru-cache';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthClientInformationFull, OAuthTokenRevocationRequest, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { type Authenticator, type OAuthStore, type OAuthTokens as StoredTokens, type RefreshOutcome, pkceVerifierMatches, scopeOf } from '@analytics/auth';
import { ApiError, OAUTH_ROUTES, oauthPath } from '@analytics/schema';
import { MemoryRateLimiter, logRouteAs, publicBaseUrl } from '@analytics/service-kit';
import type { McpConsent } from '@analytics/accounts';
import { authorizePage, oauthParamsOf, pickerPage, refusal } from './oauth-consent';
import { authorizeGuard, clientAuthentication, registrationGuard } from './oauth-guards';
import { type RegistrationOptions, registerHandler } from './oauth-register';

/** RFC 9728 metadata at the root, as the issue and most clients ask for it (the SDK serves the `/mcp`-suffixed path). */
export const PROTECTED_RESOURCE_PATH = oauthPath('oauthProtectedResource');
/** The paths this router answers: libs/schema's OAUTH_ROUTES, which the proxy routes to mcp-gateway too. */
const OAUTH_PATHS: ReadonlySet<string> = new Set(OAUTH_ROUTES.map((r) => r.path));

const RESOURCE_NAME = 'Event analytics (MCP)';
const SCOPES = ['read', 'ingest'];
// The SDK's default: 100 requests per 15 minutes per caller on /authorize, /token, /register and /revoke.
const OAUTH_RATE = { ratePerS: 100 / 900, burst: 100 };

/**
 * The MCP SDK's authorization-server provider over our key store: a token stands for a key, the one the owner pasted,
 * or (with `consent`: people accounts) the read key minted for the person who signed in and picked a project.
 */
export class KeyOAuthProvider implements OAuthServerProvider {
  readonly clientsStore: OAuthRegisteredClientsStore;
  /** exchangeAuthorizationCode takes the code out before it checks the verifier, so a wrong code_verifier spends it. */
  readonly skipLocalPkceValidation = true;

  constructor(
    private readonly store: OAuthStore,
    private readonly authenticator: Authenticator,
    private readonly consent?: McpConsent,
  ) {
    this.clientsStore = {
      // Never a secret (the store keeps its hash): clientAuthentication checks it before the SDK's handlers run.
      getClient: async (id) => ((await store.getClient(id)) as OAuthClientInformationFull | null) ?? undefined,
      // Defined so that the metadata names /register; registerHandler answers it (with the caps) before the SDK would.
      registerClient: () => {
        throw new Error('registrations go through registerHandler (oauth-register.ts), which answers POST /register first');
      },
    };
  }

  /**
   * GET shows the page; a POST carries one of its forms: `api_key` (a pasted key), `email` and `password` (a sign-in:
   * the project picker follows), `sso_start` (single sign-on: 303 to the provider, which comes back to GET /authorize
   * with `sso=<one-time code>`, or `sso_error=<reason>`, through admin-api's callback), or `ticket` and `project_id`
   * (the pick). Each ends in the redirect with a code, or the page again with the refusal in words.
   */
  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    const body = (res.req.method === 'POST' ? res.req.body : undefined) as Record<string, unknown> | undefined;
    // No framing (the fields must not be clickjacked), nothing loaded; no form-action: it would block the redirect.
    const send = (html: string) =>
      res
        .status(200)
        .type('html')
        .set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'" })
        .send(html);
    const consent = this.consent;
    const sso = consent?.ssoName;
    const page = (keyError?: string, signIn: { error?: string; email?: string } = {}) => send(authorizePage(client, params, keyError, consent ? { ...signIn, sso } : undefined));
    const request = { client_id: client.client_id, client_name: client.client_name ?? null, redirect_uri: params.redirectUri, code_challenge: params.codeChallenge };
    const query = res.req.method === 'GET' ? (res.req.query as Record<string, unknown>) : undefined;

    if (consent && sso !== undefined && query?.['sso'] !== undefined) {
      const signedIn = await consent.completeSso(query['sso'], request);
      if (signedIn.ok) return void send(pickerPage(client, params, signedIn));
      return void page(undefined, { error: `This sign-in with ${sso} has expired, was already used, or was started for another connection: sign in again.` });
    }
    if (consent && sso !== undefined && query?.['sso_error'] !== undefined) return void page(undefined, { error: ssoRefusal(query['sso_error'], sso) });
    if (consent && sso !== undefined && body?.['sso_start'] !== undefined) {
      const started = await consent.startSso(oauthParamsOf(client, params), { address: res.req.ip, userAgent: undefined });
      if (started.ok) {
        res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
        return void res.redirect(303, started.url);
      }
      const error =
        started.refused === 'rate_limited'
          ? `Too many sign-ins started from here: try again in ${Math.ceil(started.retry_after_s / 60)} minute${started.retry_after_s > 60 ? 's' : ''}.`
          : `${sso} did not answer: try again later, or sign in with your email and password.`;
      return void page(undefined, { error });
    }

    if (consent && body?.['ticket'] !== undefined) {
      const picked = await consent.pick(body['ticket'], body['project_id'], request);
      if (picked.ok) return this.redirectWithCode(client, params, res, picked.key_prefix);
      if (picked.refused === 'ticket') return void page(undefined, { error: 'This sign-in has expired or was already used: sign in again.' });
      return void send(pickerPage(client, params, { ticket: String(body['ticket']), user: picked.user, orgs: picked.orgs, error: 'Pick one of the projects listed here.' }));
    }
    if (consent && (body?.['email'] !== undefined || body?.['password'] !== undefined)) {
      const email = typeof body['email'] === 'string' ? body['email'].slice(0, 254) : '';
      const signedIn = await consent.start({ email: body['email'], password: body['password'] }, request, { address: res.req.ip, userAgent: undefined });
      if (signedIn.ok) return void send(pickerPage(client, params, signedIn));
      const error =
        signedIn.refused === 'rate_limited'
          ? `Too many failed sign-ins: try again in ${Math.ceil(signedIn.retry_after_s / 60)} minute${signedIn.retry_after_s > 60 ? 's' : ''}.`
          : 'Unknown email or wrong password.';
      return void page(undefined, { error, email });
    }
    if (body?.['api_key'] === undefined) return void page();
    let kind: string;
    let prefix: string;
    try {
      ({ kind, prefix } = await this.authenticator.resolve(`Bearer ${String(body['api_key']).trim()}`));
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return void page(refusal(e));
      throw e;
    }
    if (kind === 'pk') return void page('A pk_ key is the public browser key: paste an rk_ key (read) or an sk_ key (track events).');
    await this.redirectWithCode(client, params, res, prefix);
  }

  /** The consent is given for the key `prefix`: back to the client with a code (and its state). */
  private async redirectWithCode(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response, prefix: string): Promise<void> {
    const code = await this.store.createCode({ client_id: client.client_id, key_prefix: prefix, code_challenge: params.codeChallenge, redirect_uri: params.redirectUri, resource: params.resource?.href ?? null });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.redirect(302, target.href);
  }

  // Part of the provider interface; the SDK skips it while skipLocalPkceValidation is set.
  async challengeForAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<string> {
    const found = await this.store.findCode(code, client.client_id);
    if (!found) throw new InvalidGrantError('unknown or expired authorization code');
    return found.code_challenge;
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string, verifier?: string, redirectUri?: string): Promise<OAuthTokens> {
    const grant = await this.store.consumeCode(code, client.client_id);
    if (!grant) throw new InvalidGrantError('unknown, used or expired authorization code, or its key was revoked');
    if (!pkceVerifierMatches(verifier, grant.code_challenge)) throw new InvalidGrantError('code_verifier does not match the challenge; the code is spent');
    if (redirectUri !== undefined && redirectUri !== grant.redirect_uri) throw new InvalidGrantError('redirect_uri differs from the authorization request');
    return asTokens(await this.store.issueTokens(grant));
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string): Promise<OAuthTokens> {
    const outcome = await this.store.refreshTokens(refreshToken, client.client_id);
    if ('refused' in outcome) throw new InvalidGrantError(REFRESH_REFUSALS[outcome.refused]);
    return asTokens(outcome.tokens);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const access = await this.store.resolveAccessToken(token);
    if (!access) throw new InvalidTokenError('unknown or expired token, or its key was revoked');
    return { token, clientId: access.client_id, scopes: [scopeOf(access.kind)], expiresAt: Math.floor(access.expires_at / 1000), extra: { projectId: access.project.id } };
  }

  async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    await this.store.revokeToken(request.token, client.client_id);
  }
}

/** Why the sign-in with the provider failed (admin-api's callback names the reason: docs/accounts.md, "Errors"), in words. */
function ssoRefusal(reason: unknown, name: string): string {
  switch (reason) {
    case 'access_denied':
      return `The sign-in was declined at ${name}.`;
    case 'upstream_failed':
      return `${name} could not be reached: try again later.`;
    case 'email_not_verified':
      return `${name} did not give a verified email address for you.`;
    case 'domain_not_allowed':
      return `Your email's domain may not sign in here.`;
    case 'setup_required':
      return 'Nobody has set this service up yet: its owner signs up first.';
    case 'invalid_state':
      return 'This sign-in has expired or was already used: sign in again.';
    default:
      return `${name} did not sign you in: try again.`;
  }
}

const REFRESH_REFUSALS: Record<Extract<RefreshOutcome, { refused: string }>['refused'], string> = {
  unknown: 'unknown, used or expired refresh token',
  reused: 'refresh token already used: every token of this grant is revoked',
  key_revoked: 'the API key behind this grant was revoked',
};

const asTokens = (t: StoredTokens): OAuthTokens => ({ access_token: t.access_token, token_type: 'bearer', expires_in: t.expires_in, refresh_token: t.refresh_token });

/**
 * The OAuth 2.1 authorization server of /mcp (SDK `mcpAuthRouter`): metadata, registration, /authorize, /token,
 * /revoke. Its metadata names absolute URLs: PUBLIC_URL's, else one router per validated base URL a request arrives on;
 * the SDK refuses plain-http issuers other than localhost, whose requests fall through to 404. `registration`: the
 * per-address cap of /register (oauth-register.ts). `consent`: the sign-in and project picker of the consent page
 * (people accounts); without it the page takes a pasted key only.
 */
export function createOAuthRouter(store: OAuthStore, authenticator: Authenticator, options: { publicUrl?: string; registration: RegistrationOptions; consent?: McpConsent }): RequestHandler {
  const { publicUrl } = options;
  const provider = new KeyOAuthProvider(store, authenticator, options.consent);
  const limiter = new MemoryRateLimiter();
  const byBase = new LRUCache<string, { router: RequestHandler } | { refused: true }>({ max: 16 });
  const build = (base: string) => {
    try {
      const resourceServerUrl = new URL('/mcp', base);
      const router = Router();
      router.post('/register', registrationGuard(), registerHandler(store, options.registration));
      router.all('/authorize', authorizeGuard(store));
      router.post(['/token', '/revoke'], clientAuthentication(store));
      router.use(mcpAuthRouter({
        provider, issuerUrl: new URL(base), resourceServerUrl, resourceName: RESOURCE_NAME, scopesSupported: SCOPES,
        authorizationOptions: { rateLimit: false }, tokenOptions: { rateLimit: false }, clientRegistrationOptions: { rateLimit: false }, revocationOptions: { rateLimit: false },
      }));
      router.use(PROTECTED_RESOURCE_PATH, metadataHandler({ resource: resourceServerUrl.href, authorization_servers: [new URL(base).href], scopes_supported: SCOPES, resource_name: RESOURCE_NAME }));
      return { router };
    } catch {
      return { refused: true as const };
    }
  };
  return async (req, res, next) => {
    if (!OAUTH_PATHS.has(req.path)) return next();
    // Logged as the fixed path it matched: never a query string, code or token.
    logRouteAs(res, req.path);
    // One bucket per caller across every base URL (the SDK's own limiters would be rebuilt per router).
    if (!req.path.startsWith('/.well-known/')) {
      const { allowed, retryAfterS } = await limiter.take(`oauth:${req.ip ?? ''}`, OAUTH_RATE);
      if (!allowed) {
        res.set('Retry-After', String(retryAfterS));
        throw new ApiError('rate_limited', { retry_after_s: retryAfterS });
      }
    }
    const base = publicBaseUrl(req, publicUrl);
    let entry = byBase.get(base);
    if (!entry) byBase.set(base, (entry = build(base)));
    if ('refused' in entry) return next();
    entry.router(req, res, next);
  };
}
