import { type KeyStore, hashSecret, isUuid, randomBase62 } from '@analytics/auth';
import { ApiError, type Role, type User, loginInputSchema, roleAtLeast } from '@analytics/schema';
import type { AccountsContext } from './context';
import type { Client, SignIn } from './sign-in';
import type { ConsentOAuthParams, SingleSignOn } from './sso';

/** How long the project picker may be answered after the password was checked (issue 45). */
export const CONSENT_TICKET_TTL_MS = 600_000;
const TICKET_PREFIX = 'oct_';
const TICKET_SECRET_LENGTH = 43; // ~256 bits
/** Expired tickets each new ticket deletes at most (the retention job deletes the rest). */
const PURGE_BATCH = 100;

/** The OAuth request a consent is given for: a ticket is bound to it, and the audit names its client. */
export interface ConsentRequest {
  client_id: string;
  /** As the client registered itself: unverified. */
  client_name: string | null;
  redirect_uri: string;
  code_challenge: string;
}

/** A project the person may connect an agent to, under its organization and their role there. */
export interface ConsentOrg {
  id: string;
  name: string;
  role: Role;
  projects: Array<{ id: string; name: string }>;
}

/** The picker after a sign-in: the ticket to post back with the chosen project, and what may be chosen. */
export interface ConsentPicker {
  ticket: string;
  user: User;
  orgs: ConsentOrg[];
}

export type ConsentSignIn = ({ ok: true } & ConsentPicker) | { ok: false; refused: 'invalid_credentials' } | { ok: false; refused: 'rate_limited'; retry_after_s: number };

/** "Sign in with <OIDC_NAME>" pressed: the provider's authorization URL, or why not (too many starts from the address, or the provider did not answer). */
export type ConsentSsoStart = { ok: true; url: string } | { ok: false; refused: 'rate_limited'; retry_after_s: number } | { ok: false; refused: 'upstream_failed' };

/** The page again with `sso=<code>`: the picker, or `handoff` (unknown, spent, expired, or given for another OAuth request). */
export type ConsentSsoSignIn = ({ ok: true } & ConsentPicker) | { ok: false; refused: 'handoff' };

/**
 * The outcome of a pick: the read key minted for the person and project (the OAuth grant is bound to it), or why not.
 * `ticket`: unknown, used, expired, or given for another OAuth request (sign in again). `project`: not a project of
 * the person's organizations (the same ticket may pick again).
 */
export type ConsentPick =
  | { ok: true; key_prefix: string; user: User; project: { id: string; name: string } }
  | { ok: false; refused: 'ticket' }
  | ({ ok: false; refused: 'project' } & Omit<ConsentPicker, 'ticket'>);

/**
 * Connecting an MCP agent as a person (docs/mcp.md, "OAuth for connector UIs"): the consent page checks the email and
 * password (the sign-in throttle of /auth/login), then offers the projects of the person's organizations through a
 * one-time ticket, never a session token. The pick mints an `rk_` key bound to the user (no session, no expiry) on
 * which the OAuth grant is made: removing the member, deleting the project or the user, or revoking the key ends it.
 * With single sign-on (`sso`), the person may sign in with the provider instead: the sign-in is kept with the OAuth
 * request, and the callback brings the browser back to the page with a one-time code that gives the same ticket.
 */
export class McpConsent {
  constructor(
    private readonly ctx: AccountsContext,
    private readonly signIn: SignIn,
    private readonly keyStore: KeyStore,
    private readonly sso?: SingleSignOn,
  ) {}

  /** OIDC_NAME when single sign-on is configured: the page offers "Sign in with <name>". */
  get ssoName(): string | undefined {
    return this.sso?.name;
  }

