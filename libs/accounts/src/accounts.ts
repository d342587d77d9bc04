import type { KeyStore, SqlPort } from '@analytics/auth';
import type { Caller, Project, Role } from '@analytics/schema';
import { Access } from './access';
import { AuditLog } from './audit-log';
import { type AccountsContext, DAY_MS, isoOf } from './context';
import type { Mailer } from './mailer';
import { McpConsent } from './mcp-consent';
import { Organizations } from './organizations';
import { PasswordHasher } from './password';
import { purgeExpiredAccounts } from './purge';
import { ReadKeys } from './read-keys';
import { Shares } from './shares';
import { SignIn } from './sign-in';
import { type FailureCounter, MemoryFailureCounter, SIGN_IN_FAILURES, SignInThrottle } from './sign-in-throttle';
import { Sessions, type UserCaller } from './sessions';
import { type OidcSettings, SingleSignOn } from './sso';

export interface AccountsOptions {
  db: SqlPort;
  keyStore: KeyStore;
  /** SESSION_IDLE_DAYS (14) and SESSION_MAX_DAYS (90). */
  sessionIdleDays?: number;
  sessionMaxDays?: number;
  /** The password hasher (PASSWORD_HASH_CONCURRENCY); tests pass cheaper parameters. */
  hasher?: PasswordHasher;
  /** Where sign-in failures are counted: this process's memory, or Redis (RedisFailureCounter) with REDIS_URL. */
  failures?: FailureCounter;
  /** Keys the HMAC of throttled emails and addresses: derived from ADMIN_TOKEN, the same on every instance. */
  throttleSecret: string;
  /** SMTP_URL and MAIL_FROM: password-reset and invitation mail. */
  mailer?: Mailer;
  /** PUBLIC_URL: the base of links in mail (unset: no reset mail is sent; invitations show their link to the inviter). */
  publicUrl?: string;
  /** Keys revoked in the store: every instance's cache drops them (InvalidationBus.keyRevoked). */
  onKeysRevoked?: (prefix: string) => void | Promise<void>;
  now?: () => number;
  /** Told of what fails in the background (a mail, an audit write); never of a secret. */
  onError?: (e: unknown, what: string) => void;
  /** OIDC_* with PUBLIC_URL: single sign-on (unset: its routes answer 404). */
  oidc?: OidcSettings;
  /** Loads openid-client (tests may count the loads); the real dynamic import by default. */
  loadOpenIdClient?: () => Promise<typeof import('openid-client')>;
}

/** Starts of single sign-on per client address (each writes a row of the key store). */
const OIDC_STARTS = { limit: 60, windowMs: 10 * 60_000 };

/**
 * People (issue 45, docs/accounts.md): users, sessions, organizations with roles, invitations, password resets, the
 * audit log and session read keys, in the key store. One instance per process, built from the opened stores; the
 * routes (apps/admin-api) and the role guard (sessionGuard) call it.
 */
export class Accounts {
  readonly ctx: AccountsContext;
  readonly sessions: Sessions;
  readonly access: Access;
  readonly orgs: Organizations;
  readonly signIn: SignIn;
  readonly readKeys: ReadKeys;
  /** Share links and their credentials (shares.ts). */
  readonly shares: Shares;
  /** The MCP OAuth consent of a signed-in person (mcp-consent.ts). */
  readonly mcpConsent: McpConsent;
  readonly audit: AuditLog;
  readonly keyStore: KeyStore;
  /** Single sign-on, when OIDC_* is set. */
  readonly sso?: SingleSignOn;
  private readonly passwordResetMail: boolean;

