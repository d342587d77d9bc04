import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { parseOriginEntry } from '@analytics/auth';
import { type BodyLimits, DEFAULT_FAILED_AUTH_LIMITS, bodyBudgetOf, type FailedAuthLimits, type ServiceLimits, parsePublicUrl } from '@analytics/service-kit';
import { envInt, envString, parseTrustProxy, requireOneOf } from './env';

/** Every environment variable the services read (docs/configuration.md lists the same; tools/deploy-checks/src/docs.spec.ts checks it). */
export const envSchema = z.object({
  PORT: envInt(8080, 0, 65535),
  DATA_DIR: envString(),
  // Set: POST /admin/backup writes only into folders under it (symbolic links followed).
  BACKUP_DIR: envString().refine((v) => v === undefined || (isAbsolute(v) && !v.includes('\0')), 'must be an absolute path'),
  CLICKHOUSE_URL: envString(),
  CLICKHOUSE_USER: envString(),
  CLICKHOUSE_PASSWORD: envString(),
  CLICKHOUSE_DATABASE: z.preprocess((v) => (v === '' || v === undefined ? 'analytics' : v), z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)),
  CLICKHOUSE_CLUSTER: envString(),
  DATABASE_URL: envString(),
  REDIS_URL: envString(),
  IP_HASH_SECRET: envString(),
  ADMIN_TOKEN: envString(),
  INTERNAL_SECRET: envString(),
  // Set: GET /metrics requires `Authorization: Bearer <METRICS_TOKEN>` (Prometheus's bearer_token); unset: open to whoever reaches the pod.
  METRICS_TOKEN: envString(),
  TRUST_PROXY: envString().transform(parseTrustProxy),
  // Unset: human-readable lines on a terminal, JSON otherwise (pipes, containers, log collectors).
  LOG_FORMAT: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['json', 'pretty']).optional()),
  RATE_LIMIT_TRACK_PER_S: envInt(50, 1),
  RATE_LIMIT_TRACK_BURST: envInt(200, 1),
  RATE_LIMIT_BATCH_PER_S: envInt(5, 1),
  RATE_LIMIT_BATCH_BURST: envInt(20, 1),
  // Visits by inactivity: an event without session_id starts a new visit after this long without one. At least 30:
  // a visit's id names the 30-minute bucket of its first event, so one visitor's visits must start in different buckets.
  SESSION_IDLE_MINUTES: envInt(30, 30, 720),
  KEY_CACHE_TTL_MS: envInt(300_000, 0, 300_000),
  KEY_PREFIX_RELOAD_MS: envInt(30_000, 1_000),
  AUTH_FAILURES_PER_IP_PER_S: envInt(20, 1),
  AUTH_FAILURES_PER_IP_BURST: envInt(200, 1),
  AUTH_FAILURES_PER_KEY_PER_S: envInt(20, 1),
  AUTH_FAILURES_PER_KEY_BURST: envInt(200, 1),
  BODY_BUDGET_BYTES: envInt(32 * 1024 * 1024, 1024 * 1024),
  BODY_WAIT_MS: envInt(2_000, 0, 60_000),
  BODY_READ_TIMEOUT_MS: envInt(10_000, 100, 600_000),
  READ_MAX_EXECUTION_S: envInt(10, 1, 3_600),
  READ_MAX_MEMORY_BYTES: envInt(1024 * 1024 * 1024, 1),
  READ_MAX_THREADS: envInt(4, 1, 256),
  READ_CONCURRENCY: envInt(0, 0, 1_000),
  READ_CONCURRENCY_PER_PROJECT: envInt(4, 1, 1_000),
  READ_QUEUE_PER_PROJECT: envInt(128, 0, 10_000),
  READ_QUEUE_WAIT_MS: envInt(10_000, 0, 600_000),
  EXPORT_MAX_EXECUTION_S: envInt(300, 1, 86_400),
  EXPORT_IDLE_TIMEOUT_S: envInt(30, 1, 3_600),
  EXPORT_CONCURRENCY: envInt(2, 1, 64),
  // GET /v1/live: open streams per project on each read-api instance (one more: 429 rate_limited).
  LIVE_MAX_PER_PROJECT: envInt(5, 1, 1_000),
  AGGREGATE_INTERVAL_MS: envInt(1_000, 10, 60_000),
  SOURCES_REFRESH_MS: envInt(60_000, 0, 86_400_000),
  AGGREGATE_WAIT_MS: envInt(0, 0, 600_000),
  FAR_PARTITIONS_PER_S: envInt(25, 1),
  LOG_LEVEL: z.preprocess((v) => (v === '' || v === undefined ? 'info' : v), z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])),
  // Unset: loopback origins (any port) only; set: exactly these (the key's project origins pass either way).
  MCP_ALLOWED_ORIGINS: envString().transform((v, ctx) => {
    if (v === undefined) return undefined;
    const entries = v.split(',').map((s) => s.trim()).filter(Boolean).map(parseOriginEntry);
    for (const e of entries) if ('problem' in e) ctx.addIssue({ code: 'custom', message: e.problem });
    return entries.flatMap((e) => ('origin' in e ? [e.origin] : []));
  }),
  // Unset: off for an app started alone; npm start (standalone) reads unset as on.
  MCP_OAUTH: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['on', 'off']).optional()),
  // The origin clients reach the service at (OAuth metadata, WWW-Authenticate); unset: the request's validated Host.
  PUBLIC_URL: envString().transform((v, ctx) => {
    if (v === undefined) return undefined;
    const parsed = parsePublicUrl(v);
    if ('problem' in parsed) ctx.addIssue({ code: 'custom', message: parsed.problem });
    return 'url' in parsed ? parsed.url : undefined;
  }),
  // User sessions (docs/accounts.md): unused for this many days, or older than the maximum, a user token is refused.
  SESSION_IDLE_DAYS: envInt(14, 1, 3_650),
  SESSION_MAX_DAYS: envInt(90, 1, 3_650),
  // Password hashes running at once: each holds scrypt's 128 MiB (OWASP's parameters) while it runs.
  PASSWORD_HASH_CONCURRENCY: envInt(2, 1, 64),
  // Mail (password resets, invitations): smtp:// or smtps:// with credentials in the URL, and the sender.
  SMTP_URL: envString().refine((v) => v === undefined || /^smtps?:\/\/[^\s]+$/.test(v), { message: 'SMTP_URL must be an smtp:// or smtps:// URL' }),
  MAIL_FROM: envString(),
  // Scheduled reports (docs/alerts-and-reports.md): how often the scheduler looks for reports due, and how long a
  // claimed send may stay unconfirmed before another pass retries it (its worker died mid-send).
  REPORTS_CHECK_INTERVAL_S: envInt(60, 1, 3_600),
  REPORTS_CLAIM_STALE_S: envInt(900, 10, 86_400),
  // Single sign-on (docs/accounts.md): the provider's issuer, https (plain http only on loopback), no query or fragment.
  OIDC_ISSUER: envString().refine((v) => v === undefined || oidcIssuerProblem(v) === undefined, { message: 'OIDC_ISSUER must be the https:// issuer URL of the OpenID provider (plain http only for localhost or 127.0.0.1), without query or fragment' }),
  OIDC_CLIENT_ID: envString(),
  OIDC_CLIENT_SECRET: envString(),
  // The button reads "Sign in with <OIDC_NAME>".
  OIDC_NAME: z.preprocess((v) => (v === '' || v === undefined ? 'SSO' : v), z.string().trim().min(1).max(100)),
  // The organization a first sign-in joins (created when missing), with OIDC_DEFAULT_ROLE (never owner).
  OIDC_ORG: z.preprocess((v) => (v === '' || v === undefined ? 'Default' : v), z.string().trim().min(1).max(200)),
  OIDC_DEFAULT_ROLE: z.preprocess((v) => (v === '' || v === undefined ? 'viewer' : v), z.enum(['viewer', 'editor', 'admin'])),
  // Comma-separated email domains that may sign in (example.com, example.org); unset: any verified email.
  // Alerts (docs/alerts-and-reports.md): evaluated every this many seconds; true lets them reach loopback, private and
  // link-local addresses (tests, a receiver on the operator's own network).
  ALERT_EVAL_INTERVAL_S: envInt(60, 10, 3_600),
  ALERTS_ALLOW_PRIVATE_URLS: z.preprocess((v) => (v === '' || v === undefined ? 'false' : v), z.enum(['true', 'false'])).transform((v) => v === 'true'),
  OIDC_ALLOWED_DOMAINS: envString().transform((v, ctx) => {
    const domains = (v ?? '').split(',').map((d) => d.trim().toLowerCase().replace(/^@/, '')).filter(Boolean);
    for (const d of domains) if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(d)) ctx.addIssue({ code: 'custom', message: `OIDC_ALLOWED_DOMAINS: ${d.slice(0, 100)} is not a domain` });
    return domains;
  }),
});

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Why OIDC_ISSUER is not usable as an issuer, or undefined. */
function oidcIssuerProblem(value: string): string | undefined {
  if (!URL.canParse(value)) return 'not an absolute URL';
  const url = new URL(value);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) return 'not https';
  if (url.username || url.password || url.search || url.hash || value.includes('#')) return 'query, fragment or credentials';
  return undefined;
}

