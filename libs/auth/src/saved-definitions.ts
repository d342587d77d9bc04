import { randomUUID } from 'node:crypto';
import { ApiError, SAVED_LIMITS, type SavedKind } from '@analytics/schema';
import type { SqlPort, SqlQueryable } from './sql-port';

export { SAVED_KINDS, type SavedKind } from '@analytics/schema';

/** At most this many definitions of each kind per project: the 201st is `409 limit_reached`. */
export const SAVED_PER_KIND_LIMIT = SAVED_LIMITS.perKind;

/** One saved definition as stored: `definition` holds the kind's fields in their canonical request form. */
export interface SavedRecord {
  id: string;
  project_id: string;
  kind: SavedKind;
  name: string;
  definition: Record<string, unknown>;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

/** A saved segment as a share link or a read takes it: its filters (the /v1/insights `filters` form). */
export interface ResolvedSegment {
  id: string;
  name: string;
  filters: unknown;
}

// Ids and project ids are UUIDs: anything else is not found without a query.
const isUuid = (v: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v);

const COLUMNS = 'id, project_id, kind, name, definition, created_by, created_at, updated_at';

function toRecord(row: Record<string, unknown>): SavedRecord {
  const definition = typeof row.definition === 'string' ? (JSON.parse(row.definition) as Record<string, unknown>) : (row.definition as Record<string, unknown>);
  return {
    id: String(row.id),
    project_id: String(row.project_id),
    kind: row.kind as SavedKind,
    name: String(row.name),
    definition,
    created_by: row.created_by ? String(row.created_by) : null,
    created_at: new Date(row.created_at as string).toISOString(),
    updated_at: new Date(row.updated_at as string).toISOString(),
  };
}

/** A unique violation (SQLSTATE 23505), as pg and PGlite both report it. */
const isUniqueViolation = (e: unknown) => (e as { code?: unknown } | null)?.code === '23505';

const nameTaken = (kind: SavedKind, name: string) => new ApiError('name_taken', { details: { kind, name, message: `a ${kind} of this project is already named ${JSON.stringify(name)}` } });

/**
 * Saved goals, funnels and segments of each project (key store table `saved_definitions`, migration 010), on PGlite
 * and PostgreSQL through the SQL port. Every query is scoped by project; a definition of another project is not found.
 * The definitions are validated by the routes (libs/schema saved.schema.ts) before they get here.
 */
export class SavedDefinitions {
  constructor(private readonly db: SqlPort) {}

  /** The project's definitions of a kind, oldest first. */
  async list(projectId: string, kind: SavedKind): Promise<SavedRecord[]> {
    if (!isUuid(projectId)) return [];
    const { rows } = await this.db.query(`SELECT ${COLUMNS} FROM saved_definitions WHERE project_id = $1 AND kind = $2 ORDER BY created_at, id`, [projectId, kind]);
    return rows.map(toRecord);
  }

  /** One definition of the project, or undefined (unknown id, another project's, another kind). */
  async get(projectId: string, kind: SavedKind, id: string): Promise<SavedRecord | undefined> {
    if (!isUuid(projectId) || !isUuid(id)) return undefined;
    const { rows } = await this.db.query(`SELECT ${COLUMNS} FROM saved_definitions WHERE project_id = $1 AND kind = $2 AND id = $3`, [projectId, kind, id]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /**
   * Saves a new definition; undefined when the project does not exist. `409 name_taken` when the kind has that name in
   * the project, `409 limit_reached` at SAVED_PER_KIND_LIMIT. The project's row is locked meanwhile: two creations at
   * once cannot both pass the limit.
   */
  async create(projectId: string, kind: SavedKind, input: { name: string; definition: Record<string, unknown>; created_by?: string | null }): Promise<SavedRecord | undefined> {
    if (!isUuid(projectId)) return undefined;
    return this.write(async (tx) => {
      const project = await tx.query('SELECT id FROM projects WHERE id = $1 FOR UPDATE', [projectId]);
      if (!project.rows[0]) return undefined;
      const { rows: counted } = await tx.query<{ n: number | string }>('SELECT count(*) AS n FROM saved_definitions WHERE project_id = $1 AND kind = $2', [projectId, kind]);
      if (Number(counted[0]?.n ?? 0) >= SAVED_PER_KIND_LIMIT) {
        throw new ApiError('limit_reached', { details: { kind, limit: SAVED_PER_KIND_LIMIT, message: `a project holds at most ${SAVED_PER_KIND_LIMIT} saved ${kind}s: delete one first` } });
      }
      await this.checkName(tx, projectId, kind, input.name);
      const { rows } = await tx.query(
        `INSERT INTO saved_definitions (id, project_id, kind, name, definition, created_by) VALUES ($1, $2, $3, $4, $5::jsonb, $6) RETURNING ${COLUMNS}`,
        [randomUUID(), projectId, kind, input.name, JSON.stringify(input.definition), input.created_by ?? null],
      );
      return toRecord(rows[0]!);
    }, kind, input.name);
  }

  /** Renames and/or replaces a definition; undefined when the project has no such one. `409 name_taken` as create. */
  async update(projectId: string, kind: SavedKind, id: string, patch: { name?: string; definition?: Record<string, unknown> }): Promise<SavedRecord | undefined> {
    if (!isUuid(projectId) || !isUuid(id)) return undefined;
    return this.write(async (tx) => {
      if (patch.name !== undefined) await this.checkName(tx, projectId, kind, patch.name, id);
      const { rows } = await tx.query(
        `UPDATE saved_definitions SET name = COALESCE($4, name), definition = COALESCE($5::jsonb, definition), updated_at = now()
          WHERE project_id = $1 AND kind = $2 AND id = $3 RETURNING ${COLUMNS}`,
        [projectId, kind, id, patch.name ?? null, patch.definition ? JSON.stringify(patch.definition) : null],
      );
      return rows[0] ? toRecord(rows[0]) : undefined;
    }, kind, patch.name ?? '');
  }

  /** Deletes a definition; false when the project has no such one. */
  async delete(projectId: string, kind: SavedKind, id: string): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(id)) return false;
    const { rows } = await this.db.query('DELETE FROM saved_definitions WHERE project_id = $1 AND kind = $2 AND id = $3 RETURNING id', [projectId, kind, id]);
    return rows.length > 0;
  }

  /** A saved segment of the project with its filters, or undefined (unknown id, another project's). */
  async resolveSegment(projectId: string, segmentId: string): Promise<ResolvedSegment | undefined> {
    const record = await this.get(projectId, 'segment', segmentId);
    return record ? { id: record.id, name: record.name, filters: record.definition.filters ?? [] } : undefined;
  }

  private async checkName(tx: SqlQueryable, projectId: string, kind: SavedKind, name: string, exceptId?: string): Promise<void> {
    const { rows } = await tx.query('SELECT id FROM saved_definitions WHERE project_id = $1 AND kind = $2 AND name = $3', [projectId, kind, name]);
    if (rows.some((r) => String(r.id) !== exceptId)) throw nameTaken(kind, name);
  }

  /** A write in a transaction; a unique violation that raced past the check is name_taken all the same. */
  private async write<T>(fn: (tx: SqlQueryable) => Promise<T>, kind: SavedKind, name: string): Promise<T> {
    try {
      return await this.db.transaction(fn);
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken(kind, name);
      throw e;
    }
  }
}
