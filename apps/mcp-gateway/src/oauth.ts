import { type Request, type RequestHandler, type Response, Router } from 'express';
import { LRUCache } from 'lru-cache';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthClientInformationFull, OAuthTokenRevocationRequest, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { type Authenticator, type OAuthStore, type OAuthTokens as StoredTokens, scopeOf } from '@analytics/auth';
import { ApiError } from '@analytics/schema';
import { MemoryRateLimiter } from '@analytics/service-kit';

/** RFC 9728 metadata at the root, as the issue and most clients ask for it (the SDK serves the `/mcp`-suffixed path). */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';
const OAUTH_PATHS = new Set([PROTECTED_RESOURCE_PATH, `${PROTECTED_RESOURCE_PATH}/mcp`, '/.well-known/oauth-authorization-server', '/authorize', '/token', '/register', '/revoke']);

/** The public base URL a request reached (`TRUST_PROXY` decides whether X-Forwarded-Proto/Host count). */
export const baseUrlOf = (req: Request): string => `${req.protocol}://${req.get('host') ?? 'localhost'}`;

const RESOURCE_NAME = 'Event analytics (MCP)';
const SCOPES = ['read', 'ingest'];
// The SDK's default: 100 requests per 15 minutes per caller on /authorize, /token, /register and /revoke.
const OAUTH_RATE = { ratePerS: 100 / 900, burst: 100 };

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Why a pasted key was refused, in words for the site owner. */
function refusal(e: unknown): string {
  const code = e instanceof ApiError ? e.code : 'invalid_api_key';
  if (code === 'missing_bearer_token') return 'Paste a key.';
  if (code === 'malformed_api_key') return 'That is not an API key: keys look like rk_live_… or sk_live_….';
  return 'That key is unknown or revoked: check it in your project (npm run admin -- projects) or create a new one.';
}

/** The consent page: one form that posts the key back to /authorize with the OAuth parameters it came with. */
export function authorizePage(client: OAuthClientInformationFull, params: AuthorizationParams, error?: string): string {
  const hidden: Record<string, string | undefined> = {
    client_id: client.client_id,
    redirect_uri: params.redirectUri,
    response_type: 'code',
    code_challenge: params.codeChallenge,
    code_challenge_method: 'S256',
    state: params.state,
    scope: params.scopes?.length ? params.scopes.join(' ') : undefined,
    resource: params.resource?.href,
  };
  const inputs = Object.entries(hidden)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
    .join('\n');
  const name = escapeHtml(client.client_name ?? client.client_id);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Connect ${name} to your analytics</title>
<style>body{font:16px system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}input[name=api_key]{width:100%;padding:.5rem;font:inherit}button{margin-top:1rem;padding:.5rem 1rem;font:inherit}.error{color:#b00020}</style></head>
<body><h1>Connect ${name}</h1>
<p>${name} asks to use your analytics through MCP. Paste an <code>rk_</code> key to let it read your project's statistics, or an <code>sk_</code> key to let it record events. It gets exactly what the key allows, until the key is revoked.</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/authorize">
${inputs}
<label for="api_key">API key</label>
<input id="api_key" name="api_key" type="password" autocomplete="off" required>
<button type="submit">Connect</button>
</form></body></html>`;
}

/** The MCP SDK's authorization-server provider over our key store: a token stands for the key the owner pasted. */
export class KeyOAuthProvider implements OAuthServerProvider {
  readonly clientsStore: OAuthRegisteredClientsStore;

  constructor(
    private readonly store: OAuthStore,
    private readonly authenticator: Authenticator,
  ) {
    this.clientsStore = {
      getClient: async (id) => ((await store.getClient(id)) as OAuthClientInformationFull | null) ?? undefined,
      registerClient: async (client) => {
        const full = client as OAuthClientInformationFull;
        await store.saveClient(full.client_id, { ...full });
        return full;
      },
    };
  }

  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    const body = (res.req.method === 'POST' ? res.req.body : undefined) as { api_key?: unknown } | undefined;
    // No framing (the key field must not be clickjacked), nothing loaded; no form-action: it would block the redirect.
    const page = (error?: string) =>
      res.status(200).type('html').set({ 'Cache-Control': 'no-store', 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'" }).send(authorizePage(client, params, error));
    if (body?.api_key === undefined) return void page();
    let kind: string;
    let prefix: string;
    try {
      ({ kind, prefix } = await this.authenticator.resolve(`Bearer ${String(body.api_key).trim()}`));
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return void page(refusal(e));
      throw e;
    }
    if (kind === 'pk') return void page('A pk_ key is the public browser key: paste an rk_ key (read) or an sk_ key (track events).');
    const code = await this.store.createCode({ client_id: client.client_id, key_prefix: prefix, code_challenge: params.codeChallenge, redirect_uri: params.redirectUri, resource: params.resource?.href ?? null });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.redirect(302, target.href);
  }

  async challengeForAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<string> {
    const found = await this.store.findCode(code, client.client_id);
    if (!found) throw new InvalidGrantError('unknown or expired authorization code');
    return found.code_challenge;
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string, _verifier?: string, redirectUri?: string): Promise<OAuthTokens> {
    const grant = await this.store.consumeCode(code, client.client_id);
    if (!grant) throw new InvalidGrantError('unknown, used or expired authorization code');
    if (redirectUri !== undefined && redirectUri !== grant.redirect_uri) throw new InvalidGrantError('redirect_uri differs from the authorization request');
    return asTokens(await this.store.issueTokens(grant));
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string): Promise<OAuthTokens> {
    const grant = await this.store.consumeRefreshToken(refreshToken, client.client_id);
    if (!grant) throw new InvalidGrantError('unknown, used or expired refresh token');
    return asTokens(await this.store.issueTokens(grant));
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

const asTokens = (t: StoredTokens): OAuthTokens => ({ access_token: t.access_token, token_type: 'bearer', expires_in: t.expires_in, refresh_token: t.refresh_token });

/**
 * The OAuth 2.1 authorization server of /mcp (SDK `mcpAuthRouter`): metadata, registration, /authorize, /token,
 * /revoke. Its metadata names absolute URLs, so one router is built per public base URL a request arrives on; the SDK
 * refuses plain-http issuers other than localhost, whose requests fall through to 404.
 */
export function createOAuthRouter(store: OAuthStore, authenticator: Authenticator): RequestHandler {
  const provider = new KeyOAuthProvider(store, authenticator);
  const limiter = new MemoryRateLimiter();
  const byBase = new LRUCache<string, { router: RequestHandler } | { refused: true }>({ max: 16 });
  const build = (base: string) => {
    try {
      const resourceServerUrl = new URL('/mcp', base);
      const router = Router();
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
    // One bucket per caller across every base URL (the SDK's own limiters would be rebuilt per router).
    if (!req.path.startsWith('/.well-known/')) {
      const { allowed, retryAfterS } = await limiter.take(`oauth:${req.ip ?? ''}`, OAUTH_RATE);
      if (!allowed) {
        res.set('Retry-After', String(retryAfterS));
        throw new ApiError('rate_limited', { retry_after_s: retryAfterS });
      }
    }
    const base = baseUrlOf(req);
    let entry = byBase.get(base);
    if (!entry) byBase.set(base, (entry = build(base)));
    if ('refused' in entry) return next();
    entry.router(req, res, next);
  };
}