export type Env = z.output<typeof envSchema>;

/**
 * The event store of an app started alone: a ClickHouse server (CLICKHOUSE_URL), or, as an explicit opt-in for a
 * single process, the embedded chDB under DATA_DIR/clickhouse (DATA_DIR set and CLICKHOUSE_URL unset). The key store
 * stays PostgreSQL (DATABASE_URL) either way: only `npm start` and `--once` fall back to PGlite.
 */
export const requireEventStore = <S extends z.ZodObject>(schema: S): S => requireOneOf(schema, ['CLICKHOUSE_URL', 'DATA_DIR']);

export function failedAuthLimitsOf(env: Env): FailedAuthLimits {
  return {
    ...DEFAULT_FAILED_AUTH_LIMITS,
    perIp: { ratePerS: env.AUTH_FAILURES_PER_IP_PER_S, burst: env.AUTH_FAILURES_PER_IP_BURST },
    perKey: { ratePerS: env.AUTH_FAILURES_PER_KEY_PER_S, burst: env.AUTH_FAILURES_PER_KEY_BURST },
  };
}

export function bodyLimitsOf(env: Env): BodyLimits {
  return { budget: bodyBudgetOf(env.BODY_BUDGET_BYTES), waitMs: env.BODY_WAIT_MS, readTimeoutMs: env.BODY_READ_TIMEOUT_MS };
}

/** The body and failed-authentication budgets of this process, for the app factory (one per process). */
export function serviceLimitsOf(env: Env): ServiceLimits {
  return { body: bodyLimitsOf(env), failedAuth: failedAuthLimitsOf(env) };
}

/** SESSION_IDLE_MINUTES in ms, as IngestService takes it. */
export function sessionIdleMsOf(env: Env): number {
  return env.SESSION_IDLE_MINUTES * 60_000;
}

export function rateRulesOf(env: Env) {
  return {
    track: { ratePerS: env.RATE_LIMIT_TRACK_PER_S, burst: env.RATE_LIMIT_TRACK_BURST },
    batch: { ratePerS: env.RATE_LIMIT_BATCH_PER_S, burst: env.RATE_LIMIT_BATCH_BURST },
  };
}
