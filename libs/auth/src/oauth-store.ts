import { randomUUID } from 'node:crypto';
import { type KeyKind, hashSecret, randomBase62, verifySecret } from './key-format';
import { type Project, toProject } from './key-store';
import type { SqlPort, SqlQueryable } from './sql-port';

/** What an authorization code or a refresh token carries: the client and the key the site owner pasted. */
export interface OAuthGrant {
  client_id: string;
  key_prefix: string;
  resource: string | null;
}

export interface OAuthCode extends OAuthGrant {
  code_challenge: string;
  redirect_uri: string;
}

/** A live access token resolved to its key: only while the key is not revoked. */
export interface OAuthAccess {
  client_id: string;
  kind: KeyKind;
  prefix: string;
  project: Project;
  expires_at: number;
}

export interface OAuthTokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

/** A client's metadata when the credentials it presented hold, else why not. */
export type ClientAuthentication = { client: Record<string, unknown> } | { refused: 'unknown_client' | 'secret_required' | 'wrong_secret' | 'secret_expired' };

/** New tokens for a refresh token, else why not; `reused` means the token had been rotated and its grant is now revoked. */
export type RefreshOutcome = { tokens: OAuthTokens } | { refused: 'unknown' | 'reused' | 'key_revoked' };

const TOKEN_LENGTH = 43; // ~256 bits
const ACCESS_PREFIX = 'mcp_at_';
const REFRESH_PREFIX = 'mcp_rt_';
/** Tells an OAuth access token from an API key in an Authorization header. */
export const isOAuthAccessToken = (token: string) => token.startsWith(ACCESS_PREFIX);

export interface OAuthStoreOptions {
  codeTtlS?: number;
  accessTtlS?: number;
  refreshTtlS?: number;
  now?: () => number;
}

/**
 * OAuth clients, authorization codes and tokens of the MCP endpoint, in the key store. Codes and tokens are stored only
 * as SHA-256 hashes, each bound to one API key: revoking the key refuses its tokens on the next request.
 */
export class OAuthStore {
  readonly codeTtlS: number;
  readonly accessTtlS: number;
  readonly refreshTtlS: number;
  private readonly now: () => number;

  constructor(private readonly db: SqlPort, options: OAuthStoreOptions = {}) {
    this.codeTtlS = options.codeTtlS ?? 600;
    this.accessTtlS = options.accessTtlS ?? 3600;
    this.refreshTtlS = options.refreshTtlS ?? 30 * 86_400;
    this.now = options.now ?? Date.now;
  }

  private at(ttlS: number): Date {
    return new Date(this.now() + ttlS * 1000);
  }

  /** Keeps a client's metadata; its secret (RFC 7591 client_secret), if any, only as a SHA-256 hash. */
  async saveClient(clientId: string, metadata: Record<string, unknown>): Promise<void> {
    const { client_secret: secret, ...rest } = metadata;
    const secretHash = typeof secret === 'string' && secret !== '' ? hashSecret(secret) : null;
    await this.db.query('INSERT INTO oauth_clients (client_id, metadata, client_secret_hash) VALUES ($1, $2, $3)', [clientId, JSON.stringify(rest), secretHash]);
  }

  /** A client's metadata, never its secret. */
  async getClient(clientId: string): Promise<Record<string, unknown> | null> {
    return (await this.findClient(clientId))?.metadata ?? null;
  }

  /** RFC 6749 2.3.1: a client with a secret must present it (compared in constant time with the hash) before it expires. */
  async authenticateClient(clientId: string, secret: string | undefined): Promise<ClientAuthentication> {
    const found = await this.findClient(clientId);
    if (!found) return { refused: 'unknown_client' };
    if (found.secretHash === null) return { client: found.metadata };
    if (secret === undefined || secret === '') return { refused: 'secret_required' };
    if (!verifySecret(secret, found.secretHash)) return { refused: 'wrong_secret' };
    const expiresAt = Number(found.metadata['client_secret_expires_at'] ?? 0);
    if (expiresAt > 0 && expiresAt * 1000 < this.now()) return { refused: 'secret_expired' };
    return { client: found.metadata };
  }

