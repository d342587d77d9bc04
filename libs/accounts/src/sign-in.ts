import { randomUUID } from 'node:crypto';
import type { SqlQueryable } from '@analytics/auth';
import { ApiError, type SetupInput, type User } from '@analytics/schema';
import { actorOf } from './audit-log';
import type { AccountsContext } from './context';
import type { SignInThrottle } from './sign-in-throttle';
import type { Mailer } from './mailer';
import { passwordResetMail } from './mails';
import type { Organizations } from './organizations';
import { type SessionAnswer, type Sessions, type UserCaller, userOf } from './sessions';
import { linkTokenHash, mintLinkToken } from './tokens';

/** How long a password-reset link works (issue 45). */
export const RESET_TTL_MS = 3_600_000;

/** Who is signing in: the client address (throttling only; never stored) and the User-Agent (kept with the session). */
export interface Client {
  address: string | undefined;
  userAgent: string | undefined;
}

// Serialises concurrent POST /auth/setup calls: exactly one finds no user.
const SETUP_LOCK_ID = 727_045;

const invalidToken = (reason: 'unknown' | 'used' | 'expired') => new ApiError('invalid_token', { details: { reason } });
const fieldError = (field: string, message: string) => new ApiError('invalid_payload', { details: { formErrors: [], fieldErrors: { [field]: [message] } } });

export interface SignInDeps {
  ctx: AccountsContext;
  sessions: Sessions;
  orgs: Organizations;
  throttle: SignInThrottle;
  /** Password-reset requests per account and address (every request counts, not only failures). */
  resetThrottle: SignInThrottle;
  mailer?: Mailer;
  /** Where reset mails link to (PUBLIC_URL: never a request's Host, which anyone can set). */
  publicUrl?: string;
  onError: (e: unknown, what: string) => void;
}

/**
 * Everything that signs a person in or changes their password: setup, sign-in, password change and reset, and the
 * acceptance of an invitation. A wrong password and an unknown email cost the same hashing and the same throttle
 * count and give the same 401 invalid_credentials; a reset request answers 202 whatever the email.
 */
export class SignIn {
  constructor(private readonly deps: SignInDeps) {}

  private get ctx() {
    return this.deps.ctx;
  }

  private async userByEmail(email: string, q: SqlQueryable = this.ctx.db) {
    const { rows } = await q.query('SELECT id, email, name, password_hash FROM users WHERE email = $1', [email]);
    return rows[0] ? { user: userOf(rows[0]), passwordHash: (rows[0].password_hash as string | null) ?? null } : undefined;
  }

  private async createUser(q: SqlQueryable, email: string, name: string | undefined, passwordHash: string): Promise<User> {
    const user = { id: randomUUID(), email, name: name ?? null };
    await q.query('INSERT INTO users (id, email, name, password_hash, created_at) VALUES ($1, $2, $3, $4, $5)', [user.id, email, user.name, passwordHash, new Date(this.ctx.now()).toISOString()]);
    return user;
  }

