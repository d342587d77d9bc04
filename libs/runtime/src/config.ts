import { z } from 'zod';
import { envInt, envString, parseTrustProxy } from '@analytics/service-kit';

/** Every environment variable the services read (README's configuration table lists the same). */
export const envSchema = z.object({
  PORT: envInt(8080, 0, 65535),
  DATA_DIR: envString(),
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
  TRUST_PROXY: envString().transform(parseTrustProxy),
  RATE_LIMIT_TRACK_PER_S: envInt(50, 1),
  RATE_LIMIT_TRACK_BURST: envInt(200, 1),
  RATE_LIMIT_BATCH_PER_S: envInt(5, 1),
  RATE_LIMIT_BATCH_BURST: envInt(20, 1),
  KEY_CACHE_TTL_MS: envInt(300_000, 0, 300_000),
  LOG_LEVEL: z.preprocess((v) => (v === '' || v === undefined ? 'info' : v), z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])),
});

export type Env = z.output<typeof envSchema>;

/** Settings an app cannot start without; checked all at once with a clear message. */
export function requireSettings(env: Env, names: ReadonlyArray<keyof Env>, app: string): void {
  const missing = names.filter((n) => env[n] === undefined || env[n] === '');
  if (missing.length > 0) {
    throw new Error(`${app}: missing required setting${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (see README, Configuration)`);
  }
}

export function rateRulesOf(env: Env) {
  return {
    track: { ratePerS: env.RATE_LIMIT_TRACK_PER_S, burst: env.RATE_LIMIT_TRACK_BURST },
    batch: { ratePerS: env.RATE_LIMIT_BATCH_PER_S, burst: env.RATE_LIMIT_BATCH_BURST },
  };
}
