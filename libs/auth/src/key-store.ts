import { randomUUID } from 'node:crypto';
import { type KeyEnv, type KeyKind, mintKey } from './key-format';
import { AlertStore } from './alert-store';
import { ReportStore } from './reports';
import { Annotations } from './annotations';
import { SavedDefinitions } from './saved-definitions';
import type { SqlPort } from './sql-port';
import type { MintedKeyResponse, Project, SavedLookup, ShareScope } from '@analytics/schema';

export const DEFAULT_RETENTION_DAYS = 365;

export type { Project };

export interface KeyRecord {
  prefix: string;
  project_id: string;
  kind: KeyKind;
  env: KeyEnv;
  secret_hash: string;
  created_at: string;
  revoked_at: string | null;
  /** Set on a key minted for a person (a session's read key): refused from then on. */
  expires_at: string | null;
  /** Set on a share link's credential (presented as `shr_…`): the share it reads for and its segment's snapshot. */
  share: ShareScope | null;
}

/** Whom a key is minted for, beside its project: a signed-in user's read key ends with its session, its expiry, or the membership. */
export interface KeyBinding {
  user_id: string;
  session_id?: string;
  expires_at?: string;
}

/** A key as GET /admin/projects/:id/keys lists it: never its secret. */
export interface KeyInfo {
  prefix: string;
  kind: KeyKind;
  env: KeyEnv;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** A key as shown once at creation: the whole key string plus its public fields. */
export type MintedKey = MintedKeyResponse;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v: string) => UUID.test(v);

export function toProject(row: Record<string, unknown>): Project {
  return {
    id: String(row.id),
    name: String(row.name),
    allowed_origins: (row.allowed_origins as string[] | null) ?? [],
    retention_days: Number(row.retention_days),
    created_at: new Date(row.created_at as string).toISOString(),
    org_id: row.org_id ? String(row.org_id) : null,
    // A store before migration 012 (or a row read without the column) counts in UTC.
    timezone: typeof row.timezone === 'string' && row.timezone !== '' ? row.timezone : 'UTC',
  };
}

const isoOrNull = (v: unknown) => (v ? new Date(v as string).toISOString() : null);

/** A share's segment snapshot as stored (jsonb: an object from pg and PGlite, a string from some drivers). */
export function segmentOf(v: unknown): ShareScope['segment'] {
  if (v === null || v === undefined) return null;
  const o = (typeof v === 'string' ? JSON.parse(v) : v) as { id: string; name: string; filters: unknown[] };
  return { id: String(o.id), name: String(o.name), filters: Array.isArray(o.filters) ? o.filters : [] };
}

/** Projects and API keys in Postgres. Secrets are stored only as SHA-256 hashes. */
export class KeyStore {
  private readonly mintedListeners: Array<(prefix: string) => void> = [];
  /** The projects' saved goals, funnels and segments (same database): whoever holds the key store reaches them. */
  readonly saved: SavedDefinitions;
  /** The projects' annotations (issue 48, same database, migration 013). */
  readonly annotations: Annotations;
  /** What the reads (read-api, the MCP gateway) resolve through: the saved definitions, and the annotations. */
  readonly lookup: SavedLookup;
  /** The projects' alerts and their deliveries (same database, migration 015). */
  readonly alerts: AlertStore;
  /** The projects' scheduled email reports and their send log (same database, migration 014). */
  readonly reports: ReportStore;

  constructor(private readonly db: SqlPort) {
    this.saved = new SavedDefinitions(db);
    this.annotations = new Annotations(db);
    this.lookup = { list: (projectId, kind) => this.saved.list(projectId, kind), get: (projectId, kind, id) => this.saved.get(projectId, kind, id), annotations: this.annotations };
    this.alerts = new AlertStore(db);
    this.reports = new ReportStore(db);
  }

  /** Called with each prefix once its key is committed (the authenticator's known set, the other instances). */
  onMinted(listener: (prefix: string) => void): void {
    this.mintedListeners.push(listener);
  }

  /** Keys committed by another module of the key store's database (share credentials): announced as createKey does. */
  announceMinted(prefixes: string[]): void {
    this.minted(prefixes);
  }

  private minted(prefixes: string[]): void {
    for (const prefix of prefixes) for (const listener of this.mintedListeners) listener(prefix);
  }

