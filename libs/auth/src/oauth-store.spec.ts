import { randomUUID } from 'node:crypto';
import { keyStoreBackends } from './test-backends';
import { hashSecret } from './key-format';
import { KeyStore } from './key-store';
import { KEY_STORE_MIGRATIONS, migrateKeyStore } from './migrate';
import { OAuthStore, REGISTRATION_LIMITS, isOAuthAccessToken } from './oauth-store';
import type { SqlPort } from './sql-port';

const T0 = Date.parse('2026-06-01T00:00:00Z');

describe.each(keyStoreBackends())('OAuth store on %s', (_name, open) => {
  let db: SqlPort;
  let keys: KeyStore;
  let clock = T0;
  let store: OAuthStore;
  let prefix: string;
  let projectId: string;
  const client = 'client-1';

  beforeAll(async () => {
    db = await open();
    await migrateKeyStore(db);
    keys = new KeyStore(db);
    // No purge on write here: these tests move the clock by days, and a purge would take other tests' rows.
    store = new OAuthStore(db, { now: () => clock, purgeEveryMs: Number.POSITIVE_INFINITY });
    const created = await keys.createProject({ name: 'oauth' });
    projectId = created.project.id;
    prefix = created.keys.rk.split('_')[2]!;
    await store.saveClient(client, { client_id: client, redirect_uris: ['https://app.example/cb'], client_name: 'App' });
  });
  afterAll(() => db.close());
  beforeEach(() => {
    clock = T0;
  });

  const grant = (keyPrefix = prefix) => ({ client_id: client, key_prefix: keyPrefix, code_challenge: 'challenge', redirect_uri: 'https://app.example/cb', resource: null });
  /** The prefix of a new project's rk_ key, for tests that revoke it. */
  const freshPrefix = async () => (await keys.createProject({ name: 'revocable' })).keys.rk.split('_')[2]!;
  const refreshed = async (refresh: string, clientId = client) => {
    const outcome = await store.refreshTokens(refresh, clientId);
    if (!('tokens' in outcome)) throw new Error(`refresh refused: ${outcome.refused}`);
    return outcome.tokens;
  };

  it('keeps a registered client\'s metadata', async () => {
    expect(await store.getClient(client)).toEqual({ client_id: client, redirect_uris: ['https://app.example/cb'], client_name: 'App' });
    expect(await store.getClient('nope')).toBeNull();
  });

  it('keeps a client secret only as its SHA-256 hash, never in the metadata it hands out', async () => {
    const secret = 'a3f1c0ffee'.repeat(6);
    await store.saveClient('confidential-1', { client_id: 'confidential-1', redirect_uris: ['https://app.example/cb'], client_secret: secret, client_secret_expires_at: 0 });
    const { rows } = await db.query<{ metadata: unknown; client_secret_hash: string }>("SELECT metadata, client_secret_hash FROM oauth_clients WHERE client_id = 'confidential-1'");
    expect(JSON.stringify(rows[0]!.metadata)).not.toContain(secret);
    expect(rows[0]!.client_secret_hash).toBe(hashSecret(secret));
    expect(await store.getClient('confidential-1')).not.toHaveProperty('client_secret');
  });

  it('authenticates a client: a public one by its id, a confidential one only with its unexpired secret', async () => {
    const secret = 'b'.repeat(64);
    const expiresAt = Math.floor(T0 / 1000) + 60;
    await store.saveClient('confidential-2', { client_id: 'confidential-2', redirect_uris: ['https://app.example/cb'], client_secret: secret, client_secret_expires_at: expiresAt });
    expect(await store.authenticateClient(client, undefined)).toEqual({ client: expect.objectContaining({ client_id: client }) });
    expect(await store.authenticateClient('nope', secret)).toEqual({ refused: 'unknown_client' });
    expect(await store.authenticateClient('confidential-2', undefined)).toEqual({ refused: 'secret_required' });
    expect(await store.authenticateClient('confidential-2', '')).toEqual({ refused: 'secret_required' });
    expect(await store.authenticateClient('confidential-2', `${secret.slice(1)}c`)).toEqual({ refused: 'wrong_secret' });
    expect(await store.authenticateClient('confidential-2', secret)).toEqual({ client: expect.objectContaining({ client_id: 'confidential-2' }) });
    clock = expiresAt * 1000 + 1;
    expect(await store.authenticateClient('confidential-2', secret)).toEqual({ refused: 'secret_expired' });
  });

  it('stores codes and tokens only as SHA-256 hashes', async () => {
    const code = await store.createCode(grant());
    const tokens = await store.issueTokens(grant());
    const stored = [
      ...(await db.query<{ h: string }>('SELECT code_hash AS h FROM oauth_codes')).rows,
      ...(await db.query<{ h: string }>('SELECT token_hash AS h FROM oauth_tokens')).rows,
    ].map((r) => r.h);
    for (const raw of [code, tokens.access_token, tokens.refresh_token]) {
      expect(stored).not.toContain(raw);
      expect(stored).toContain(hashSecret(raw));
    }
  });

  it('exchanges a code once, for its own client, before it expires', async () => {
    const code = await store.createCode(grant());
    expect(await store.findCode(code, 'other-client')).toBeNull();
    expect((await store.findCode(code, client))?.code_challenge).toBe('challenge');
    expect(await store.consumeCode(code, client)).toMatchObject({ key_prefix: prefix, redirect_uri: 'https://app.example/cb' });
    expect(await store.consumeCode(code, client)).toBeNull();
    const late = await store.createCode(grant());
    clock += 601_000;
    expect(await store.consumeCode(late, client)).toBeNull();
  });

  it('exchanges no code once its key is revoked, and burns it', async () => {
    const revocable = await freshPrefix();
    const code = await store.createCode(grant(revocable));
    await keys.revokeKey(revocable);
    expect(await store.consumeCode(code, client)).toBeNull();
    expect(await store.findCode(code, client)).toBeNull();
  });

  it('resolves an access token to its key and project until it expires', async () => {
    const { access_token, expires_in } = await store.issueTokens(grant());
    expect(isOAuthAccessToken(access_token)).toBe(true);
    expect(await store.resolveAccessToken(access_token)).toMatchObject({ client_id: client, kind: 'rk', prefix, project: { id: projectId, name: 'oauth' } });
    clock += expires_in * 1000 + 1;
    expect(await store.resolveAccessToken(access_token)).toBeNull();
  });

  it('rotates refresh tokens: each is used once, only by its client, before it expires', async () => {
    const first = await store.issueTokens(grant());
    expect(await store.refreshTokens(first.refresh_token, 'other-client')).toEqual({ refused: 'unknown' });
    const second = await refreshed(first.refresh_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(await store.resolveAccessToken(second.access_token)).not.toBeNull();
    expect(await store.refreshTokens('mcp_rt_unknown', client)).toEqual({ refused: 'unknown' });
    clock += store.refreshTtlS * 1000 + 1;
    expect(await store.refreshTokens(second.refresh_token, client)).toEqual({ refused: 'unknown' });
  });

  it('revokes the whole grant when a rotated refresh token is presented again, and no other grant', async () => {
    const first = await store.issueTokens(grant());
    const second = await refreshed(first.refresh_token);
    const third = await refreshed(second.refresh_token);
    const other = await store.issueTokens(grant());
    expect(await store.refreshTokens(first.refresh_token, client)).toEqual({ refused: 'reused' });
    for (const t of [first, second, third]) expect(await store.resolveAccessToken(t.access_token)).toBeNull();
    expect(await store.refreshTokens(third.refresh_token, client)).toEqual({ refused: 'unknown' });
    expect(await store.resolveAccessToken(other.access_token)).not.toBeNull();
    expect(await refreshed(other.refresh_token)).toMatchObject({ access_token: expect.stringMatching(/^mcp_at_/) });
  });

  it('lets one of two concurrent refreshes with the same token win, and then revokes the grant as reuse', async () => {
    const first = await store.issueTokens(grant());
    const outcomes = await Promise.all([store.refreshTokens(first.refresh_token, client), store.refreshTokens(first.refresh_token, client)]);
    expect(outcomes.map((o) => ('tokens' in o ? 'tokens' : o.refused)).sort()).toEqual(['reused', 'tokens']);
    const won = outcomes.find((o): o is { tokens: { access_token: string; refresh_token: string; expires_in: number } } => 'tokens' in o)!;
    expect(await store.resolveAccessToken(won.tokens.access_token)).toBeNull();
    expect(await store.refreshTokens(won.tokens.refresh_token, client)).toEqual({ refused: 'unknown' });
  });

  it('counts a rotated refresh token presented by another client as reuse too', async () => {
    const first = await store.issueTokens(grant());
    const second = await refreshed(first.refresh_token);
    expect(await store.refreshTokens(first.refresh_token, 'other-client')).toEqual({ refused: 'reused' });
    expect(await store.resolveAccessToken(second.access_token)).toBeNull();
  });

  it('refreshes nothing once the key is revoked', async () => {
    const revocable = await freshPrefix();
    const tokens = await store.issueTokens(grant(revocable));
    await keys.revokeKey(revocable);
    expect(await store.refreshTokens(tokens.refresh_token, client)).toEqual({ refused: 'key_revoked' });
    expect(await store.resolveAccessToken(tokens.access_token)).toBeNull();
  });

  it('forgets a revoked access token, revokes the whole grant with its refresh token, and refuses every token of a revoked key', async () => {
    const a = await store.issueTokens(grant());
    await store.revokeToken(a.access_token, client);
    expect(await store.resolveAccessToken(a.access_token)).toBeNull();
    const b = await store.issueTokens(grant());
    const c = await refreshed(b.refresh_token);
    await store.revokeToken(c.refresh_token, 'other-client');
    expect(await store.resolveAccessToken(c.access_token)).not.toBeNull();
    await store.revokeToken(c.refresh_token, client);
    for (const t of [b, c]) expect(await store.resolveAccessToken(t.access_token)).toBeNull();
    const revocable = await freshPrefix();
    const d = await store.issueTokens(grant(revocable));
    expect(await store.resolveAccessToken(d.access_token)).not.toBeNull();
    await keys.revokeKey(revocable);
    expect(await store.resolveAccessToken(d.access_token)).toBeNull();
  });
});

describe.each(keyStoreBackends())('OAuth store housekeeping on %s', (_name, open) => {
  let db: SqlPort;
  let keys: KeyStore;
  let prefix: string;
  let clock = T0;
  beforeAll(async () => {
    db = await open();
    await migrateKeyStore(db);
    keys = new KeyStore(db);
    prefix = (await keys.createProject({ name: 'housekeeping' })).keys.rk.split('_')[2]!;
  });
  afterAll(() => db.close());
  beforeEach(() => {
    clock = T0;
  });

  const HOUR = 3_600_000;
  const DAY = 24 * HOUR;
  const storeWith = (options: ConstructorParameters<typeof OAuthStore>[1] = {}) => new OAuthStore(db, { now: () => clock, purgeEveryMs: Number.POSITIVE_INFINITY, ...options });
  const grantOf = (clientId: string) => ({ client_id: clientId, key_prefix: prefix, code_challenge: 'c', redirect_uri: 'https://app.example/cb', resource: null });
  const count = async (sql: string, params: unknown[]) => Number((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params)).rows[0]!.n);
  const tokensLeft = (raw: string[]) => count('oauth_tokens WHERE token_hash = ANY($1::text[])', [raw.map(hashSecret)]);
  /** A client that received a code (so it is not purged as an unused registration). */
  const usedClient = async (store: OAuthStore, id: string) => {
    await store.saveClient(id, { client_id: id, redirect_uris: ['https://app.example/cb'] });
    await store.createCode(grantOf(id));
  };

  it('documents its registration caps: 10 an hour per address, 10,000 clients in all', () => {
    expect(REGISTRATION_LIMITS).toEqual({ perAddress: 10, windowS: 3_600, total: 10_000 });
    expect(storeWith().maxClients).toBe(10_000);
  });

  it('purges expired codes and tokens, and a grant once its last token is gone, and nothing that still works', async () => {
    const store = storeWith();
    await usedClient(store, 'purged');
    const code = await store.createCode(grantOf('purged'));
    const first = await store.issueTokens(grantOf('purged'));
    const rotated = await store.refreshTokens(first.refresh_token, 'purged');
    if (!('tokens' in rotated)) throw new Error('refresh refused');
    const second = rotated.tokens;
    const grants = async () => count('oauth_grants WHERE client_id = $1', ['purged']);

    clock = T0 + 2 * HOUR; // codes (10 minutes) and access tokens (1 hour) expired, refresh tokens (30 days) not
    expect(await store.purgeExpired()).toMatchObject({ codes: 2, tokens: 2, grants: 0 });
    expect(await store.findCode(code, 'purged')).toBeNull();
    expect(await tokensLeft([first.access_token, second.access_token])).toBe(0);
    // The rotated refresh token stays until it expires: presented again it is still reuse, and revokes the grant.
    expect(await tokensLeft([first.refresh_token, second.refresh_token])).toBe(2);
    expect(await grants()).toBe(1);
    const other = await store.issueTokens(grantOf('purged'));
    expect(await store.refreshTokens(first.refresh_token, 'purged')).toEqual({ refused: 'reused' });

    clock = T0 + 31 * DAY; // every token expired: the grants go with them
    expect(await store.purgeExpired()).toMatchObject({ tokens: 2, grants: 1 });
    expect(await tokensLeft([other.access_token, other.refresh_token])).toBe(0);
    expect(await grants()).toBe(0);
    expect(await store.purgeExpired()).toMatchObject({ codes: 0, tokens: 0, grants: 0 });
  });

  it("revokes a person's grant key once no grant or code uses it (the grant expired or was revoked), and keeps the project's own keys and a live grant's", async () => {
    const store = storeWith();
    await usedClient(store, 'person');
    const projectId = (await db.query<{ project_id: string }>('SELECT project_id FROM api_keys WHERE prefix = $1', [prefix])).rows[0]!.project_id;
    const userId = randomUUID();
    await db.query('INSERT INTO users (id, email) VALUES ($1, $2)', [userId, `grant-${userId}@example.com`]);
    const grantKey = async () => (await keys.createKey(projectId, 'rk', 'live', { user_id: userId }))!.prefix;
    const [expiring, revoked, live] = [await grantKey(), await grantKey(), await grantKey()];
    // Minted an hour before the fake clock: past a code's ten minutes.
    await db.query('UPDATE api_keys SET created_at = $1 WHERE prefix = ANY($2::text[])', [new Date(T0 - HOUR), [expiring, revoked, live]]);
    const of = (key_prefix: string) => ({ ...grantOf('person'), key_prefix });
    await store.issueTokens(of(expiring));
    const toRevoke = await store.issueTokens(of(revoked));
    await store.issueTokens(of(live));
    const revokedAt = async () => Object.fromEntries((await keys.listKeys(projectId)).map((k) => [k.prefix, k.revoked_at]));

    await store.revokeToken(toRevoke.refresh_token, 'person'); // the client revokes its grant
    expect((await revokedAt())[revoked]).toEqual(expect.any(String));
    expect((await revokedAt())[expiring]).toBeNull();

    clock = T0 + 2 * HOUR;
    await store.issueTokens(of(live)); // a live grant's tokens are renewed; the other grant's expire
    clock = T0 + 31 * DAY;
    const liveAgain = await store.issueTokens(of(live));
    expect(liveAgain.access_token).toEqual(expect.any(String));
    expect(await store.purgeExpired()).toMatchObject({ keys: 1 });
    const after = await revokedAt();
    expect({ expiring: after[expiring] !== null, live: after[live], project: after[prefix] }).toEqual({ expiring: true, live: null, project: null });
  });

  it('deletes a registered client never used within a day, and keeps a used one', async () => {
    const store = storeWith();
    expect(await store.registerClient('never-used', { client_id: 'never-used', redirect_uris: ['https://app.example/cb'] })).toEqual({ registered: true });
    await usedClient(store, 'used-once');
    clock = T0 + DAY - 1;
    await store.purgeExpired();
    expect(await store.getClient('never-used')).not.toBeNull();
    clock = T0 + DAY;
    expect((await store.purgeExpired()).clients).toBeGreaterThanOrEqual(1);
    expect(await store.getClient('never-used')).toBeNull();
    expect(await store.getClient('used-once')).not.toBeNull();
  });

  it('purges on write, at most once per purgeEveryMs', async () => {
    const store = storeWith({ purgeEveryMs: 60_000 });
    await usedClient(store, 'on-write'); // the first write purges at T0
    const code = await store.createCode(grantOf('on-write'));
    const codeLeft = () => count('oauth_codes WHERE code_hash = $1', [hashSecret(code)]);
    clock = T0 + 59_000; // the code (10 minutes) is not expired yet, and no purge is due
    await store.saveClient('on-write-2', { client_id: 'on-write-2' });
    expect(await codeLeft()).toBe(1);
    clock = T0 + 11 * 60_000; // expired, and a purge is due: the next write takes it
    expect(await codeLeft()).toBe(1);
    await store.saveClient('on-write-3', { client_id: 'on-write-3' });
    expect(await codeLeft()).toBe(0);
  });

  it('refuses a registration past the total, Retry-After until the oldest unused client is deleted', async () => {
    const store = storeWith({ maxClients: (await count('oauth_clients', [])) + 1 });
    expect(await store.registerClient('last-one', { client_id: 'last-one' })).toEqual({ registered: true });
    clock = T0 + HOUR;
    const refused = await store.registerClient('one-too-many', { client_id: 'one-too-many' });
    expect(refused).toEqual({ refused: 'total', retryAfterS: expect.any(Number) });
    expect((refused as { retryAfterS: number }).retryAfterS).toBeLessThanOrEqual(23 * 3_600);
    expect(await store.getClient('one-too-many')).toBeNull();
  });
});

