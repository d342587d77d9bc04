import { randomUUID } from 'node:crypto';
import { ANNOTATION_LIMITS, type Annotation, type AnnotationKind, type AnnotationList, type AnnotationLookup, ApiError } from '@analytics/schema';
import type { SqlPort } from './sql-port';

/** At most this many annotations per project: the next is `409 limit_reached`. */
export const ANNOTATIONS_PER_PROJECT = ANNOTATION_LIMITS.perProject;
/** A list answers at most this many of its range (the oldest), with `truncated: true` when more lie in it. */
export const ANNOTATIONS_LISTED = ANNOTATION_LIMITS.listed;

// Ids and project ids are UUIDs: anything else is not found without a query.
const isUuid = (v: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v);

const COLUMNS = 'id, at, text, kind, created_by, created_at';

const iso = (v: unknown) => new Date(v as string).toISOString();

function toAnnotation(row: Record<string, unknown>): Annotation {
  return { id: String(row.id), at: iso(row.at), text: String(row.text), kind: row.kind as AnnotationKind, created_by: row.created_by ? String(row.created_by) : null, created_at: iso(row.created_at) };
}

/**
 * The annotations of each project (key store table `annotations`, migration 013), on PGlite and PostgreSQL through the
 * SQL port. Every query is scoped by project and binds its values; an annotation of another project is not found.
 * The input is validated by the routes (libs/schema annotations.schema.ts) before it gets here.
 */
export class Annotations implements AnnotationLookup {
  constructor(
    private readonly db: SqlPort,
    private readonly limits: { perProject: number; listed: number } = { perProject: ANNOTATIONS_PER_PROJECT, listed: ANNOTATIONS_LISTED },
  ) {}

  /** The project's annotations with from <= at < to (epoch ms), oldest first (at, then id), at most `listed` of them. */
  async list(projectId: string, range: { from: number; to: number }): Promise<AnnotationList> {
    if (!isUuid(projectId)) return { annotations: [] };
    const { rows } = await this.db.query(`SELECT ${COLUMNS} FROM annotations WHERE project_id = $1 AND at >= $2 AND at < $3 ORDER BY at, id LIMIT $4`, [
      projectId,
      new Date(range.from).toISOString(),
      new Date(range.to).toISOString(),
      this.limits.listed + 1,
    ]);
    const annotations = rows.slice(0, this.limits.listed).map(toAnnotation);
    return rows.length > this.limits.listed ? { annotations, truncated: true } : { annotations };
  }

  /** One annotation of the project, or undefined (unknown id, another project's). */
  async get(projectId: string, id: string): Promise<Annotation | undefined> {
    if (!isUuid(projectId) || !isUuid(id)) return undefined;
    const { rows } = await this.db.query(`SELECT ${COLUMNS} FROM annotations WHERE project_id = $1 AND id = $2`, [projectId, id]);
    return rows[0] ? toAnnotation(rows[0]) : undefined;
  }

  /**
   * Adds an annotation; undefined when the project does not exist. `409 limit_reached` at the per-project limit: the
   * project's row is locked meanwhile, so two creations at once cannot both pass it.
   */
  async create(projectId: string, input: { at: number; text: string; kind: AnnotationKind; created_by: string | null }): Promise<Annotation | undefined> {
    if (!isUuid(projectId)) return undefined;
    return this.db.transaction(async (tx) => {
      const project = await tx.query('SELECT id FROM projects WHERE id = $1 FOR UPDATE', [projectId]);
      if (!project.rows[0]) return undefined;
      const { rows: counted } = await tx.query<{ n: number | string }>('SELECT count(*) AS n FROM annotations WHERE project_id = $1', [projectId]);
      const limit = this.limits.perProject;
      if (Number(counted[0]?.n ?? 0) >= limit) {
        throw new ApiError('limit_reached', { details: { limit, message: `a project holds at most ${limit} annotations: delete one first` } });
      }
      const { rows } = await tx.query(`INSERT INTO annotations (id, project_id, at, text, kind, created_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`, [
        randomUUID(),
        projectId,
        new Date(input.at).toISOString(),
        input.text,
        input.kind,
        input.created_by,
      ]);
      return toAnnotation(rows[0]!);
    });
  }

  /**
   * Deletes an annotation of the project; false when it has no such one. With `createdBy` only one made by that creator
   * (an sk_ key deletes its own: another's is not found).
   */
  async delete(projectId: string, id: string, createdBy?: string): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(id)) return false;
    const { rows } =
      createdBy === undefined
        ? await this.db.query('DELETE FROM annotations WHERE project_id = $1 AND id = $2 RETURNING id', [projectId, id])
        : await this.db.query('DELETE FROM annotations WHERE project_id = $1 AND id = $2 AND created_by = $3 RETURNING id', [projectId, id, createdBy]);
    return rows.length > 0;
  }
}
