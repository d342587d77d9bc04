import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { type SqlQueryable, hashSecret, randomBase62 } from '@analytics/auth';
import { ApiError, type Role, type User, emailSchema } from '@analytics/schema';
import type { AccountsContext } from './context';
import type { SessionAnswer, Sessions } from './sessions';
import { userOf } from './sessions';
import type { Client } from './sign-in';
import type { SignInThrottle } from './sign-in-throttle';

/** The settings of single sign-on (OIDC_* and PUBLIC_URL; docs/accounts.md, "Single sign-on (OIDC)"). */
export interface OidcSettings {
  /** OIDC_ISSUER: discovered at the first POST /auth/oidc/start (`<issuer>/.well-known/openid-configuration`). */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** OIDC_NAME: the button reads "Sign in with <name>". */
  name: string;
  /** OIDC_ORG: the organization a first sign-in joins (created when missing). */
  org: string;
  /** OIDC_DEFAULT_ROLE: the role it joins with (never owner). */
  defaultRole: Exclude<Role, 'owner'>;
  /** OIDC_ALLOWED_DOMAINS: the email domains that may sign in (lower case; empty: any). */
  allowedDomains: readonly string[];
  /** PUBLIC_URL: the redirect URI is `<publicUrl>/auth/oidc/callback`, the browser comes back to `<publicUrl>/#sso=…`. */
  publicUrl: string;
}

/** The scopes asked for (issue 45). */
export const OIDC_SCOPES = 'openid email profile';
/** From POST /auth/oidc/start to the callback. */
export const OIDC_LOGIN_TTL_MS = 10 * 60_000;
/** From the callback to POST /auth/oidc/complete: the one-time code rides in the fragment for this long at most. */
export const OIDC_HANDOFF_TTL_MS = 60_000;

/**
 * The parameters of the MCP OAuth request (GET /authorize) a sign-in from the consent page was started for, as the
 * page's forms carry them: client_id, redirect_uri, code_challenge, and the others it came with (state, scope, ...).
 */
export type ConsentOAuthParams = Readonly<Record<string, string>> & { readonly client_id: string; readonly redirect_uri: string; readonly code_challenge: string };

/** Why a callback sends the browser back with `#sso_error=<reason>` (docs/accounts.md), or to /authorize with `sso_error=<reason>`. */
export type SsoErrorReason = 'invalid_state' | 'access_denied' | 'sign_in_failed' | 'upstream_failed' | 'email_not_verified' | 'domain_not_allowed' | 'setup_required';

class SsoRefusal extends Error {
  constructor(
    readonly reason: SsoErrorReason,
    options?: { cause?: unknown },
  ) {
    super(reason, options);
  }
}

type OpenIdClient = typeof import('openid-client');
type Configuration = import('openid-client').Configuration;

/**
 * openid-client is ESM only and our code runs as CommonJS (the esbuild bundles, jest through swc): a real dynamic
 * import, which esbuild keeps as it is for an external package and swc keeps with `ignoreDynamic` (jest.preset.cjs).
 */
export const loadOpenIdClient = (): Promise<OpenIdClient> => import('openid-client');

// Serialises the first sign-ins of new users: two at once must not create OIDC_ORG twice.
const SSO_CREATE_LOCK_ID = 727_046;
const HANDOFF_PREFIX = 'sso_';
const HANDOFF_SECRET_LENGTH = 43;

/** base64url (no padding) SHA-256 of the browser's secret: what POST /auth/oidc/start's `binding` must be. */
export const bindingOf = (secret: string): string => createHash('sha256').update(secret).digest('base64url');

const sameBinding = (secret: string, stored: string): boolean => {
  const given = Buffer.from(bindingOf(secret));
  const expected = Buffer.from(stored);
  return given.length === expected.length && timingSafeEqual(given, expected);
};

/** Whether a provider says the email is verified: `email_verified` (OIDC Core), or Entra ID's `xms_edov` (the domain owner verified it). */
const isVerified = (v: unknown): boolean => v === true || v === 'true';

/** A failure to reach the provider (fetch's TypeError, a timeout), as opposed to an answer that refused. */
const isNetworkFailure = (e: unknown): boolean =>
  e instanceof TypeError || (e instanceof Error && (e.name === 'AbortError' || e.name === 'TimeoutError' || /fetch failed|ECONNREFUSED|ENOTFOUND|ETIMEDOUT/.test(e.message)));

export interface SingleSignOnDeps {
  ctx: AccountsContext;
  sessions: Sessions;
  settings: OidcSettings;
  /** Starts per client address (each writes a row): 429 past the bound. */
  throttle: SignInThrottle;
  /** Told of a provider that failed or refused (the reason only; never a code, a token or a secret). */
  onError: (e: unknown, what: string) => void;
  loadClient?: () => Promise<OpenIdClient>;
}

