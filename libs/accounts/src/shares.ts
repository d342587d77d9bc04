import { type KeyStore, SavedDefinitions, type SqlQueryable, hashSecret, randomBase62, segmentOf, verifySecret } from '@analytics/auth';
import { ApiError, SHARES_PER_PROJECT, SHARE_TOKEN, SHARE_UNLOCK_TTL_MS, type Share, type ShareInput } from '@analytics/schema';
import { type AccountsContext, isoOf, isoOrNull } from './context';
import type { SignInThrottle } from './sign-in-throttle';

// The public id of a share (and the api_keys prefix of its link's own credential) and the secret of its token, as keys'.
const ID_LENGTH = 12;
const SECRET_LENGTH = 32;

/** A share's segment as a read takes it: the snapshot made at creation. */
export type ShareSegment = Share['segment'];

/** What creating a link takes beyond its body: who makes it, and the base of its URL. */
export interface ShareCreation {
  createdBy: string | null;
  /** PUBLIC_URL, else the request's own origin. */
  baseUrl: string;
}

const COLUMNS = 'id, project_id, name, token_hash, password_hash, expires_at, segment, embed_origins, created_at, revoked_at';

const payloadError = (field: string, message: string) => new ApiError('invalid_payload', { details: { formErrors: [], fieldErrors: { [field]: [message] } } });

function toShare(row: Record<string, unknown>): Share {
  return {
    id: String(row.id),
    name: (row.name as string | null) ?? null,
    expires_at: isoOrNull(row.expires_at),
    has_password: row.password_hash !== null && row.password_hash !== undefined,
    segment: segmentOf(row.segment),
    embed_origins: (row.embed_origins as string[] | null) ?? [],
    created_at: isoOf(row.created_at),
  };
}

/**
 * Share links (issue 46, docs/saved-and-shared.md "Share links and embeds"). A link's token is `shr_{id}_{secret}`; the
 * share row keeps the secret's SHA-256. Its credentials are rk_ rows of api_keys bound to the share (`share_id`), so
 * the authenticator, its cache, the revocation epoch and the invalidation bus hold for them as for any key:
 * - without a password, the link's token is itself the credential (the row's prefix is the share's id);
 * - with one, the token reads nothing: POST /v1/share/unlock with the password mints a credential valid an hour at
 *   most (never past the link's expiry); wrong guesses are throttled per link and per client address.
 * Revoking the link revokes every credential of it on every instance before the answer; its expiry is each
 * credential's expiry, which the authenticator checks cached or not.
 */
export class Shares {
  private readonly saved: SavedDefinitions;

  constructor(
    private readonly ctx: AccountsContext,
    private readonly keyStore: KeyStore,
    private readonly throttle: SignInThrottle,
  ) {
    this.saved = new SavedDefinitions(ctx.db);
  }

