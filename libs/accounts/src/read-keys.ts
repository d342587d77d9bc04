import type { KeyStore } from '@analytics/auth';
import { ApiError, type Caller } from '@analytics/schema';
import type { AccountsContext } from './context';
import type { UserCaller } from './sessions';

/** How long a session's read key lives at most (never past its session's current end). */
export const READ_KEY_TTL_MS = 3_600_000;
/** Live read keys one session may hold per project; minting past it revokes the oldest. */
export const READ_KEYS_PER_SESSION = 10;

/**
 * Signed-in users read their projects without pasting a key: POST /auth/read-key mints an ordinary `rk_` key of the
 * project bound to the session (api_keys.user_id, session_id, expires_at). It is checked like any rk_ key (the spec's
 * key rules, the same read routes and MCP tools) and ends at its expiry (the authenticator refuses it, cached or not),
 * with its session (sign-out, password change or reset), when the member is removed, or with the project.
 */
export class ReadKeys {
  constructor(
    private readonly ctx: AccountsContext,
    private readonly keyStore: KeyStore,
  ) {}

  async mint(caller: Caller, projectId: string) {
    if (caller.kind !== 'user') throw new ApiError('invalid_session');
    const user = caller as UserCaller;
    const expiresAt = new Date(Math.min(this.ctx.now() + READ_KEY_TTL_MS, Date.parse(user.session.expires_at))).toISOString();
    const minted = await this.keyStore.createKey(projectId, 'rk', 'live', { user_id: user.user.id, session_id: user.session.id, expires_at: expiresAt });
    if (!minted) throw new ApiError('not_found');
    await this.revokeBeyondCap(user.session.id, projectId);
    return { key: minted.key, prefix: minted.prefix, kind: 'rk' as const, project_id: projectId, expires_at: expiresAt };
  }

  private async revokeBeyondCap(sessionId: string, projectId: string): Promise<void> {
    const { rows } = await this.ctx.db.query<{ prefix: string }>(
      `UPDATE api_keys SET revoked_at = $4 WHERE prefix IN (
         SELECT prefix FROM api_keys WHERE session_id = $1 AND project_id = $2 AND revoked_at IS NULL ORDER BY created_at DESC, prefix OFFSET $3
       ) RETURNING prefix`,
      [sessionId, projectId, READ_KEYS_PER_SESSION, new Date(this.ctx.now()).toISOString()],
    );
    await this.ctx.keysRevoked(rows.map((r) => String(r.prefix)));
  }
}