  /**
   * The first user (POST /auth/setup, with ADMIN_TOKEN): owner of a new organization "Default" that receives every
   * project without one; 409 already_set_up once any user exists.
   */
  async setup(input: SetupInput, client: Client): Promise<SessionAnswer> {
    if (await this.anyUser()) throw new ApiError('already_set_up');
    const passwordHash = await this.ctx.hasher.hash(input.password);
    return this.ctx.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [SETUP_LOCK_ID]);
      if (await this.anyUser(tx)) throw new ApiError('already_set_up');
      const user = await this.createUser(tx, input.email, input.name, passwordHash);
      const caller: UserCaller = { kind: 'user', user, session: { id: '', expires_at: '' }, token: '' };
      const org = await this.deps.orgs.create(caller, 'Default', tx);
      const { rows } = await tx.query('UPDATE projects SET org_id = $1 WHERE org_id IS NULL RETURNING id', [org.id]);
      await this.ctx.audit.record({ org: org.id }, { action: 'user.signed_in', actor: actorOf(caller), target: { type: 'user', id: user.id, name: user.email }, details: { setup: true, projects: rows.length } }, tx);
      return this.deps.sessions.create(user, client.userAgent, tx);
    });
  }

  async anyUser(q: SqlQueryable = this.ctx.db): Promise<boolean> {
    const { rows } = await q.query('SELECT EXISTS (SELECT 1 FROM users) AS any');
    return rows[0]?.any === true;
  }

  /** Email and password to a new session; 401 invalid_credentials; 429 past the failures bound (checked before hashing). */
  async login(input: { email: string; password: string }, client: Client): Promise<SessionAnswer> {
    const user = await this.checkPassword(input.email, input.password, client);
    await this.rehashIfOld(user.id, input.password, user.passwordHash);
    const answer = await this.deps.sessions.create(user.user, client.userAgent);
    await this.ctx.audit.record({ orgsOfUser: user.user.id }, { action: 'user.signed_in', actor: { type: 'user', id: user.user.id, name: user.user.email }, target: { type: 'user', id: user.user.id, name: user.user.email }, details: {} });
    return answer;
  }

  /**
   * The user of an email and password without starting a session (the MCP OAuth consent page, mcp-consent.ts): the same
   * throttle, hashing and answers as `login` (401 invalid_credentials for a wrong password and an unknown email alike,
   * 429 rate_limited past 10 failures).
   */
  async verifyCredentials(input: { email: string; password: string }, client: Client): Promise<User> {
    const user = await this.checkPassword(input.email, input.password, client);
    await this.rehashIfOld(user.id, input.password, user.passwordHash);
    return user.user;
  }

  /** The user whose password this is, or 401 invalid_credentials (counted per account and address) / 429. */
  private async checkPassword(email: string, password: string, client: Client) {
    const keys = this.deps.throttle.keys(email, client.address);
    await this.deps.throttle.check(keys);
    const found = await this.userByEmail(email);
    const ok = found ? await this.ctx.hasher.verify(password, found.passwordHash) : await this.ctx.hasher.verifyNothing(password);
    if (!found || !ok) {
      await this.deps.throttle.failed(keys);
      // Not awaited: an unknown email, which has no entry to write, must not answer sooner.
      if (found) void this.ctx.audit.record({ orgsOfUser: found.user.id }, { action: 'user.sign_in_failed', actor: { type: 'user', id: found.user.id, name: found.user.email }, target: { type: 'user', id: found.user.id, name: found.user.email }, details: {} });
      throw new ApiError('invalid_credentials');
    }
    await this.deps.throttle.succeeded(keys);
    return { user: found.user, id: found.user.id, passwordHash: found.passwordHash };
  }

  private async rehashIfOld(userId: string, password: string, stored: string | null): Promise<void> {
    if (!this.ctx.hasher.needsRehash(stored)) return;
    await this.ctx.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [userId, await this.ctx.hasher.hash(password)]);
  }

  /** A new password for the signed-in user; every other session of theirs ends (and its read keys). */
  async changePassword(caller: UserCaller, input: { current_password: string; new_password: string }, client: Client): Promise<void> {
    await this.checkPassword(caller.user.email, input.current_password, client);
    await this.ctx.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [caller.user.id, await this.ctx.hasher.hash(input.new_password)]);
    await this.deps.sessions.end(caller.user.id, { except: caller.session.id });
    await this.ctx.audit.record({ orgsOfUser: caller.user.id }, { action: 'user.password_changed', actor: actorOf(caller), target: { type: 'user', id: caller.user.id, name: caller.user.email }, details: {} });
  }

  /** A one-time reset link valid RESET_TTL_MS for an existing user (the token rides in the fragment: never in a log or a Referer). */
  async resetLink(email: string, baseUrl: string): Promise<{ user: User; reset_url: string; expires_at: string } | undefined> {
    const found = await this.userByEmail(email);
    if (!found) return undefined;
    const { token, hash } = mintLinkToken('rst');
    const now = this.ctx.now();
    const expiresAt = new Date(now + RESET_TTL_MS).toISOString();
    await this.ctx.db.query('INSERT INTO password_resets (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)', [hash, found.user.id, new Date(now).toISOString(), expiresAt]);
    return { user: found.user, reset_url: `${baseUrl}/#reset=${token}`, expires_at: expiresAt };
  }

  /**
   * POST /auth/password-reset: 429 past the bound per address; otherwise 202 whatever the email. The lookup and the mail
   * happen after the answer, so its time says nothing about the account either; without mail or PUBLIC_URL nothing is sent
   * (the operator's `npm run admin -- reset-password` prints a link instead).
   */
  async requestReset(email: string, client: Client): Promise<void> {
    const keys = this.deps.resetThrottle.keys(email, client.address);
    await this.deps.resetThrottle.check(keys, 'address');
    const accountBlocked = await this.deps.resetThrottle.accountBlocked(keys);
    await this.deps.resetThrottle.failed(keys);
    const { mailer, publicUrl } = this.deps;
    if (accountBlocked || !mailer || !publicUrl) return;
    void (async () => {
      const link = await this.resetLink(email, publicUrl);
      if (link) await mailer.send({ to: link.user.email, ...passwordResetMail({ link: link.reset_url, expiresAt: link.expires_at }) });
    })().catch((e: unknown) => this.deps.onError(e, 'password-reset mail'));
  }

  /** The reset link's token and a new password: every session of the user ends, a new one starts. */
  async confirmReset(input: { token: string; password: string }, client: Client): Promise<SessionAnswer> {
    const passwordHash = await this.ctx.hasher.hash(input.password);
    const user = await this.ctx.db.transaction(async (tx) => {
      const { rows } = await tx.query('SELECT r.user_id, r.expires_at, r.used_at, u.email, u.name FROM password_resets r JOIN users u ON u.id = r.user_id WHERE r.token_hash = $1 FOR UPDATE OF r', [
        linkTokenHash(input.token),
      ]);
      const row = rows[0];
      if (!row) throw invalidToken('unknown');
      if (row.used_at) throw invalidToken('used');
      if (new Date(row.expires_at as string).getTime() <= this.ctx.now()) throw invalidToken('expired');
      // Every link of the user is spent: the first one used ends them all.
      await tx.query('UPDATE password_resets SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL', [row.user_id, new Date(this.ctx.now()).toISOString()]);
      await tx.query('UPDATE users SET password_hash = $2 WHERE id = $1', [row.user_id, passwordHash]);
      return userOf(row, row.user_id);
    });
    await this.deps.sessions.end(user.id, {});
    await this.ctx.audit.record({ orgsOfUser: user.id }, { action: 'user.password_reset', actor: { type: 'user', id: user.id, name: user.email }, target: { type: 'user', id: user.id, name: user.email }, details: {} });
    return this.deps.sessions.create(user, client.userAgent);
  }

  /**
   * Joins the invitation's organization with its role. The invited email decides who joins: the signed-in caller when
   * that is their email (they keep their token), an existing account that gives its password, or a new account made
   * with the password given. One use, 7 days: 400 invalid_token otherwise.
   */
  async acceptInvitation(input: { token: string; password?: string; name?: string }, caller: UserCaller | undefined, client: Client): Promise<SessionAnswer> {
    const hash = linkTokenHash(input.token);
    const { rows } = await this.ctx.db.query('SELECT id, org_id, email, role, expires_at, accepted_at FROM invitations WHERE token_hash = $1', [hash]);
    const invitation = rows[0];
    if (!invitation) throw invalidToken('unknown');
    if (invitation.accepted_at) throw invalidToken('used');
    if (new Date(invitation.expires_at as string).getTime() <= this.ctx.now()) throw invalidToken('expired');
    const email = String(invitation.email);

    if (caller && caller.user.email === email) {
      await this.join(invitation, caller.user);
      return { token: caller.token, expires_at: caller.session.expires_at, user: caller.user };
    }
    if (input.password === undefined) throw fieldError('password', `required: the password of ${email}, or a new one for a new account`);
    const existing = await this.userByEmail(email);
    let user: User;
    if (existing) {
      user = (await this.checkPassword(email, input.password, client)).user;
      await this.join(invitation, user);
    } else {
      const passwordHash = await this.ctx.hasher.hash(input.password);
      user = await this.ctx.db.transaction(async (tx) => {
        const created = await this.createUser(tx, email, input.name, passwordHash);
        await this.join(invitation, created, tx);
        return created;
      });
    }
    return this.deps.sessions.create(user, client.userAgent);
  }

  private async join(invitation: Record<string, unknown>, user: User, q?: SqlQueryable): Promise<void> {
    const run = async (tx: SqlQueryable) => {
      const { rows } = await tx.query('UPDATE invitations SET accepted_at = $2 WHERE id = $1 AND accepted_at IS NULL RETURNING id', [invitation.id, new Date(this.ctx.now()).toISOString()]);
      if (!rows[0]) throw invalidToken('used');
      await tx.query('INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4) ON CONFLICT (org_id, user_id) DO NOTHING', [
        invitation.org_id,
        user.id,
        invitation.role,
        new Date(this.ctx.now()).toISOString(),
      ]);
      await this.ctx.audit.record(
        { org: String(invitation.org_id) },
        { action: 'invitation.accepted', actor: { type: 'user', id: user.id, name: user.email }, target: { type: 'invitation', id: String(invitation.id), name: user.email }, details: { role: invitation.role } },
        tx,
      );
    };
    await (q ? run(q) : this.ctx.db.transaction(run));
  }
}
