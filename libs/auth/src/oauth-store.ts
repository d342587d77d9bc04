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
  /** The client's name as it registered itself (unverified), for the audit. */
  client_name: string | null;
  /** The person the key is bound to (a grant given by signing in on the consent page), else null (a pasted key). */
  user: { id: string; email: string } | null;
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

/**
 * What dynamic registration may take (docs/mcp.md, "OAuth for connector UIs"): `perAddress` registrations per `windowS` from
 * one client address (the gateway's rate limiter), and `total` clients in the store. 10 an hour is far above a
 * connector's one registration per install; 10,000 clients of at most 8 KB each bound the table to about 80 MB.
 */
export const REGISTRATION_LIMITS = { perAddress: 10, windowS: 3_600, total: 10_000 } as const;

/** A client is registered, or refused because the store holds its maximum of clients. */
export type Registration = { registered: true } | { refused: 'total'; retryAfterS: number };

/** Rows each purge statement deletes at most: every purge stays a few short statements, however much expired. */
const PURGE_BATCH = 1_000;

export interface OAuthStoreOptions {
  codeTtlS?: number;
  accessTtlS?: number;
  refreshTtlS?: number;
  /** A registered client that received no code within this is deleted (a day). */
  unusedClientTtlS?: number;
  /** Clients registerClient keeps at most (REGISTRATION_LIMITS.total). */
  maxClients?: number;
  /** Writes purge what expired at most this often per process (a minute). */
  purgeEveryMs?: number;
  now?: () => number;
}

/** Rows one purge deleted. */
export interface Purged {
  codes: number;
  tokens: number;
  grants: number;
  clients: number;
  /** A person's grant keys (minted on the consent page) left without a grant or a pending code: revoked. */
  keys: number;
}

/**
 * OAuth clients, authorization codes and tokens of the MCP endpoint, in the key store. Codes and tokens are stored only
 * as SHA-256 hashes, each bound to one API key: revoking the key refuses its tokens on the next request. What expired
 * is purged as the store is written (at most every `purgeEveryMs`): the tables grow only with writes, so they stay
 * bounded without a timer of their own.
 */
export class OAuthStore {
  readonly codeTtlS: number;
  readonly accessTtlS: number;
  readonly refreshTtlS: number;
  readonly unusedClientTtlS: number;
  readonly maxClients: number;
  private readonly purgeEveryMs: number;
  private lastPurge = Number.NEGATIVE_INFINITY;
  private purging = false;
  private readonly now: () => number;