  /** Prefixes of every key (revoked ones too: they still need their lookup to be refused as revoked), or those since a time. */
  async listPrefixes(since?: Date): Promise<Array<{ prefix: string; created_at: Date }>> {
    const { rows } = since
      ? await this.db.query<{ prefix: string; created_at: string }>('SELECT prefix, created_at FROM api_keys WHERE created_at >= $1', [since.toISOString()])
      : await this.db.query<{ prefix: string; created_at: string }>('SELECT prefix, created_at FROM api_keys', []);
    return rows.map((r) => ({ prefix: String(r.prefix), created_at: new Date(r.created_at) }));
  }

  /** Readiness: the database answers a trivial query. */
  async ping(): Promise<void> {
    await this.db.query('SELECT 1', []);
  }

  async createProject(input: { name: string; allowed_origins?: string[]; retention_days?: number; org_id?: string | null; timezone?: string }, env: KeyEnv = 'live') {
    const id = randomUUID();
    const minted = (['pk', 'sk', 'rk'] as const).map((kind) => mintKey(kind, env));
    const project = await this.db.transaction(async (tx) => {
      // Without an organization (or a time zone) the column is left to its default: a store before migration 006 (012)
      // has none.
      const columns = ['id', 'name', 'allowed_origins', 'retention_days'];
      const values: unknown[] = [id, input.name, input.allowed_origins ?? [], input.retention_days ?? DEFAULT_RETENTION_DAYS];
      for (const [column, value] of [['timezone', input.timezone], ['org_id', input.org_id || undefined]] as const) {
        if (value === undefined) continue;
        columns.push(column);
        values.push(value);
      }
      const { rows } = await tx.query(`INSERT INTO projects (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING *`, values);
      for (const k of minted) {
        await tx.query('INSERT INTO api_keys (prefix, project_id, kind, env, secret_hash) VALUES ($1, $2, $3, $4, $5)', [k.prefix, id, k.kind, k.env, k.secretHash]);
      }
      return toProject(rows[0]!);
    });
    this.minted(minted.map((k) => k.prefix));
    const [pk, sk, rk] = minted.map((k) => k.key) as [string, string, string];
    return { project, keys: { pk, sk, rk } };
  }

  async getProject(id: string): Promise<Project | null> {
    if (!isUuid(id)) return null;
    const { rows } = await this.db.query('SELECT * FROM projects WHERE id = $1', [id]);
    return rows[0] ? toProject(rows[0]) : null;
  }

  async listProjects(): Promise<Project[]> {
    const { rows } = await this.db.query('SELECT * FROM projects ORDER BY created_at, id');
    return rows.map(toProject);
  }

  /** The projects of the organizations a user is a member of. */
  async listProjectsOfUser(userId: string): Promise<Project[]> {
    const { rows } = await this.db.query('SELECT p.* FROM projects p JOIN memberships m ON m.org_id = p.org_id WHERE m.user_id = $1 ORDER BY p.created_at, p.id', [userId]);
    return rows.map(toProject);
  }

  /** A project's keys without their secrets, oldest first; the session-bound read keys of signed-in users and share links' credentials are left out. */
  async listKeys(projectId: string): Promise<KeyInfo[]> {
    if (!isUuid(projectId)) return [];
    const { rows } = await this.db.query(
      'SELECT prefix, kind, env, created_at, last_used_at, revoked_at FROM api_keys WHERE project_id = $1 AND session_id IS NULL AND share_id IS NULL ORDER BY created_at, prefix',
      [projectId],
    );
    return rows.map((r) => ({
      prefix: String(r.prefix),
      kind: r.kind as KeyKind,
      env: r.env as KeyEnv,
      created_at: new Date(r.created_at as string).toISOString(),
      last_used_at: isoOrNull(r.last_used_at),
      revoked_at: isoOrNull(r.revoked_at),
    }));
  }

