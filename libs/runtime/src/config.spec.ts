import { bodyLimitsOf, envSchema, failedAuthLimitsOf, rateRulesOf, requireEventStore } from './config';
import { appConfig, loadConfig, requiredSetting } from './env';
import { oidcSettingsOf } from './accounts';
import { serverTimeoutsOf } from './serve';

describe('environment', () => {
  it('has the documented defaults', () => {
    const env = loadConfig(envSchema, {});
    expect(env).toMatchObject({ PORT: 8080, CLICKHOUSE_DATABASE: 'analytics', TRUST_PROXY: false, KEY_CACHE_TTL_MS: 300_000, LOG_LEVEL: 'info' });
    expect(rateRulesOf(env)).toEqual({ track: { ratePerS: 50, burst: 200 }, batch: { ratePerS: 5, burst: 20 } });
    expect(failedAuthLimitsOf(env)).toMatchObject({ perIp: { ratePerS: 20, burst: 200 }, perKey: { ratePerS: 20, burst: 200 } });
  });
  it('reads the body limits (a share of a quarter of the budget, never under the largest body) and sets the server timeouts from BODY_READ_TIMEOUT_MS', () => {
    const defaults = bodyLimitsOf(loadConfig(envSchema, {}));
    expect([defaults.budget.capacity, defaults.budget.share, defaults.waitMs, defaults.readTimeoutMs]).toEqual([32 * 1024 * 1024, 16 * 1024 * 1024, 2_000, 10_000]);
    const set = bodyLimitsOf(loadConfig(envSchema, { BODY_BUDGET_BYTES: String(128 * 1024 * 1024), BODY_READ_TIMEOUT_MS: '1500' }));
    expect([set.budget.share, set.readTimeoutMs]).toEqual([32 * 1024 * 1024, 1_500]);
    expect(() => loadConfig(envSchema, { BODY_READ_TIMEOUT_MS: '0' })).toThrow(/BODY_READ_TIMEOUT_MS/);
    // Our 408 (JSON) comes before Node's: its request timeout counts the headers' time too.
    expect(serverTimeoutsOf(10_000)).toEqual({ headersTimeout: 30_000, requestTimeout: 65_000, keepAliveTimeout: 65_000, connectionsCheckingInterval: 1_000 });
  });
  it('reads the failed-authentication budgets per IP and per key prefix', () => {
    const env = loadConfig(envSchema, { AUTH_FAILURES_PER_IP_PER_S: '3', AUTH_FAILURES_PER_KEY_PER_S: '2', AUTH_FAILURES_PER_KEY_BURST: '9' });
    expect(failedAuthLimitsOf(env)).toMatchObject({ perIp: { ratePerS: 3, burst: 200 }, perKey: { ratePerS: 2, burst: 9 } });
    expect(() => loadConfig(envSchema, { AUTH_FAILURES_PER_KEY_BURST: '0' })).toThrow(/AUTH_FAILURES_PER_KEY_BURST/);
  });
  it('reads rate limits and trust proxy, and refuses a cache TTL over 5 minutes', () => {
    const env = loadConfig(envSchema, { RATE_LIMIT_TRACK_PER_S: '7', RATE_LIMIT_BATCH_BURST: '2', TRUST_PROXY: 'loopback' });
    expect(rateRulesOf(env)).toEqual({ track: { ratePerS: 7, burst: 200 }, batch: { ratePerS: 5, burst: 2 } });
    expect(env.TRUST_PROXY).toEqual(['loopback']);
    expect(() => loadConfig(envSchema, { KEY_CACHE_TTL_MS: '300001' })).toThrow(/KEY_CACHE_TTL_MS/);
    expect(() => loadConfig(envSchema, { CLICKHOUSE_DATABASE: 'a;drop' })).toThrow(/CLICKHOUSE_DATABASE/);
  });
  it('reads MCP_ALLOWED_ORIGINS as normalised origins (unset: none, loopback is the gateway\'s default), refuses bad entries, and MCP_OAUTH as on/off', () => {
    const unset = loadConfig(envSchema, {});
    expect([unset.MCP_ALLOWED_ORIGINS, unset.MCP_OAUTH]).toEqual([undefined, undefined]);
    const env = loadConfig(envSchema, { MCP_ALLOWED_ORIGINS: 'http://localhost:6274/, https://*.example.com', MCP_OAUTH: 'on' });
    expect([env.MCP_ALLOWED_ORIGINS, env.MCP_OAUTH]).toEqual([['http://localhost:6274', 'https://*.example.com'], 'on']);
    expect(() => loadConfig(envSchema, { MCP_ALLOWED_ORIGINS: 'https://*.com' })).toThrow(/MCP_ALLOWED_ORIGINS/);
    expect(() => loadConfig(envSchema, { MCP_OAUTH: 'yes' })).toThrow(/MCP_OAUTH/);
  });
  it('reads PUBLIC_URL as an origin (unset: none) and refuses a path, a query or plain http to a public host', () => {
    expect(loadConfig(envSchema, {}).PUBLIC_URL).toBeUndefined();
    expect(loadConfig(envSchema, { PUBLIC_URL: 'https://analytics.example.com/' }).PUBLIC_URL).toBe('https://analytics.example.com');
    for (const bad of ['https://analytics.example.com/mcp', 'https://analytics.example.com/?x=1', 'http://analytics.example.com', 'analytics.example.com']) {
      expect(() => loadConfig(envSchema, { PUBLIC_URL: bad })).toThrow(/PUBLIC_URL/);
    }
  });
  it('reads BACKUP_DIR as an absolute path (unset: none) and refuses a relative one', () => {
    expect(loadConfig(envSchema, {}).BACKUP_DIR).toBeUndefined();
    expect(loadConfig(envSchema, { BACKUP_DIR: '/var/backups/analytics' }).BACKUP_DIR).toBe('/var/backups/analytics');
    expect(() => loadConfig(envSchema, { BACKUP_DIR: 'backups' })).toThrow(/BACKUP_DIR/);
  });
  it('names every missing required setting', () => {
    const ingest = appConfig('ingest-api', envSchema.extend({ DATABASE_URL: requiredSetting(), IP_HASH_SECRET: requiredSetting() }));
    expect(() => ingest.load({})).toThrow('ingest-api: missing required settings DATABASE_URL, IP_HASH_SECRET');
  });
  it('takes CLICKHOUSE_URL or DATA_DIR (the embedded opt-in) for the event store, and names both when neither is set', () => {
    const read = appConfig('read-api', requireEventStore(envSchema.extend({ DATABASE_URL: requiredSetting() })));
    expect(() => read.load({})).toThrow('read-api: missing required settings CLICKHOUSE_URL or DATA_DIR, DATABASE_URL (see docs/configuration.md)');
    expect(() => read.load({ DATA_DIR: '/tmp/x' })).toThrow('read-api: missing required setting DATABASE_URL (see');
    expect(() => read.load({ DATA_DIR: '/tmp/x', DATABASE_URL: 'postgres://db/a' })).not.toThrow();
    expect(() => read.load({ CLICKHOUSE_URL: 'http://ch:8123', DATABASE_URL: 'postgres://db/a' })).not.toThrow();
  });
  it('reads single sign-on: all three OIDC settings or none, PUBLIC_URL with them, defaults SSO / Default / viewer / any domain', () => {
    const trio = { OIDC_ISSUER: 'https://accounts.google.com', OIDC_CLIENT_ID: 'id', OIDC_CLIENT_SECRET: 'secret' };
    expect(oidcSettingsOf(loadConfig(envSchema, {}))).toBeUndefined();
    expect(oidcSettingsOf(loadConfig(envSchema, { ...trio, PUBLIC_URL: 'https://analytics.example.com' }))).toEqual({
      issuer: 'https://accounts.google.com', clientId: 'id', clientSecret: 'secret', name: 'SSO', org: 'Default', defaultRole: 'viewer', allowedDomains: [], publicUrl: 'https://analytics.example.com',
    });
    const env = loadConfig(envSchema, { ...trio, PUBLIC_URL: 'https://a.example.com', OIDC_NAME: 'Acme ID', OIDC_ORG: 'Acme', OIDC_DEFAULT_ROLE: 'editor', OIDC_ALLOWED_DOMAINS: 'Example.com, @example.org' });
    expect(oidcSettingsOf(env)).toMatchObject({ name: 'Acme ID', org: 'Acme', defaultRole: 'editor', allowedDomains: ['example.com', 'example.org'] });
    expect(() => oidcSettingsOf(loadConfig(envSchema, { OIDC_ISSUER: trio.OIDC_ISSUER, PUBLIC_URL: 'https://a.example.com' }))).toThrow(/OIDC_CLIENT_ID, OIDC_CLIENT_SECRET: single sign-on needs OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET together/);
    expect(() => oidcSettingsOf(loadConfig(envSchema, trio))).toThrow(/PUBLIC_URL: required with OIDC_ISSUER/);
    expect(() => loadConfig(envSchema, { OIDC_DEFAULT_ROLE: 'owner' })).toThrow(/OIDC_DEFAULT_ROLE/);
    expect(() => loadConfig(envSchema, { OIDC_ISSUER: 'http://sso.example.com' })).toThrow(/OIDC_ISSUER/);
    expect(() => loadConfig(envSchema, { OIDC_ALLOWED_DOMAINS: 'not a domain' })).toThrow(/OIDC_ALLOWED_DOMAINS/);
    expect(loadConfig(envSchema, { OIDC_ISSUER: 'http://127.0.0.1:8080/realms/test' }).OIDC_ISSUER).toBe('http://127.0.0.1:8080/realms/test');
  });
});
