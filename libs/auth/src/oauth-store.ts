import { type KeyKind, hashSecret, randomBase62 } from './key-format';
import { type Project, toProject } from './key-store';
import type { SqlPort } from './sql-port';

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

  async saveClient(clientId: string, metadata: Record<string, unknown>): Promise<void> {
    await this.db.query('INSERT INTO oauth_clients (client_id, metadata) VALUES ($1, $2)', [clientId, JSON.stringify(metadata)]);
  }

  async getClient(clientId: string): Promise<Record<string, unknown> | null> {
    const { rows } = await this.db.query<{ metadata: Record<string, unknown> | string }>('SELECT metadata FROM oauth_clients WHERE client_id = $1', [clientId]);
    const m = rows[0]?.metadata;
    return m === undefined ? null : typeof m === 'string' ? (JSON.parse(m) as Record<string, unknown>) : m;
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

  /** Takes the code out: a code is exchanged once. */
  async consumeCode(raw: string, clientId: string): Promise<OAuthCode | null> {
    const { rows } = await this.db.query<OAuthCode>(
      'DELETE FROM oauth_codes WHERE code_hash = $1 AND client_id = $2 AND expires_at > $3 RETURNING client_id, key_prefix, code_challenge, redirect_uri, resource',
      [hashSecret(raw), clientId, new Date(this.now())],
    );
    return rows[0] ?? null;
  }

  async issueTokens(grant: OAuthGrant): Promise<OAuthTokens> {
    const access = ACCESS_PREFIX + randomBase62(TOKEN_LENGTH);
    const refresh = REFRESH_PREFIX + randomBase62(TOKEN_LENGTH);
    const insert = 'INSERT INTO oauth_tokens (token_hash, kind, client_id, key_prefix, resource, expires_at) VALUES ($1, $2, $3, $4, $5, $6)';
    await this.db.transaction(async (tx) => {
      await tx.query(insert, [hashSecret(access), 'access', grant.client_id, grant.key_prefix, grant.resource, this.at(this.accessTtlS)]);
      await tx.query(insert, [hashSecret(refresh), 'refresh', grant.client_id, grant.key_prefix, grant.resource, this.at(this.refreshTtlS)]);
    });
    return { access_token: access, refresh_token: refresh, expires_in: this.accessTtlS };
  }

  /** Takes the refresh token out (rotation: each one is used once); null when unknown, expired or another client's. */
  async consumeRefreshToken(raw: string, clientId: string): Promise<OAuthGrant | null> {
    const { rows } = await this.db.query<OAuthGrant>(
      "DELETE FROM oauth_tokens WHERE token_hash = $1 AND kind = 'refresh' AND client_id = $2 AND expires_at > $3 RETURNING client_id, key_prefix, resource",
      [hashSecret(raw), clientId, new Date(this.now())],
    );
    return rows[0] ?? null;
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

  /** Forgets a token of this client (access or refresh); unknown tokens are ignored (RFC 7009). */
  async revokeToken(raw: string, clientId: string): Promise<void> {
    await this.db.query('DELETE FROM oauth_tokens WHERE token_hash = $1 AND client_id = $2', [hashSecret(raw), clientId]);
  }
}
