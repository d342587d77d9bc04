import { keyStoreBackends } from './test-backends';
import { hashSecret } from './key-format';
import { KeyStore } from './key-store';
import { migrateKeyStore } from './migrate';
import { OAuthStore, isOAuthAccessToken } from './oauth-store';
import type { SqlPort } from './sql-port';

describe.each(keyStoreBackends())('OAuth store on %s', (_name, open) => {
  let db: SqlPort;
  let keys: KeyStore;
  let clock = Date.parse('2026-06-01T00:00:00Z');
  let store: OAuthStore;
  let prefix: string;
  let projectId: string;
  const client = 'client-1';

  beforeAll(async () => {
    db = await open();
    await migrateKeyStore(db);
    keys = new KeyStore(db);
    store = new OAuthStore(db, { now: () => clock });
    const created = await keys.createProject({ name: 'oauth' });
    projectId = created.project.id;
    prefix = created.keys.rk.split('_')[2]!;
    await store.saveClient(client, { client_id: client, redirect_uris: ['https://app.example/cb'], client_name: 'App' });
  });
  afterAll(() => db.close());
  beforeEach(() => {
    clock = Date.parse('2026-06-01T00:00:00Z');
  });

  const grant = () => ({ client_id: client, key_prefix: prefix, code_challenge: 'challenge', redirect_uri: 'https://app.example/cb', resource: null });

  it('keeps a registered client\'s metadata', async () => {
    expect(await store.getClient(client)).toEqual({ client_id: client, redirect_uris: ['https://app.example/cb'], client_name: 'App' });
    expect(await store.getClient('nope')).toBeNull();
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

  it('resolves an access token to its key and project until it expires', async () => {
    const { access_token, expires_in } = await store.issueTokens(grant());
    expect(isOAuthAccessToken(access_token)).toBe(true);
    expect(await store.resolveAccessToken(access_token)).toMatchObject({ client_id: client, kind: 'rk', prefix, project: { id: projectId, name: 'oauth' } });
    clock += expires_in * 1000 + 1;
    expect(await store.resolveAccessToken(access_token)).toBeNull();
  });

  it('rotates refresh tokens: each is used once, and only by its client', async () => {
    const { refresh_token } = await store.issueTokens(grant());
    expect(await store.consumeRefreshToken(refresh_token, 'other-client')).toBeNull();
    expect(await store.consumeRefreshToken(refresh_token, client)).toMatchObject({ client_id: client, key_prefix: prefix });
    expect(await store.consumeRefreshToken(refresh_token, client)).toBeNull();
  });

  it('forgets a revoked token, and refuses every token of a revoked key at once', async () => {
    const a = await store.issueTokens(grant());
    await store.revokeToken(a.access_token, client);
    expect(await store.resolveAccessToken(a.access_token)).toBeNull();
    const b = await store.issueTokens(grant());
    expect(await store.resolveAccessToken(b.access_token)).not.toBeNull();
    await keys.revokeKey(prefix);
    expect(await store.resolveAccessToken(b.access_token)).toBeNull();
  });
});