/**
 * Single sign-on with an OpenID provider (authorization code flow with PKCE S256, state and nonce, through the
 * certified openid-client), without a cookie. The browser that starts keeps a random secret and sends its SHA-256 (the
 * binding); the provider comes back to the callback, which checks everything, finds or creates the user and sends the
 * browser to `<PUBLIC_URL>/#sso=<one-time code>`; that browser trades the code and its secret for a session token in a
 * POST body. A code read from an address bar, a history or a log is worth nothing without the secret, and is spent
 * within a minute. Every step is in the key store, so any admin-api instance serves any step.
 */
export class SingleSignOn {
  private configuration?: Promise<Configuration>;

  constructor(private readonly deps: SingleSignOnDeps) {}

  get name(): string {
    return this.deps.settings.name;
  }

  get redirectUri(): string {
    return `${this.deps.settings.publicUrl}/auth/oidc/callback`;
  }

  private get ctx() {
    return this.deps.ctx;
  }

  private client(): Promise<OpenIdClient> {
    return (this.deps.loadClient ?? loadOpenIdClient)();
  }

  /** The provider's metadata, discovered once (lazily: the service starts while the provider is down); a failure is retried next time. */
  private async config(): Promise<Configuration> {
    if (!this.configuration) {
      const { issuer, clientId, clientSecret } = this.deps.settings;
      const attempt = (async () => {
        const oc = await this.client();
        const url = new URL(issuer);
        // http only for a loopback issuer (the config refuses any other): a provider run on this machine, as in the tests.
        return oc.discovery(url, clientId, clientSecret, undefined, { timeout: 10, ...(url.protocol === 'http:' ? { execute: [oc.allowInsecureRequests] } : {}) });
      })();
      this.configuration = attempt;
      attempt.catch(() => {
        if (this.configuration === attempt) this.configuration = undefined;
      });
    }
    try {
      return await this.configuration;
    } catch (e) {
      this.deps.onError(e, 'OIDC discovery');
      throw new ApiError('upstream_failed', { details: 'the OpenID provider (OIDC_ISSUER) did not answer its discovery document' }, { cause: e });
    }
  }

  /** POST /auth/oidc/start: the provider's authorization URL; the state, nonce, verifier and binding kept OIDC_LOGIN_TTL_MS. */
  start(binding: string, client: Client): Promise<{ url: string }> {
    return this.begin({ binding, oauthRequest: null }, client);
  }

  /**
   * "Sign in with <name>" on the MCP OAuth consent page: the provider's authorization URL, the sign-in kept with the
   * OAuth request instead of a binding (the page has no script to keep a secret). The callback sends the browser back
   * to `<PUBLIC_URL>/authorize?<request>&sso=<code>`, and only spendConsentHandoff, for that very request, spends it.
   */
  startForConsent(oauthRequest: ConsentOAuthParams, client: Client): Promise<{ url: string }> {
    return this.begin({ binding: null, oauthRequest }, client);
  }

