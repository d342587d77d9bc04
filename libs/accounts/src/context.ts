import type { SqlPort } from '@analytics/auth';
import type { AuditLog } from './audit-log';
import type { PasswordHasher } from './password';

/** Session lifetimes (SESSION_IDLE_DAYS, SESSION_MAX_DAYS), in milliseconds. */
export interface SessionLifetimes {
  idleMs: number;
  maxMs: number;
}

export const DAY_MS = 86_400_000;

/** What the parts of libs/accounts share: the key store's database, the clock, hashing, the audit log, revocation. */
export interface AccountsContext {
  db: SqlPort;
  now: () => number;
  hasher: PasswordHasher;
  audit: AuditLog;
  lifetimes: SessionLifetimes;
  /**
   * Keys just revoked in the store (read keys of ended sessions or removed members): every instance's key cache drops
   * them (InvalidationBus.keyRevoked, acknowledged with Redis), so they are refused within seconds everywhere.
   */
  keysRevoked(prefixes: readonly string[]): Promise<void>;
}

/** A timestamptz column (a Date from pg and PGlite) as ISO 8601. */
export { isoOf, isoOrNull } from './time';