  /** "Sign in with <OIDC_NAME>": the provider's URL for a sign-in bound to this OAuth request (its parameters, as the page's forms carry them). */
  async startSso(oauthRequest: ConsentOAuthParams, client: Client): Promise<ConsentSsoStart> {
    if (!this.sso) return { ok: false, refused: 'upstream_failed' };
    try {
      return { ok: true, ...(await this.sso.startForConsent(oauthRequest, client)) };
    } catch (e) {
      if (e instanceof ApiError && e.code === 'rate_limited') return { ok: false, refused: 'rate_limited', retry_after_s: Number(e.extra['retry_after_s'] ?? 60) };
      if (e instanceof ApiError && e.code === 'upstream_failed') return { ok: false, refused: 'upstream_failed' };
      throw e;
    }
  }

  /** Back from the provider with `sso=<code>`: the picker (a ticket for `request`) when the code is live and was given for this very request. */
  async completeSso(code: unknown, request: ConsentRequest): Promise<ConsentSsoSignIn> {
    const user = this.sso ? await this.sso.spendConsentHandoff(code, request) : null;
    if (!user) return { ok: false, refused: 'handoff' };
    return { ok: true, ...(await this.pickerFor(user, request)) };
  }

  /** The email and password to a picker (a ticket for `request`), or the sign-in's refusal in the same words for a wrong password and an unknown email. */
  async start(credentials: { email: unknown; password: unknown }, request: ConsentRequest, client: Client): Promise<ConsentSignIn> {
    const parsed = loginInputSchema.safeParse(credentials);
    if (!parsed.success) return { ok: false, refused: 'invalid_credentials' };
    let user: User;
    try {
      user = await this.signIn.verifyCredentials(parsed.data, client);
    } catch (e) {
      if (e instanceof ApiError && e.code === 'invalid_credentials') return { ok: false, refused: 'invalid_credentials' };
      if (e instanceof ApiError && e.code === 'rate_limited') return { ok: false, refused: 'rate_limited', retry_after_s: Number(e.extra['retry_after_s'] ?? 60) };
      throw e;
    }
    return { ok: true, ...(await this.pickerFor(user, request)) };
  }

  /** A new ticket for the user and `request`, and the projects they may pick. */
  private async pickerFor(user: User, request: ConsentRequest): Promise<ConsentPicker> {
    const ticket = TICKET_PREFIX + randomBase62(TICKET_SECRET_LENGTH);
    const now = this.ctx.now();
    await this.ctx.db.query(
      'DELETE FROM oauth_consent_tickets WHERE ticket_hash IN (SELECT ticket_hash FROM oauth_consent_tickets WHERE expires_at <= $1 LIMIT $2)',
      [new Date(now).toISOString(), PURGE_BATCH],
    );
    await this.ctx.db.query(
      'INSERT INTO oauth_consent_tickets (ticket_hash, user_id, client_id, redirect_uri, code_challenge, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [hashSecret(ticket), user.id, request.client_id, request.redirect_uri, request.code_challenge, new Date(now).toISOString(), new Date(now + CONSENT_TICKET_TTL_MS).toISOString()],
    );
    return { ticket, user, orgs: await this.orgsOf(user.id) };
  }