  private async begin(bound: { binding: string; oauthRequest: null } | { binding: null; oauthRequest: ConsentOAuthParams }, client: Client): Promise<{ url: string }> {
    const keys = this.deps.throttle.keys('', client.address);
    await this.deps.throttle.check(keys, 'address');
    const config = await this.config();
    const oc = await this.client();
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const nonce = oc.randomNonce();
    const now = this.ctx.now();
    await this.deps.throttle.failed(keys);
    // Expired starts go as new ones come: the table holds at most OIDC_LOGIN_TTL_MS of starts (the purge takes the rest).
    await this.ctx.db.query('DELETE FROM oidc_logins WHERE expires_at < $1', [new Date(now - OIDC_LOGIN_TTL_MS).toISOString()]);
    await this.ctx.db.query('INSERT INTO oidc_logins (state_hash, nonce, code_verifier, binding, oauth_request, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      hashSecret(state),
      nonce,
      verifier,
      bound.binding,
      bound.oauthRequest === null ? null : JSON.stringify(bound.oauthRequest),
      new Date(now).toISOString(),
      new Date(now + OIDC_LOGIN_TTL_MS).toISOString(),
    ]);
    const url = oc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: OIDC_SCOPES,
      code_challenge: await oc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href };
  }

  /**
   * GET /auth/oidc/callback: where to send the browser. `<PUBLIC_URL>/#sso=<code>` once the provider's answer passed
   * every check (state, PKCE, ID token and nonce, a verified email of an allowed domain), else `#sso_error=<reason>`.
   * A sign-in started on the MCP consent page goes back to it instead: `<PUBLIC_URL>/authorize?<its OAuth request>&sso=<code>`,
   * or `&sso_error=<reason>` (a state that names no sign-in under way cannot say which page: the dashboard's, as before).
   */
  async callback(search: URLSearchParams): Promise<string> {
    const base = this.deps.settings.publicUrl;
    const login: { oauthRequest?: Record<string, string> } = {};
    const back = (param: 'sso' | 'sso_error', value: string) =>
      login.oauthRequest ? `${base}/authorize?${new URLSearchParams({ ...login.oauthRequest, [param]: value }).toString()}` : `${base}/#${param}=${value}`;
    try {
      return back('sso', await this.finish(search, login));
    } catch (e) {
      if (e instanceof SsoRefusal) {
        if (e.cause !== undefined) this.deps.onError(e.cause, `OIDC callback (${e.reason})`);
        return back('sso_error', e.reason);
      }
      this.deps.onError(e, 'OIDC callback');
      return back('sso_error', 'sign_in_failed');
    }
  }

  /** The handoff code of a sign-in that passed every check; `login.oauthRequest` is set as soon as the sign-in under way is found (a consent page's). */
  private async finish(search: URLSearchParams, login: { oauthRequest?: Record<string, string> }): Promise<string> {
    const state = search.get('state');
    if (!state) throw new SsoRefusal('invalid_state');
    const nowIso = new Date(this.ctx.now()).toISOString();
    // The state is spent by the first callback that names it, whatever comes next: a replayed answer finds nothing.
    const { rows } = await this.ctx.db.query<{ nonce: string; code_verifier: string; oauth_request: unknown }>(
      'UPDATE oidc_logins SET state_used_at = $2 WHERE state_hash = $1 AND state_used_at IS NULL AND expires_at > $2 RETURNING nonce, code_verifier, oauth_request',
      [hashSecret(state), nowIso],
    );
    const started = rows[0];
    if (!started) throw new SsoRefusal('invalid_state');
    login.oauthRequest = oauthRequestOf(started.oauth_request);
    const error = search.get('error');
    if (error) throw new SsoRefusal(error === 'access_denied' ? 'access_denied' : 'sign_in_failed');

    let config: Configuration;
    try {
      config = await this.config();
    } catch (e) {
      throw new SsoRefusal('upstream_failed', { cause: e });
    }
    const oc = await this.client();
    const current = new URL(this.redirectUri);
    current.search = search.toString();
    let claims: Record<string, unknown>;
    try {
      const tokens = await oc.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: started.code_verifier,
        expectedState: state,
        expectedNonce: started.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (!idClaims) throw new Error('no ID token');
      claims = { ...idClaims };
      // Providers that keep the email out of the ID token give it at the userinfo endpoint (for the same subject).
      if (typeof claims.email !== 'string' || (claims.email_verified === undefined && claims.xms_edov === undefined)) {
        const info = await oc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
        claims = { ...info, ...claims, email: claims.email ?? info.email, email_verified: claims.email_verified ?? info.email_verified };
      }
    } catch (e) {
      throw new SsoRefusal(isNetworkFailure(e) ? 'upstream_failed' : 'sign_in_failed', { cause: e });
    }

    const email = emailSchema.safeParse(claims.email);
    if (!email.success || !(isVerified(claims.email_verified) || isVerified(claims.xms_edov))) throw new SsoRefusal('email_not_verified');
    const domain = email.data.slice(email.data.lastIndexOf('@') + 1);
    const allowed = this.deps.settings.allowedDomains;
    if (allowed.length > 0 && !allowed.includes(domain)) throw new SsoRefusal('domain_not_allowed');
    const name = typeof claims.name === 'string' && claims.name.trim() ? claims.name.trim().slice(0, 200).replaceAll('\u0000', '') : undefined;

    const user = await this.findOrCreateUser(email.data, name);
    const handoff = `${HANDOFF_PREFIX}${randomBase62(HANDOFF_SECRET_LENGTH)}`;
    await this.ctx.db.query('UPDATE oidc_logins SET handoff_hash = $2, user_id = $3, handoff_expires_at = $4 WHERE state_hash = $1', [
      hashSecret(state),
      hashSecret(handoff),
      user.id,
      new Date(this.ctx.now() + OIDC_HANDOFF_TTL_MS).toISOString(),
    ]);
    return handoff;
  }

  /**
   * The user of a verified email: the existing one (an account made with a password or an invitation signs in too), or a
   * new one without a password, added to OIDC_ORG (created when missing) with OIDC_DEFAULT_ROLE. Refused while no user
   * exists at all: the first user is the owner that POST /auth/setup makes.
   */
  private async findOrCreateUser(email: string, name: string | undefined): Promise<User> {
    const byEmail = async (q: SqlQueryable) => {
      const { rows } = await q.query('SELECT id, email, name FROM users WHERE email = $1', [email]);
      return rows[0] ? userOf(rows[0]) : undefined;
    };
    const existing = await byEmail(this.ctx.db);
    if (existing) return existing;
    const { org, defaultRole } = this.deps.settings;
    return this.ctx.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [SSO_CREATE_LOCK_ID]);
      const again = await byEmail(tx);
      if (again) return again;
      const { rows: any } = await tx.query('SELECT EXISTS (SELECT 1 FROM users) AS any');
      if (any[0]?.any !== true) throw new SsoRefusal('setup_required');
      const now = new Date(this.ctx.now()).toISOString();
      const user: User = { id: randomUUID(), email, name: name ?? null };
      await tx.query('INSERT INTO users (id, email, name, password_hash, created_at) VALUES ($1, $2, $3, NULL, $4)', [user.id, email, user.name, now]);
      const { rows } = await tx.query<{ id: string }>('SELECT id FROM organizations WHERE name = $1 ORDER BY created_at, id LIMIT 1', [org]);
      let orgId = rows[0] ? String(rows[0].id) : undefined;
      if (!orgId) {
        orgId = randomUUID();
        await tx.query('INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)', [orgId, org, now]);
        await this.ctx.audit.record({ org: orgId }, { action: 'org.created', actor: { type: 'system', id: null, name: 'single sign-on' }, target: { type: 'org', id: orgId, name: org }, details: { oidc: true } }, tx);
      }
      await tx.query('INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4) ON CONFLICT (org_id, user_id) DO NOTHING', [orgId, user.id, defaultRole, now]);
      return user;
    });
  }

  /**
   * POST /auth/oidc/complete: the fragment's one-time code and the secret of the binding for a session, as a password
   * sign-in answers. An unknown, spent or expired code, or another secret: 401 invalid_credentials (a wrong secret does
   * not spend the code: whoever read it from an address cannot spoil the sign-in of the browser that holds the secret).
   */
  async complete(input: { code: string; secret: string }, client: Client): Promise<SessionAnswer> {
    const answer = await this.ctx.db.transaction(async (tx) => {
      const { rows } = await tx.query(
        `SELECT l.state_hash, l.binding, l.user_id, l.handoff_expires_at, l.handoff_used_at, u.email, u.name
           FROM oidc_logins l JOIN users u ON u.id = l.user_id WHERE l.handoff_hash = $1 AND l.binding IS NOT NULL FOR UPDATE OF l`,
        [hashSecret(input.code)],
      );
      const row = rows[0];
      const now = this.ctx.now();
      if (!row || row.handoff_used_at || new Date(row.handoff_expires_at as string).getTime() <= now || !sameBinding(input.secret, String(row.binding))) {
        throw new ApiError('invalid_credentials');
      }
      await tx.query('UPDATE oidc_logins SET handoff_used_at = $2 WHERE state_hash = $1', [row.state_hash, new Date(now).toISOString()]);
      return this.deps.sessions.create(userOf(row, row.user_id), client.userAgent, tx);
    });
    const { user } = answer;
    await this.ctx.audit.record({ orgsOfUser: user.id }, { action: 'user.signed_in', actor: { type: 'user', id: user.id, name: user.email }, target: { type: 'user', id: user.id, name: user.email }, details: { method: 'oidc' } });
    return answer;
  }

  /**
   * GET /authorize with `sso=<code>` (the MCP consent page): the user of a sign-in started there for this very OAuth
   * request (same client_id, redirect_uri and code_challenge), spending its code; null for an unknown, spent or
   * expired code, a dashboard sign-in's code, or another request's (which does not spend it: whoever copies the
   * address into another request can neither use the code nor spoil the sign-in it belongs to). No session is made.
   */
  async spendConsentHandoff(code: unknown, request: { client_id: string; redirect_uri: string; code_challenge: string }): Promise<User | null> {
    if (typeof code !== 'string' || !code.startsWith(HANDOFF_PREFIX) || code.length > 100) return null;
    const { rows } = await this.ctx.db.query(
      `UPDATE oidc_logins l SET handoff_used_at = $5 FROM users u
        WHERE l.handoff_hash = $1 AND u.id = l.user_id AND l.oauth_request IS NOT NULL AND l.handoff_used_at IS NULL AND l.handoff_expires_at > $5
          AND l.oauth_request->>'client_id' = $2 AND l.oauth_request->>'redirect_uri' = $3 AND l.oauth_request->>'code_challenge' = $4
        RETURNING u.id, u.email, u.name`,
      [hashSecret(code), request.client_id, request.redirect_uri, request.code_challenge, new Date(this.ctx.now()).toISOString()],
    );
    return rows[0] ? userOf(rows[0]) : null;
  }
}

/** The stored OAuth request of a consent page's sign-in (jsonb: an object from node-postgres and PGlite, text from others), or undefined for a dashboard's. */
function oauthRequestOf(stored: unknown): Record<string, string> | undefined {
  const value: unknown = typeof stored === 'string' ? JSON.parse(stored) : stored;
  if (value === null || value === undefined || typeof value !== 'object') return undefined;
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
}