  constructor(private readonly db: SqlPort, options: OAuthStoreOptions = {}) {
    this.codeTtlS = options.codeTtlS ?? 600;
    this.accessTtlS = options.accessTtlS ?? 3600;
    this.refreshTtlS = options.refreshTtlS ?? 30 * 86_400;
    this.unusedClientTtlS = options.unusedClientTtlS ?? 86_400;
    this.maxClients = options.maxClients ?? REGISTRATION_LIMITS.total;
    this.purgeEveryMs = options.purgeEveryMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  private at(ttlS: number): Date {
    return new Date(this.now() + ttlS * 1000);
  }

  /** Keeps a client's metadata, uncapped (registerClient is the capped way in); its secret only as a SHA-256 hash. */
  async saveClient(clientId: string, metadata: Record<string, unknown>): Promise<void> {
    await this.insertClient(clientId, metadata, Number.POSITIVE_INFINITY);
    await this.purgeIfDue();
  }

  /** Inserts the client unless the store holds `max` clients already (one statement); whether it did. */
  private async insertClient(clientId: string, metadata: Record<string, unknown>, max: number): Promise<boolean> {
    const { client_secret: secret, ...rest } = metadata;
    const secretHash = typeof secret === 'string' && secret !== '' ? hashSecret(secret) : null;
    const params = [clientId, JSON.stringify(rest), secretHash, new Date(this.now())];
    const { rows } = Number.isFinite(max)
      ? await this.db.query(
          'INSERT INTO oauth_clients (client_id, metadata, client_secret_hash, created_at) SELECT $1, $2, $3, $4 WHERE (SELECT count(*) FROM oauth_clients) < $5 RETURNING client_id',
          [...params, max],
        )
      : await this.db.query('INSERT INTO oauth_clients (client_id, metadata, client_secret_hash, created_at) VALUES ($1, $2, $3, $4) RETURNING client_id', params);
    return rows.length === 1;
  }

  /**
   * A dynamic registration (RFC 7591): kept unless the store holds `maxClients` clients (checked in the INSERT itself:
   * concurrent registrations on several connections may pass it by their number). Retry-After of a refusal: when the
   * oldest client never used is deleted.
   */
  async registerClient(clientId: string, metadata: Record<string, unknown>): Promise<Registration> {
    await this.purgeIfDue();
    if (await this.insertClient(clientId, metadata, this.maxClients)) return { registered: true };
    const { rows } = await this.db.query<{ at: unknown }>('SELECT min(created_at) AS at FROM oauth_clients WHERE used_at IS NULL');
    const at = rows[0]?.at;
    const retryAfterS = at ? Math.max(1, Math.ceil((new Date(at as string).getTime() + this.unusedClientTtlS * 1000 - this.now()) / 1000)) : this.unusedClientTtlS;
    return { refused: 'total', retryAfterS };
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

  /** A code for a consent given; its client counts as used from now on (it is not purged as an unused registration). */
  async createCode(code: OAuthCode): Promise<string> {
    const raw = randomBase62(TOKEN_LENGTH);
    await this.db.query(
      'INSERT INTO oauth_codes (code_hash, client_id, key_prefix, code_challenge, redirect_uri, resource, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [hashSecret(raw), code.client_id, code.key_prefix, code.code_challenge, code.redirect_uri, code.resource, this.at(this.codeTtlS)],
    );
    await this.db.query('UPDATE oauth_clients SET used_at = $2 WHERE client_id = $1 AND used_at IS NULL', [code.client_id, new Date(this.now())]);
    await this.purgeIfDue();
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
    const tokens = await this.db.transaction(async (tx) => {
      const grantId = randomUUID();
      await tx.query('INSERT INTO oauth_grants (grant_id, client_id, key_prefix, resource) VALUES ($1, $2, $3, $4)', [grantId, grant.client_id, grant.key_prefix, grant.resource]);
      return this.insertTokens(tx, grantId, grant);
    });
    await this.purgeIfDue();
    return tokens;
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
    const outcome = await this.rotate(raw, clientId);
    await this.purgeIfDue();
    return outcome;
  }

  private async rotate(raw: string, clientId: string): Promise<RefreshOutcome> {
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
      `SELECT t.client_id, t.expires_at AS token_expires_at, k.kind, k.prefix, c.metadata->>'client_name' AS client_name,
              u.id AS user_id, u.email AS user_email,
              p.id, p.name, p.allowed_origins, p.retention_days, p.created_at, p.org_id, p.timezone
         FROM oauth_tokens t JOIN api_keys k ON k.prefix = t.key_prefix JOIN projects p ON p.id = k.project_id
         JOIN oauth_clients c ON c.client_id = t.client_id LEFT JOIN users u ON u.id = k.user_id
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
      client_name: typeof row.client_name === 'string' ? row.client_name : null,
      user: row.user_id ? { id: String(row.user_id), email: String(row.user_email) } : null,
    };
  }

  /** Forgets a token of this client, and with a refresh token its whole grant (RFC 7009 2.1); unknown tokens are ignored. */
  async revokeToken(raw: string, clientId: string): Promise<void> {
    const hash = hashSecret(raw);
    await this.db.transaction(async (tx) => {
      await tx.query("DELETE FROM oauth_grants WHERE grant_id IN (SELECT grant_id FROM oauth_tokens WHERE token_hash = $1 AND client_id = $2 AND kind = 'refresh')", [hash, clientId]);
      await tx.query('DELETE FROM oauth_tokens WHERE token_hash = $1 AND client_id = $2', [hash, clientId]);
    });
    await this.revokeUnusedGrantKeys(this.db, new Date(this.now()));
  }

  /**
   * Deletes what can no longer be used: expired codes and tokens (a rotated refresh token stays until it expires, so
   * that presenting it again is still recognised as reuse), grants left without a token, and registered clients that
   * received no code within `unusedClientTtlS`. Each statement takes at most PURGE_BATCH rows, by index.
   */
  async purgeExpired(): Promise<Purged> {
    const now = new Date(this.now());
    const codes = await this.db.query('DELETE FROM oauth_codes WHERE code_hash IN (SELECT code_hash FROM oauth_codes WHERE expires_at <= $1 LIMIT $2) RETURNING 1', [now, PURGE_BATCH]);
    const { tokens, grants } = await this.db.transaction(async (tx) => {
      const gone = await tx.query<{ grant_id: string }>(
        'DELETE FROM oauth_tokens WHERE token_hash IN (SELECT token_hash FROM oauth_tokens WHERE expires_at <= $1 LIMIT $2) RETURNING grant_id',
        [now, PURGE_BATCH],
      );
      const emptied = await tx.query(
        'DELETE FROM oauth_grants g WHERE g.grant_id = ANY($1::text[]) AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = g.grant_id) RETURNING 1',
        [[...new Set(gone.rows.map((r) => r.grant_id))]],
      );
      return { tokens: gone.rows.length, grants: emptied.rows.length };
    });
    const clients = await this.db.query(
      'DELETE FROM oauth_clients WHERE client_id IN (SELECT client_id FROM oauth_clients WHERE used_at IS NULL AND created_at <= $1 LIMIT $2) RETURNING 1',
      [new Date(now.getTime() - this.unusedClientTtlS * 1000), PURGE_BATCH],
    );
    return { codes: codes.rows.length, tokens, grants, clients: clients.rows.length, keys: await this.revokeUnusedGrantKeys(this.db, now) };
  }

  /**
   * Revokes the read keys minted for a person's grant (user_id, no session: the consent page's) that no grant and no
   * pending code uses any more, once older than a code's life (a key is minted just before its code): an expired or
   * revoked grant then shows as a revoked key in the project's key list instead of a live one nobody can use.
   */
  private async revokeUnusedGrantKeys(q: SqlQueryable, now: Date): Promise<number> {
    const { rows } = await q.query(
      `UPDATE api_keys SET revoked_at = $1 WHERE prefix IN (
         SELECT k.prefix FROM api_keys k
          WHERE k.user_id IS NOT NULL AND k.session_id IS NULL AND k.revoked_at IS NULL AND k.created_at <= $2
            AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.key_prefix = k.prefix)
            AND NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.key_prefix = k.prefix)
          LIMIT $3) RETURNING 1`,
      [now, new Date(now.getTime() - this.codeTtlS * 1000), PURGE_BATCH],
    );
    return rows.length;
  }

  /** Purges when the last purge of this process is `purgeEveryMs` old; a failed purge is left to the next write. */
  private async purgeIfDue(): Promise<void> {
    if (this.purging || this.now() - this.lastPurge < this.purgeEveryMs) return;
    this.purging = true;
    this.lastPurge = this.now();
    try {
      await this.purgeExpired();
    } catch {
      // The write it follows succeeded; what expired stays until the next purge.
    } finally {
      this.purging = false;
    }
  }
}
