import { randomUUID } from 'node:crypto';
import { type KeyEnv, type KeyKind, mintKey } from './key-format';
import type { SqlPort } from './sql-port';
import type { MintedKeyResponse, Project } from '@analytics/schema';

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
  };
}

/** Projects and API keys in Postgres. Secrets are stored only as SHA-256 hashes. */
export class KeyStore {
  private readonly mintedListeners: Array<(prefix: string) => void> = [];

  constructor(private readonly db: SqlPort) {}

  /** Called with each prefix once its key is committed (the authenticator's known set, the other instances). */
  onMinted(listener: (prefix: string) => void): void {
    this.mintedListeners.push(listener);
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

  async createProject(input: { name: string; allowed_origins?: string[]; retention_days?: number }, env: KeyEnv = 'live') {
    const id = randomUUID();
    const minted = (['pk', 'sk', 'rk'] as const).map((kind) => mintKey(kind, env));
    const project = await this.db.transaction(async (tx) => {
      const { rows } = await tx.query(
        'INSERT INTO projects (id, name, allowed_origins, retention_days) VALUES ($1, $2, $3, $4) RETURNING *',
        [id, input.name, input.allowed_origins ?? [], input.retention_days ?? DEFAULT_RETENTION_DAYS],
      );
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

  async updateProject(id: string, patch: { name?: string; allowed_origins?: string[]; retention_days?: number }): Promise<Project | null> {
    if (!isUuid(id)) return null;
    const { rows } = await this.db.query(
      `UPDATE projects SET name = COALESCE($2, name), allowed_origins = COALESCE($3, allowed_origins),
         retention_days = COALESCE($4, retention_days) WHERE id = $1 RETURNING *`,
      [id, patch.name ?? null, patch.allowed_origins ?? null, patch.retention_days ?? null],
    );
    return rows[0] ? toProject(rows[0]) : null;
  }

  async createKey(projectId: string, kind: KeyKind, env: KeyEnv = 'live'): Promise<MintedKey | null> {
    if (!(await this.getProject(projectId))) return null;
    const k = mintKey(kind, env);
    await this.db.query('INSERT INTO api_keys (prefix, project_id, kind, env, secret_hash) VALUES ($1, $2, $3, $4, $5)', [k.prefix, projectId, kind, env, k.secretHash]);
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
      `SELECT k.prefix, k.project_id, k.kind, k.env, k.secret_hash, k.created_at AS key_created_at, k.revoked_at,
              p.id, p.name, p.allowed_origins, p.retention_days, p.created_at
         FROM api_keys k JOIN projects p ON p.id = k.project_id WHERE k.prefix = $1`,
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
        revoked_at: row.revoked_at ? new Date(row.revoked_at as string).toISOString() : null,
      },
      project: toProject(row),
    };
  }
}