describe.each(keyStoreBackends())('OAuth store upgraded from the 002 schema on %s', (_name, open) => {
  let db: SqlPort;
  afterEach(() => db.close());

  it('moves plain-text client secrets to hashes and keeps old tokens working, each as its own grant', async () => {
    db = await open();
    await migrateKeyStore(db, KEY_STORE_MIGRATIONS.slice(0, 2));
    const created = await new KeyStore(db).createProject({ name: 'old' });
    const keyPrefix = created.keys.rk.split('_')[2]!;
    const secret = 'c'.repeat(64);
    await db.query('INSERT INTO oauth_clients (client_id, metadata) VALUES ($1, $2)', ['old-confidential', JSON.stringify({ client_id: 'old-confidential', redirect_uris: ['https://app.example/cb'], client_secret: secret, client_secret_expires_at: 0 })]);
    await db.query('INSERT INTO oauth_clients (client_id, metadata) VALUES ($1, $2)', ['old-public', JSON.stringify({ client_id: 'old-public', redirect_uris: ['https://app.example/cb'] })]);
    const insert = 'INSERT INTO oauth_tokens (token_hash, kind, client_id, key_prefix, resource, expires_at) VALUES ($1, $2, $3, $4, NULL, $5)';
    const later = new Date(Date.now() + 3_600_000);
    await db.query(insert, [hashSecret('mcp_at_old'), 'access', 'old-public', keyPrefix, later]);
    await db.query(insert, [hashSecret('mcp_rt_old'), 'refresh', 'old-public', keyPrefix, later]);

    expect(await migrateKeyStore(db)).toEqual(KEY_STORE_MIGRATIONS.slice(2).map((m) => m.version));
    const store = new OAuthStore(db);
    const { rows } = await db.query<{ metadata: unknown; client_secret_hash: string | null }>('SELECT metadata, client_secret_hash FROM oauth_clients ORDER BY client_id');
    expect(rows.map((r) => r.client_secret_hash)).toEqual([hashSecret(secret), null]);
    expect(JSON.stringify(rows.map((r) => r.metadata))).not.toContain(secret);
    expect(await store.authenticateClient('old-confidential', secret)).toEqual({ client: expect.objectContaining({ client_id: 'old-confidential' }) });
    expect(await store.authenticateClient('old-confidential', 'd'.repeat(64))).toEqual({ refused: 'wrong_secret' });
    expect(await store.authenticateClient('old-public', undefined)).toEqual({ client: expect.objectContaining({ client_id: 'old-public' }) });

    expect(await store.resolveAccessToken('mcp_at_old')).toMatchObject({ client_id: 'old-public', prefix: keyPrefix });
    const outcome = await store.refreshTokens('mcp_rt_old', 'old-public');
    expect(outcome).toEqual({ tokens: expect.objectContaining({ access_token: expect.stringMatching(/^mcp_at_/) }) });
    expect(await store.refreshTokens('mcp_rt_old', 'old-public')).toEqual({ refused: 'reused' });
  });
});