  /**
   * The chosen project: the ticket must be live and given for this very OAuth request; the person must be a member
   * (viewer or above) of the project's organization, checked here. The ticket is spent, an `rk_` key bound to the
   * user is minted (its secret is never shown: only the grant uses it) and `mcp.grant_created` is written.
   */
  async pick(ticket: unknown, projectId: unknown, request: ConsentRequest): Promise<ConsentPick> {
    if (typeof ticket !== 'string' || !ticket.startsWith(TICKET_PREFIX) || ticket.length > 100) return { ok: false, refused: 'ticket' };
    const hash = hashSecret(ticket);
    const binding = [hash, request.client_id, request.redirect_uri, request.code_challenge, new Date(this.ctx.now()).toISOString()];
    const live = 'ticket_hash = $1 AND client_id = $2 AND redirect_uri = $3 AND code_challenge = $4 AND expires_at > $5';
    const { rows } = await this.ctx.db.query(
      `SELECT u.id, u.email, u.name FROM oauth_consent_tickets t JOIN users u ON u.id = t.user_id
        WHERE t.ticket_hash = $1 AND t.client_id = $2 AND t.redirect_uri = $3 AND t.code_challenge = $4 AND t.expires_at > $5`,
      binding,
    );
    const row = rows[0];
    if (!row) return { ok: false, refused: 'ticket' };
    const user: User = { id: String(row.id), email: String(row.email), name: (row.name as string | null) ?? null };
    const project = await this.memberProject(user.id, projectId);
    if (!project) return { ok: false, refused: 'project', user, orgs: await this.orgsOf(user.id) };
    const spent = await this.ctx.db.query(`DELETE FROM oauth_consent_tickets WHERE ${live} RETURNING user_id`, binding);
    if (spent.rows.length === 0) return { ok: false, refused: 'ticket' };
    const minted = await this.keyStore.createKey(project.id, 'rk', 'live', { user_id: user.id });
    if (!minted) return { ok: false, refused: 'project', user, orgs: await this.orgsOf(user.id) };
    // The member may have been removed between the check and the mint, after the removal revoked their keys: the
    // membership row is locked (a removal's DELETE waits for it, then revokes this key too) or found gone (revoked here).
    const still = await this.ctx.db.transaction(async (tx) => {
      const { rows: held } = await tx.query('SELECT m.role FROM memberships m JOIN projects p ON p.org_id = m.org_id WHERE p.id = $1 AND m.user_id = $2 FOR SHARE OF m', [project.id, user.id]);
      if (held.length > 0) return true;
      await tx.query('UPDATE api_keys SET revoked_at = $2 WHERE prefix = $1 AND revoked_at IS NULL', [minted.prefix, new Date(this.ctx.now()).toISOString()]);
      return false;
    });
    if (!still) {
      await this.ctx.keysRevoked([minted.prefix]);
      return { ok: false, refused: 'project', user, orgs: await this.orgsOf(user.id) };
    }
    await this.ctx.audit.record(
      { orgOfProject: project.id },
      {
        action: 'mcp.grant_created',
        actor: { type: 'user', id: user.id, name: user.email },
        target: { type: 'project', id: project.id, name: project.name },
        details: { client: { id: request.client_id, name: request.client_name }, key: minted.prefix, access: 'read' },
      },
    );
    return { ok: true, key_prefix: minted.prefix, user, project };
  }

  /** The project if the user is a member (viewer or above) of its organization. */
  private async memberProject(userId: string, projectId: unknown): Promise<{ id: string; name: string } | null> {
    if (typeof projectId !== 'string' || !isUuid(projectId)) return null;
    const { rows } = await this.ctx.db.query<{ id: string; name: string; role: Role }>(
      'SELECT p.id, p.name, m.role FROM projects p JOIN memberships m ON m.org_id = p.org_id AND m.user_id = $2 WHERE p.id = $1',
      [projectId, userId],
    );
    const row = rows[0];
    return row && roleAtLeast(row.role, 'viewer') ? { id: String(row.id), name: String(row.name) } : null;
  }

  /** Every project the user may read (viewer or above), by organization; organizations without a project are left out. */
  private async orgsOf(userId: string): Promise<ConsentOrg[]> {
    const { rows } = await this.ctx.db.query(
      `SELECT o.id AS org_id, o.name AS org_name, m.role, p.id, p.name FROM memberships m
         JOIN organizations o ON o.id = m.org_id JOIN projects p ON p.org_id = o.id
        WHERE m.user_id = $1 ORDER BY o.created_at, o.id, p.created_at, p.id`,
      [userId],
    );
    const orgs = new Map<string, ConsentOrg>();
    for (const r of rows) {
      if (!roleAtLeast(r.role as Role, 'viewer')) continue;
      const id = String(r.org_id);
      let org = orgs.get(id);
      if (!org) orgs.set(id, (org = { id, name: String(r.org_name), role: r.role as Role, projects: [] }));
      org.projects.push({ id: String(r.id), name: String(r.name) });
    }
    return [...orgs.values()];
  }
}