  constructor(options: AccountsOptions) {
    const now = options.now ?? Date.now;
    const onError = options.onError ?? (() => {});
    this.keyStore = options.keyStore;
    this.audit = new AuditLog(options.db, now, (e, action) => onError(e, `audit ${action}`));
    this.ctx = {
      db: options.db,
      now,
      hasher: options.hasher ?? new PasswordHasher(),
      audit: this.audit,
      lifetimes: { idleMs: (options.sessionIdleDays ?? 14) * DAY_MS, maxMs: (options.sessionMaxDays ?? 90) * DAY_MS },
      keysRevoked: async (prefixes) => {
        await Promise.all(prefixes.map((p) => options.onKeysRevoked?.(p)));
      },
    };
    const failures = options.failures ?? new MemoryFailureCounter(now);
    this.sessions = new Sessions(this.ctx);
    this.access = new Access(this.ctx);
    this.orgs = new Organizations(this.ctx, { mailer: options.mailer, onError: (e) => onError(e, 'invitation mail') });
    this.signIn = new SignIn({
      ctx: this.ctx,
      sessions: this.sessions,
      orgs: this.orgs,
      throttle: new SignInThrottle(failures, options.throttleSecret),
      resetThrottle: new SignInThrottle(failures, options.throttleSecret, undefined, 'reset'),
      mailer: options.mailer,
      publicUrl: options.publicUrl,
      onError,
    });
    this.readKeys = new ReadKeys(this.ctx, options.keyStore);
    // Wrong passwords of a share link: the sign-in bound, per link and per client address.
    this.shares = new Shares(this.ctx, options.keyStore, new SignInThrottle(failures, options.throttleSecret, SIGN_IN_FAILURES, 'share'));
    if (options.oidc) {
      this.sso = new SingleSignOn({
        ctx: this.ctx,
        sessions: this.sessions,
        settings: options.oidc,
        throttle: new SignInThrottle(failures, options.throttleSecret, OIDC_STARTS, 'oidc'),
        onError,
        loadClient: options.loadOpenIdClient,
      });
    }
    this.mcpConsent = new McpConsent(this.ctx, this.signIn, options.keyStore, this.sso);
    // What requestReset needs to mail a link.
    this.passwordResetMail = options.mailer !== undefined && options.publicUrl !== undefined;
  }

  /** GET /auth/config: what the sign-in and first-run pages offer. */
  async config() {
    return { setup_required: !(await this.signIn.anyUser()), sso: this.sso ? { name: this.sso.name } : null, password_reset: this.passwordResetMail };
  }

  /** The signed-in user and their organizations with their role in each (GET /auth/me). */
  async me(caller: UserCaller) {
    const orgs = await this.orgs.list(caller);
    return { user: caller.user, organizations: orgs.map(({ id, name, role }) => ({ id, name, role: role as Role })) };
  }

  /** The projects the caller may see: those of their organizations, every project for the operator. */
  projectsOf(caller: Caller): Promise<Project[]> {
    return caller.kind === 'user' ? this.keyStore.listProjectsOfUser(caller.user.id) : this.keyStore.listProjects();
  }

  /** Where the operator's project goes without an org_id: the oldest organization (none before setup). */
  async defaultOrgId(): Promise<string | null> {
    const { rows } = await this.ctx.db.query<{ id: string }>('SELECT id FROM organizations ORDER BY created_at, id LIMIT 1');
    return rows[0] ? String(rows[0].id) : null;
  }

  /** Every user with their organizations (GET /admin/users, the operator's). */
  async users() {
    const { rows } = await this.ctx.db.query(
      `SELECT u.id, u.email, u.name, u.created_at,
              COALESCE(json_agg(json_build_object('id', o.id, 'name', o.name, 'role', m.role) ORDER BY o.created_at) FILTER (WHERE o.id IS NOT NULL), '[]') AS orgs
         FROM users u LEFT JOIN memberships m ON m.user_id = u.id LEFT JOIN organizations o ON o.id = m.org_id
        GROUP BY u.id ORDER BY u.created_at, u.email`,
    );
    return rows.map((r) => ({
      id: String(r.id),
      email: String(r.email),
      name: (r.name as string | null) ?? null,
      created_at: isoOf(r.created_at),
      organizations: (typeof r.orgs === 'string' ? JSON.parse(r.orgs) : r.orgs) as Array<{ id: string; name: string; role: Role }>,
    }));
  }

  /** Deletes what has expired (purgeExpiredAccounts). */
  purge() {
    return purgeExpiredAccounts(this.ctx.db, { now: this.ctx.now(), sessionIdleDays: this.ctx.lifetimes.idleMs / DAY_MS });
  }
}