  /**
   * Deletes a project and its keys at once (its OAuth grants go with the keys) and queues the deletion of its events
   * (project_deletions, taken by whichever process holds the event store: pendingProjectDeletions). Returns the project.
   */
  async deleteProject(id: string): Promise<Project | null> {
    if (!isUuid(id)) return null;
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query('DELETE FROM projects WHERE id = $1 RETURNING *', [id]);
      if (!rows[0]) return null;
      await tx.query('INSERT INTO project_deletions (project_id) VALUES ($1) ON CONFLICT (project_id) DO NOTHING', [id]);
      return toProject(rows[0]);
    });
  }

  /** Deleted projects whose events are still to be deleted from the event store. */
  async pendingProjectDeletions(): Promise<string[]> {
    const { rows } = await this.db.query<{ project_id: string }>('SELECT project_id FROM project_deletions ORDER BY deleted_at');
    return rows.map((r) => String(r.project_id));
  }

  /** The deletion of a project's events is submitted to the event store. */
  async projectEventsDeleted(id: string): Promise<void> {
    await this.db.query('DELETE FROM project_deletions WHERE project_id = $1', [id]);
  }

  /** Records when keys were last accepted (KeyUsage flushes this; times only move forward). */
  async recordKeyUse(used: ReadonlyMap<string, number>): Promise<void> {
    if (used.size === 0) return;
    await this.db.query(
      `UPDATE api_keys k SET last_used_at = u.at FROM unnest($1::text[], $2::timestamptz[]) AS u(prefix, at)
        WHERE k.prefix = u.prefix AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`,
      [[...used.keys()], [...used.values()].map((ms) => new Date(ms).toISOString())],
    );
  }

  async updateProject(id: string, patch: { name?: string; allowed_origins?: string[]; retention_days?: number; timezone?: string }): Promise<Project | null> {
    if (!isUuid(id)) return null;
    const { rows } = await this.db.query(
      `UPDATE projects SET name = COALESCE($2, name), allowed_origins = COALESCE($3, allowed_origins),
         retention_days = COALESCE($4, retention_days), timezone = COALESCE($5, timezone) WHERE id = $1 RETURNING *`,
      [id, patch.name ?? null, patch.allowed_origins ?? null, patch.retention_days ?? null, patch.timezone ?? null],
    );
    return rows[0] ? toProject(rows[0]) : null;
  }

  async createKey(projectId: string, kind: KeyKind, env: KeyEnv = 'live', binding?: KeyBinding): Promise<MintedKey | null> {
    if (!(await this.getProject(projectId))) return null;
    const k = mintKey(kind, env);
    await this.db.query('INSERT INTO api_keys (prefix, project_id, kind, env, secret_hash, user_id, session_id, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
      k.prefix,
      projectId,
      kind,
      env,
      k.secretHash,
      binding?.user_id ?? null,
      binding?.session_id ?? null,
      binding?.expires_at ?? null,
    ]);
    this.minted([k.prefix]);
    return { key: k.key, prefix: k.prefix, kind, env, project_id: projectId };
  }

  /** Marks a key revoked; returns its project id, or null when no live key has that prefix. */
  async revokeKey(prefix: string): Promise<string | null> {
    const { rows } = await this.db.query<{ project_id: string }>(
      'UPDATE api_keys SET revoked_at = now() WHERE prefix = $1 AND revoked_at IS NULL RETURNING project_id',
      [prefix],
    );
    return rows[0] ? String(rows[0].project_id) : null;
  }

  /** The key (revoked or not) with its project, by prefix. */
  async findKey(prefix: string): Promise<{ key: KeyRecord; project: Project } | null> {
    const { rows } = await this.db.query(
      `SELECT k.prefix, k.project_id, k.kind, k.env, k.secret_hash, k.created_at AS key_created_at, k.revoked_at, k.expires_at,
              k.share_id, s.segment AS share_segment, s.revoked_at AS share_revoked_at,
              p.id, p.name, p.allowed_origins, p.retention_days, p.created_at, p.org_id, p.timezone
         FROM api_keys k JOIN projects p ON p.id = k.project_id LEFT JOIN shares s ON s.id = k.share_id WHERE k.prefix = $1`,
      [prefix],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      key: {
        prefix: String(row.prefix),
        project_id: String(row.project_id),
        kind: row.kind as KeyKind,
        env: row.env as KeyEnv,
        secret_hash: String(row.secret_hash),
        created_at: new Date(row.key_created_at as string).toISOString(),
        // A credential of a revoked share is revoked with it (the share's revocation also marks its keys).
        revoked_at: isoOrNull(row.revoked_at ?? row.share_revoked_at),
        expires_at: isoOrNull(row.expires_at),
        share: row.share_id ? { id: String(row.share_id), segment: segmentOf(row.share_segment) } : null,
      },
      project: toProject(row),
    };
  }
}
