import { createHmac } from 'node:crypto';
import type { Redis } from 'ioredis';
import { Accounts, type Mailer, MemoryFailureCounter, type OidcSettings, PasswordHasher, RedisFailureCounter, smtpMailer } from '@analytics/accounts';
import type { InvalidationBus, KeyStore, RevocationEpoch, SqlPort } from '@analytics/auth';
import type { Logger } from '@analytics/service-kit';
import type { Env } from './config';
import { ConfigError } from './env';

/** The settings of accounts; each one unset takes its default (SESSION_IDLE_DAYS 14, ...). */
type AccountSettings = Partial<
  Pick<
    Env,
    | 'SESSION_IDLE_DAYS'
    | 'SESSION_MAX_DAYS'
    | 'PASSWORD_HASH_CONCURRENCY'
    | 'SMTP_URL'
    | 'MAIL_FROM'
    | 'PUBLIC_URL'
    | 'OIDC_ISSUER'
    | 'OIDC_CLIENT_ID'
    | 'OIDC_CLIENT_SECRET'
    | 'OIDC_NAME'
    | 'OIDC_ORG'
    | 'OIDC_DEFAULT_ROLE'
    | 'OIDC_ALLOWED_DOMAINS'
  >
>;

const OIDC_TRIO = ['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'] as const;

/**
 * OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET as single sign-on (none when all three are unset). One or two of
 * them, or SSO without PUBLIC_URL (the redirect URI the provider knows), does not start.
 */
export function oidcSettingsOf(env: AccountSettings): OidcSettings | undefined {
  const set = OIDC_TRIO.filter((k) => env[k] !== undefined);
  if (set.length === 0) return undefined;
  const problems: string[] = [];
  if (set.length < OIDC_TRIO.length) {
    const missing = OIDC_TRIO.filter((k) => env[k] === undefined);
    problems.push(`${missing.join(', ')}: single sign-on needs OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET together (${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} set; see docs/accounts.md)`);
  }
  if (!env.PUBLIC_URL) problems.push('PUBLIC_URL: required with OIDC_ISSUER (the provider sends the browser back to <PUBLIC_URL>/auth/oidc/callback; see docs/accounts.md)');
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    issuer: env.OIDC_ISSUER!,
    clientId: env.OIDC_CLIENT_ID!,
    clientSecret: env.OIDC_CLIENT_SECRET!,
    name: env.OIDC_NAME ?? 'SSO',
    org: env.OIDC_ORG ?? 'Default',
    defaultRole: env.OIDC_DEFAULT_ROLE ?? 'viewer',
    allowedDomains: env.OIDC_ALLOWED_DOMAINS ?? [],
    publicUrl: env.PUBLIC_URL!,
  };
}

/** SMTP_URL and MAIL_FROM as a mailer (none when SMTP_URL is unset); SMTP_URL without MAIL_FROM does not start. */
export function mailerOf(env: AccountSettings, logger: Logger): Mailer | undefined {
  if (!env.SMTP_URL) return undefined;
  if (!env.MAIL_FROM) throw new ConfigError(['MAIL_FROM: required with SMTP_URL (the sender of password-reset and invitation mail)']);
  // A reset link built from a request's Host would point wherever the requester says: reset mail needs PUBLIC_URL.
  if (!env.PUBLIC_URL) logger.warn('SMTP_URL is set without PUBLIC_URL: invitations are mailed, password-reset mail is not (set PUBLIC_URL)');
  return smtpMailer(env.SMTP_URL, env.MAIL_FROM);
}

/**
 * libs/accounts over the opened key store: sign-in failures in Redis when there is one (every instance counts them),
 * revoked read keys announced on the bus, mail when SMTP_URL is set, single sign-on when OIDC_* is. The throttle's HMAC key derives from ADMIN_TOKEN,
 * which every admin instance shares.
 */
export function openAccounts(
  stores: { keyDb: SqlPort; keyStore: KeyStore; bus: InvalidationBus; redis?: Redis; epoch?: RevocationEpoch },
  env: AccountSettings,
  logger: Logger,
  adminToken: string,
): Accounts {
  return new Accounts({
    db: stores.keyDb,
    keyStore: stores.keyStore,
    sessionIdleDays: env.SESSION_IDLE_DAYS,
    sessionMaxDays: env.SESSION_MAX_DAYS,
    hasher: new PasswordHasher({ concurrency: env.PASSWORD_HASH_CONCURRENCY }),
    failures: stores.redis ? new RedisFailureCounter(stores.redis, logger) : new MemoryFailureCounter(),
    throttleSecret: createHmac('sha256', adminToken).update('sign-in-throttle').digest('hex'),
    mailer: mailerOf(env, logger),
    publicUrl: env.PUBLIC_URL,
    oidc: oidcSettingsOf(env),
    // As an admin revocation: the epoch first, so every instance refuses the read key once the removal answers.
    onKeysRevoked: async (prefix) => {
      await stores.epoch?.advance().catch((e: unknown) => logger.warn({ err: (e as Error).message }, 'advancing the revocation epoch failed; other instances drop the key within the cache TTL'));
      void stores.bus.keyRevoked(prefix);
    },
    onError: (e, what) => logger.warn({ err: (e as Error).message }, `${what} failed`),
  });
}