  private async findClient(clientId: string): Promise<{ metadata: Record<string, unknown>; secretHash: string | null } | null> {
    const { rows } = await this.db.query<{ metadata: Record<string, unknown> | string; client_secret_hash: string | null }>(
      'SELECT metadata, client_secret_hash FROM oauth_clients WHERE client_id = $1',
      [clientId],
    );
    const row = rows[0];
    if (!row) return null;
    const metadata = typeof row.metadata === 'string' ? (JSON.parse(row.metadata) as Record<string, unknown>) : row.metadata;
    return { metadata, secretHash: row.client_secret_hash };
  }

  async createCode(code: OAuthCode): Promise<string> {
    const raw = randomBase62(TOKEN_LENGTH);
    await this.db.query(
      'INSERT INTO oauth_codes (code_hash, client_id, key_prefix, code_challenge, redirect_uri, resource, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [hashSecret(raw), code.client_id, code.key_prefix, code.code_challenge, code.redirect_uri, code.resource, this.at(this.codeTtlS)],
    );
    return raw;
  }

  /** The unexpired code of this client, left in place (the PKCE check comes before the exchange). */
  async findCode(raw: string, clientId: string): Promise<OAuthCode | null> {
    const { rows } = await this.db.query<OAuthCode>(
      'SELECT client_id, key_prefix, code_challenge, redirect_uri, resource FROM oauth_codes WHERE code_hash = $1 AND client_id = $2 AND expires_at > $3',
      [hashSecret(raw), clientId, new Date(this.now())],
    );
    return rows[0] ?? null;
  }

  /** Takes the code out: a code is exchanged once, and not at all once its key is revoked (null, the code burnt). */
  async consumeCode(raw: string, clientId: string): Promise<OAuthCode | null> {
    const { rows } = await this.db.query<OAuthCode & { key_live: boolean }>(
      `DELETE FROM oauth_codes WHERE code_hash = $1 AND client_id = $2 AND expires_at > $3
       RETURNING client_id, key_prefix, code_challenge, redirect_uri, resource,
                 EXISTS (SELECT 1 FROM api_keys k WHERE k.prefix = oauth_codes.key_prefix AND k.revoked_at IS NULL) AS key_live`,
      [hashSecret(raw), clientId, new Date(this.now())],
    );
    const row = rows[0];
    if (!row?.key_live) return null;
    const { key_live: _live, ...code } = row;
    return code;
  }

  /** Starts a grant (an exchanged code) with its first access and refresh tokens. */
  async issueTokens(grant: OAuthGrant): Promise<OAuthTokens> {
    return this.db.transaction(async (tx) => {
      const grantId = randomUUID();
      await tx.query('INSERT INTO oauth_grants (grant_id, client_id, key_prefix, resource) VALUES ($1, $2, $3, $4)', [grantId, grant.client_id, grant.key_prefix, grant.resource]);
      return this.insertTokens(tx, grantId, grant);
    });
  }

  private async insertTokens(tx: SqlQueryable, grantId: string, grant: OAuthGrant): Promise<OAuthTokens> {
    const access = ACCESS_PREFIX + randomBase62(TOKEN_LENGTH);
    const refresh = REFRESH_PREFIX + randomBase62(TOKEN_LENGTH);
    const insert = 'INSERT INTO oauth_tokens (token_hash, kind, client_id, key_prefix, resource, expires_at, grant_id) VALUES ($1, $2, $3, $4, $5, $6, $7)';
    await tx.query(insert, [hashSecret(access), 'access', grant.client_id, grant.key_prefix, grant.resource, this.at(this.accessTtlS), grantId]);
    await tx.query(insert, [hashSecret(refresh), 'refresh', grant.client_id, grant.key_prefix, grant.resource, this.at(this.refreshTtlS), grantId]);
    return { access_token: access, refresh_token: refresh, expires_in: this.accessTtlS };
  }