  /** POST /admin/projects/:id/shares: the link, shown once (its URL holds the token). */
  async create(projectId: string, input: ShareInput, creation: ShareCreation): Promise<{ share: Share; url: string }> {
    const now = this.ctx.now();
    if (input.expires_at !== undefined && Date.parse(input.expires_at) <= now) throw payloadError('expires_at', 'must be in the future');
    let segment: ShareSegment = null;
    if (input.segment !== undefined) {
      const found = await this.saved.resolveSegment(projectId, input.segment);
      if (!found) throw payloadError('segment', 'no saved segment of this project has this id');
      segment = { id: found.id, name: found.name, filters: Array.isArray(found.filters) ? found.filters : [] };
    }
    const passwordHash = input.password === undefined ? null : await this.ctx.hasher.hash(input.password);
    const id = randomBase62(ID_LENGTH);
    const secret = randomBase62(SECRET_LENGTH);
    const expiresAt = input.expires_at === undefined ? null : new Date(input.expires_at).toISOString();
    const row = await this.ctx.db.transaction(async (tx) => {
      // Serialises the count with other creations of the project's links.
      await tx.query('SELECT id FROM projects WHERE id = $1 FOR UPDATE', [projectId]);
      const { rows: live } = await tx.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM shares WHERE project_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)',
        [projectId, new Date(now).toISOString()],
      );
      if (Number(live[0]?.n ?? 0) >= SHARES_PER_PROJECT) throw new ApiError('limit_reached', { details: { kind: 'share', limit: SHARES_PER_PROJECT } });
      const { rows } = await tx.query(
        `INSERT INTO shares (id, project_id, name, token_hash, password_hash, expires_at, segment, embed_origins, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
        [id, projectId, input.name ?? null, hashSecret(secret), passwordHash, expiresAt, segment === null ? null : JSON.stringify(segment), input.embed_origins ?? [], creation.createdBy, new Date(now).toISOString()],
      );
      // Without a password the link's token reads at once: its credential is the key row of the share's own id.
      if (passwordHash === null) await this.insertCredential(tx, projectId, id, id, secret, expiresAt);
      return rows[0]!;
    });
    if (passwordHash === null) this.keyStore.announceMinted([id]);
    return { share: toShare(row), url: `${creation.baseUrl.replace(/\/+$/, '')}/share/shr_${id}_${secret}` };
  }

  /** GET /admin/projects/:id/shares: the live links (not revoked, not expired), newest first. */
  async list(projectId: string): Promise<Share[]> {
    const { rows } = await this.ctx.db.query(
      `SELECT ${COLUMNS} FROM shares WHERE project_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2) ORDER BY created_at DESC, id`,
      [projectId, new Date(this.ctx.now()).toISOString()],
    );
    return rows.map(toShare);
  }

  /** DELETE /admin/projects/:id/shares/:share_id: the link and every credential of it are refused everywhere once this returns. */
  async revoke(projectId: string, shareId: string): Promise<Share> {
    const at = new Date(this.ctx.now()).toISOString();
    const { share, prefixes } = await this.ctx.db.transaction(async (tx) => {
      const { rows } = await tx.query(`UPDATE shares SET revoked_at = $3 WHERE id = $1 AND project_id = $2 AND revoked_at IS NULL RETURNING ${COLUMNS}`, [shareId, projectId, at]);
      if (!rows[0]) throw new ApiError('not_found');
      const keys = await tx.query<{ prefix: string }>('UPDATE api_keys SET revoked_at = $2 WHERE share_id = $1 AND revoked_at IS NULL RETURNING prefix', [shareId, at]);
      return { share: toShare(rows[0]), prefixes: keys.rows.map((r) => String(r.prefix)) };
    });
    // The link's own prefix too: a cached lookup of it is dropped even when no credential row was live.
    await this.ctx.keysRevoked([...new Set([...prefixes, shareId])]);
    return share;
  }

  /**
   * POST /v1/share/unlock: what the shared page needs to read. An unknown, revoked or expired link is 404 not_found. A
   * link with a password: without one, 401 invalid_credentials (`details.reason: password_required`, not counted);
   * a wrong one, 401 invalid_credentials counted against the link and the address (429 rate_limited past the bound,
   * checked before any hashing); the right one, a new credential valid SHARE_UNLOCK_TTL_MS at most.
   */
  async unlock(token: string, password: string | undefined, address: string | undefined) {
    const m = SHARE_TOKEN.exec(token);
    if (!m) throw new ApiError('not_found');
    const [, id, secret] = m as unknown as [string, string, string];
    const now = this.ctx.now();
    const { rows } = await this.ctx.db.query(`SELECT s.${COLUMNS.split(', ').join(', s.')}, p.name AS project_name FROM shares s JOIN projects p ON p.id = s.project_id WHERE s.id = $1`, [id]);
    const row = rows[0];
    const expiresAt = isoOrNull(row?.expires_at);
    if (!row || !verifySecret(secret, String(row.token_hash)) || row.revoked_at || (expiresAt !== null && Date.parse(expiresAt) <= now)) throw new ApiError('not_found');
    const share = toShare(row);
    const { created_at: _created, ...shown } = share;
    const answer = (credential: string, until: string | null) => ({ token: credential, expires_at: until, project: { id: String(row.project_id), name: String(row.project_name) }, share: shown });
    if (!share.has_password) return answer(token, expiresAt);

    const keys = this.throttle.keys(id, address);
    await this.throttle.check(keys);
    if (password === undefined) throw new ApiError('invalid_credentials', { details: { reason: 'password_required' } });
    if (!(await this.ctx.hasher.verify(password, String(row.password_hash)))) {
      await this.throttle.failed(keys);
      throw new ApiError('invalid_credentials', { details: { reason: 'wrong_password' } });
    }
    await this.throttle.succeeded(keys);
    const until = new Date(Math.min(now + SHARE_UNLOCK_TTL_MS, expiresAt === null ? Infinity : Date.parse(expiresAt))).toISOString();
    const prefix = randomBase62(ID_LENGTH);
    const credentialSecret = randomBase62(SECRET_LENGTH);
    await this.ctx.db.transaction(async (tx) => {
      // A revocation racing this unlock: the row lock orders them, and a revoked link mints nothing.
      const { rows: live } = await tx.query('SELECT id FROM shares WHERE id = $1 AND revoked_at IS NULL FOR UPDATE', [id]);
      if (!live[0]) throw new ApiError('not_found');
      await this.insertCredential(tx, String(row.project_id), id, prefix, credentialSecret, until);
    });
    this.keyStore.announceMinted([prefix]);
    return answer(`shr_${prefix}_${credentialSecret}`, until);
  }

  /**
   * The origins that may frame a live link's page (`?embed=1`): its embed_origins; undefined for an unknown, revoked or
   * expired link (its page is then framed by nobody and says the link is not valid).
   */
  async embedOrigins(token: string): Promise<string[] | undefined> {
    const m = SHARE_TOKEN.exec(token);
    if (!m) return undefined;
    const { rows } = await this.ctx.db.query('SELECT token_hash, embed_origins, expires_at, revoked_at FROM shares WHERE id = $1', [m[1]]);
    const row = rows[0];
    const expiresAt = isoOrNull(row?.expires_at);
    if (!row || !verifySecret(m[2]!, String(row.token_hash)) || row.revoked_at || (expiresAt !== null && Date.parse(expiresAt) <= this.ctx.now())) return undefined;
    return (row.embed_origins as string[] | null) ?? [];
  }

  private async insertCredential(tx: SqlQueryable, projectId: string, shareId: string, prefix: string, secret: string, expiresAt: string | null): Promise<void> {
    await tx.query("INSERT INTO api_keys (prefix, project_id, kind, env, secret_hash, expires_at, share_id) VALUES ($1, $2, 'rk', 'live', $3, $4, $5)", [prefix, projectId, hashSecret(secret), expiresAt, shareId]);
  }
}
