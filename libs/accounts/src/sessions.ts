import { verifySecret, type SqlQueryable } from '@analytics/auth';
import { ApiError, type Caller, type User } from '@analytics/schema';
import { type AccountsContext, isoOf } from './context';
import { mintSessionToken, parseSessionToken } from './tokens';

/** A new session as the sign-in routes answer it. */
export interface SessionAnswer {
  token: string;
  expires_at: string;
  user: User;
}

export type UserCaller = Extract<Caller, { kind: 'user' }>;

// last_used_at is written at most this often per session: the idle expiry counts in days, a write per request would
// make every admin read a write.
const TOUCH_EVERY_MS = 60_000;
const USER_AGENT_MAX = 256;

export const userOf = (row: Record<string, unknown>, id = row.id): User => ({ id: String(id), email: String(row.email), name: (row.name as string | null) ?? null });

/**
 * Sessions of user tokens: created on sign-in, checked against the store on every request (so ending one, or the
 * password change that ends the others, holds at once on every instance), ended by sign-out, by the user, by a
 * password change or reset. Idle expiry is last use plus SESSION_IDLE_DAYS, never past the absolute SESSION_MAX_DAYS.
 */
export class Sessions {
  constructor(private readonly ctx: AccountsContext) {}

  private endOf(row: Record<string, unknown>): number {
    return Math.min(new Date(row.last_used_at as string).getTime() + this.ctx.lifetimes.idleMs, new Date(row.expires_at as string).getTime());
  }

  /** A new session of `user` (inside the caller's transaction when given). */
  async create(user: User, userAgent: string | undefined, q: SqlQueryable = this.ctx.db): Promise<SessionAnswer> {
    const minted = mintSessionToken();
    const now = this.ctx.now();
    const expires = now + this.ctx.lifetimes.maxMs;
    await q.query('INSERT INTO sessions (id, user_id, secret_hash, user_agent, created_at, last_used_at, expires_at) VALUES ($1, $2, $3, $4, $5, $5, $6)', [
      minted.id,
      user.id,
      minted.secretHash,
      userAgent ? userAgent.slice(0, USER_AGENT_MAX) : null,
      new Date(now).toISOString(),
      new Date(expires).toISOString(),
    ]);
    return { token: minted.token, expires_at: new Date(Math.min(now + this.ctx.lifetimes.idleMs, expires)).toISOString(), user };
  }

  /** The user of a live session token; anything else (malformed, unknown, wrong secret, ended, expired) is 401 invalid_session. */
  async authenticate(token: string): Promise<UserCaller> {
    const parsed = parseSessionToken(token);
    if (!parsed) throw new ApiError('invalid_session');
    const { rows } = await this.ctx.db.query(
      `SELECT s.id, s.user_id, s.secret_hash, s.last_used_at, s.expires_at, s.ended_at, u.email, u.name
         FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = $1`,
      [parsed.id],
    );
    const row = rows[0];
    if (!row || !verifySecret(parsed.secret, String(row.secret_hash)) || row.ended_at) throw new ApiError('invalid_session');
    const now = this.ctx.now();
    if (now >= this.endOf(row)) throw new ApiError('invalid_session');
    let lastUsed = new Date(row.last_used_at as string).getTime();
    if (now - lastUsed >= TOUCH_EVERY_MS) {
      lastUsed = now;
      await this.ctx.db.query('UPDATE sessions SET last_used_at = $2 WHERE id = $1', [parsed.id, new Date(now).toISOString()]);
    }
    const expiresAt = new Date(this.endOf({ last_used_at: lastUsed, expires_at: row.expires_at })).toISOString();
    return { kind: 'user', user: userOf(row, row.user_id), session: { id: parsed.id, expires_at: expiresAt }, token };
  }

  /** The live sessions of a user, newest first; `current` marks the caller's. */
  async list(caller: UserCaller) {
    const { rows } = await this.ctx.db.query(
      'SELECT id, user_agent, created_at, last_used_at, expires_at FROM sessions WHERE user_id = $1 AND ended_at IS NULL AND expires_at > $2 ORDER BY created_at DESC, id',
      [caller.user.id, new Date(this.ctx.now()).toISOString()],
    );
    return rows
      .filter((r) => this.endOf(r) > this.ctx.now())
      .map((r) => ({
        id: String(r.id),
        created_at: isoOf(r.created_at),
        last_used_at: isoOf(r.last_used_at),
        expires_at: new Date(this.endOf(r)).toISOString(),
        user_agent: (r.user_agent as string | null) ?? null,
        current: r.id === caller.session.id,
      }));
  }

  /**
   * Ends sessions of one user (`only`: those ids; `except`: all but that id) and revokes their read keys on every
   * instance (after the change is committed: a cache refilled before it would keep the key); returns the ids ended.
   */
  async end(userId: string, which: { only: readonly string[] } | { except?: string }): Promise<string[]> {
    const q = this.ctx.db;
    const now = new Date(this.ctx.now()).toISOString();
    const { rows } =
      'only' in which
        ? await q.query<{ id: string }>('UPDATE sessions SET ended_at = $3 WHERE user_id = $1 AND id = ANY($2::text[]) AND ended_at IS NULL RETURNING id', [userId, which.only, now])
        : await q.query<{ id: string }>('UPDATE sessions SET ended_at = $3 WHERE user_id = $1 AND id <> $2 AND ended_at IS NULL RETURNING id', [userId, which.except ?? '', now]);
    const ended = rows.map((r) => String(r.id));
    if (ended.length > 0) {
      const keys = await q.query<{ prefix: string }>('UPDATE api_keys SET revoked_at = $2 WHERE session_id = ANY($1::text[]) AND revoked_at IS NULL RETURNING prefix', [ended, now]);
      await this.ctx.keysRevoked(keys.rows.map((r) => String(r.prefix)));
    }
    return ended;
  }
}