  /**
   * Rotates a refresh token (RFC 9700 4.14.2): it is marked used and new tokens join its grant. A used one presented
   * again (by anyone: the token leaked or was replayed) revokes the whole grant; a revoked key refreshes nothing.
   */
  async refreshTokens(raw: string, clientId: string): Promise<RefreshOutcome> {
    const hash = hashSecret(raw);
    const now = new Date(this.now());
    return this.db.transaction(async (tx): Promise<RefreshOutcome> => {
      const { rows } = await tx.query<{ grant_id: string; client_id: string; used_at: unknown; expires_at: unknown }>(
        "SELECT grant_id, client_id, used_at, expires_at FROM oauth_tokens WHERE token_hash = $1 AND kind = 'refresh'",
        [hash],
      );
      const token = rows[0];
      const revokeGrant = async () => {
        await tx.query('DELETE FROM oauth_grants WHERE grant_id = $1', [token!.grant_id]);
        return { refused: 'reused' as const };
      };
      if (!token) return { refused: 'unknown' };
      if (token.used_at !== null) return revokeGrant();
      if (token.client_id !== clientId || new Date(token.expires_at as string).getTime() <= now.getTime()) return { refused: 'unknown' };
      // The grant row is locked before any token row, in the order a concurrent revocation's DELETE takes them.
      const grants = await tx.query<OAuthGrant & { revoked_at: unknown }>(
        'SELECT g.client_id, g.key_prefix, g.resource, k.revoked_at FROM oauth_grants g JOIN api_keys k ON k.prefix = g.key_prefix WHERE g.grant_id = $1 FOR UPDATE OF g',
        [token.grant_id],
      );
      const grant = grants.rows[0];
      if (!grant) return { refused: 'unknown' };
      if (grant.revoked_at !== null) return { refused: 'key_revoked' };
      // A concurrent refresh with the same token got here first: that is reuse too.
      const marked = await tx.query('UPDATE oauth_tokens SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL RETURNING token_hash', [hash, now]);
      if (marked.rows.length === 0) return revokeGrant();
      return { tokens: await this.insertTokens(tx, token.grant_id, { client_id: grant.client_id, key_prefix: grant.key_prefix, resource: grant.resource }) };
    });
  }

  /** The key and project behind a live access token; null when unknown, expired, or its key was revoked. */
  async resolveAccessToken(raw: string): Promise<OAuthAccess | null> {
    const { rows } = await this.db.query(
      `SELECT t.client_id, t.expires_at AS token_expires_at, k.kind, k.prefix,
              p.id, p.name, p.allowed_origins, p.retention_days, p.created_at
         FROM oauth_tokens t JOIN api_keys k ON k.prefix = t.key_prefix JOIN projects p ON p.id = k.project_id
        WHERE t.token_hash = $1 AND t.kind = 'access' AND t.expires_at > $2 AND k.revoked_at IS NULL`,
      [hashSecret(raw), new Date(this.now())],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      client_id: String(row.client_id),
      kind: row.kind as KeyKind,
      prefix: String(row.prefix),
      expires_at: new Date(row.token_expires_at as string).getTime(),
      project: toProject(row),
    };
  }

  /** Forgets a token of this client, and with a refresh token its whole grant (RFC 7009 2.1); unknown tokens are ignored. */
  async revokeToken(raw: string, clientId: string): Promise<void> {
    const hash = hashSecret(raw);
    await this.db.transaction(async (tx) => {
      await tx.query("DELETE FROM oauth_grants WHERE grant_id IN (SELECT grant_id FROM oauth_tokens WHERE token_hash = $1 AND client_id = $2 AND kind = 'refresh')", [hash, clientId]);
      await tx.query('DELETE FROM oauth_tokens WHERE token_hash = $1 AND client_id = $2', [hash, clientId]);
    });
  }
}
