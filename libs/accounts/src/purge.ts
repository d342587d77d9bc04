import type { SqlPort } from '@analytics/auth';
import { AuditLog } from './audit-log';
import { DAY_MS } from './context';

/**
 * Deletes what has expired, a day late (so an answer about it stays right meanwhile): sessions ended or past their end
 * (their read keys with them), spent or expired invitations and reset links, single sign-ons under way and MCP consent tickets past their 10 minutes, expired session read keys and share-link unlock credentials, and audit
 * entries past 400 days. The retention job runs it daily.
 */
export async function purgeExpiredAccounts(db: SqlPort, options: { now?: number; sessionIdleDays?: number } = {}) {
  const now = options.now ?? Date.now();
  const dayAgo = new Date(now - DAY_MS).toISOString();
  const idleBefore = new Date(now - DAY_MS - (options.sessionIdleDays ?? 14) * DAY_MS).toISOString();
  const count = async (sql: string, params: unknown[]) => Number((await db.query<{ n: string }>(`WITH gone AS (${sql} RETURNING 1) SELECT count(*) AS n FROM gone`, params)).rows[0]?.n ?? 0);
  return {
    // Session read keys, and the credentials a password link's unlock gave (a link's own credential has its id as prefix).
    keys: await count('DELETE FROM api_keys WHERE (session_id IS NOT NULL OR (share_id IS NOT NULL AND prefix <> share_id)) AND expires_at < $1', [dayAgo]),
    sessions: await count('DELETE FROM sessions WHERE ended_at < $1 OR expires_at < $1 OR last_used_at < $2', [dayAgo, idleBefore]),
    invitations: await count('DELETE FROM invitations WHERE accepted_at < $1 OR expires_at < $1', [dayAgo]),
    resets: await count('DELETE FROM password_resets WHERE used_at < $1 OR expires_at < $1', [dayAgo]),
    oidc_logins: await count('DELETE FROM oidc_logins WHERE expires_at < $1', [dayAgo]),
    consent_tickets: await count('DELETE FROM oauth_consent_tickets WHERE expires_at < $1', [dayAgo]),
    audit: await new AuditLog(db, () => now).purge(),
  };
}
