import { loadConfig } from '@analytics/service-kit';
import { envSchema, rateRulesOf, requireSettings } from './config';

describe('environment', () => {
  it('has the documented defaults', () => {
    const env = loadConfig(envSchema, {});
    expect(env).toMatchObject({ PORT: 8080, CLICKHOUSE_DATABASE: 'analytics', TRUST_PROXY: false, KEY_CACHE_TTL_MS: 300_000, LOG_LEVEL: 'info' });
    expect(rateRulesOf(env)).toEqual({ track: { ratePerS: 50, burst: 200 }, batch: { ratePerS: 5, burst: 20 } });
  });
  it('reads rate limits and trust proxy, and refuses a cache TTL over 5 minutes', () => {
    const env = loadConfig(envSchema, { RATE_LIMIT_TRACK_PER_S: '7', RATE_LIMIT_BATCH_BURST: '2', TRUST_PROXY: 'loopback' });
    expect(rateRulesOf(env)).toEqual({ track: { ratePerS: 7, burst: 200 }, batch: { ratePerS: 5, burst: 2 } });
    expect(env.TRUST_PROXY).toEqual(['loopback']);
    expect(() => loadConfig(envSchema, { KEY_CACHE_TTL_MS: '300001' })).toThrow(/KEY_CACHE_TTL_MS/);
    expect(() => loadConfig(envSchema, { CLICKHOUSE_DATABASE: 'a;drop' })).toThrow(/CLICKHOUSE_DATABASE/);
  });
  it('names every missing required setting', () => {
    expect(() => requireSettings(loadConfig(envSchema, {}), ['DATABASE_URL', 'IP_HASH_SECRET'], 'ingest-api')).toThrow('ingest-api: missing required settings DATABASE_URL, IP_HASH_SECRET');
  });
});
