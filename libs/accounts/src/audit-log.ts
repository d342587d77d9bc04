import type { SqlPort, SqlQueryable } from '@analytics/auth';
import type { AuditAction, AuditActor, AuditEntry, AuditTarget, Caller } from '@analytics/schema';
import { isoOf } from './time';

/** How long entries are kept (issue 45). */
export const AUDIT_RETENTION_DAYS = 400;

/**
 * Which organizations an entry goes to: one by id, the one holding a project, every organization of a user (their
 * sign-ins and password changes), or all of them (an instance-wide action of the operator: a backup).
 */
export type AuditScope = { org: string } | { orgOfProject: string } | { orgsOfUser: string } | { allOrgs: true };

export interface AuditRecord {
  action: AuditAction;
  actor: AuditActor;
  target: AuditTarget;
  /** What changed: a role from and to, a key kind, an MCP tool name. Never a secret, an address or result data. */
  details?: Record<string, unknown>;
}

/** The actor of a request: the signed-in user, or the operator (ADMIN_TOKEN). */
export function actorOf(caller: Caller | undefined): AuditActor {
  if (caller?.kind === 'user') return { type: 'user', id: caller.user.id, name: caller.user.email };
  return { type: 'operator', id: null, name: null };
}

const SCOPE_SQL: Record<string, string> = {
  org: 'SELECT id FROM organizations WHERE id = $1',
  orgOfProject: 'SELECT org_id AS id FROM projects WHERE id = $1 AND org_id IS NOT NULL',
  orgsOfUser: 'SELECT org_id AS id FROM memberships WHERE user_id = $1',
  allOrgs: 'SELECT id FROM organizations WHERE $1::text IS NOT NULL',
};

/**
 * The audit log (one writer for every feature): `record` is what the account, project and key routes call, and what MCP
 * tool calls through an OAuth grant and single sign-on call too (`{ orgOfProject }` with an `agent` actor; `{ orgsOfUser }`
 * for a sign-in). Entries are read per organization, newest first, and purged after AUDIT_RETENTION_DAYS.
 */
export class AuditLog {
  constructor(
    private readonly db: SqlPort,
    private readonly now: () => number = Date.now,
    private readonly onError: (e: unknown, action: AuditAction) => void = () => {},
  ) {}

  /** Writes the entry to each organization of `scope`; best effort: the action it records has happened, a failure is only reported. */
  async record(scope: AuditScope, entry: AuditRecord, q: SqlQueryable = this.db): Promise<void> {
    const [kind, value] = Object.entries(scope)[0] as [keyof typeof SCOPE_SQL, string | true];
    try {
      await q.query(
        `INSERT INTO audit_log (org_id, at, actor_type, actor_id, actor_name, action, target_type, target_id, target_name, details)
         SELECT s.id, $2, $3, $4, $5, $6, $7, $8, $9, $10 FROM (${SCOPE_SQL[kind]}) s`,
        [
          value === true ? 'all' : value,
          new Date(this.now()).toISOString(),
          entry.actor.type,
          entry.actor.id,
          entry.actor.name,
          entry.action,
          entry.target.type,
          entry.target.id,
          entry.target.name,
          JSON.stringify(entry.details ?? {}),
        ],
      );
    } catch (e) {
      this.onError(e, entry.action);
    }
  }

  /** Entries of one organization in [from, to), newest first. */
  async list(orgId: string, window: { from?: number; to?: number; limit: number }): Promise<AuditEntry[]> {
    const { rows } = await this.db.query(
      `SELECT at, actor_type, actor_id, actor_name, action, target_type, target_id, target_name, details FROM audit_log
        WHERE org_id = $1 AND ($2::timestamptz IS NULL OR at >= $2) AND ($3::timestamptz IS NULL OR at < $3)
        ORDER BY at DESC, id DESC LIMIT $4`,
      [orgId, window.from === undefined ? null : new Date(window.from).toISOString(), window.to === undefined ? null : new Date(window.to).toISOString(), window.limit],
    );
    return rows.map((r) => ({
      at: isoOf(r.at),
      actor: { type: r.actor_type, id: r.actor_id, name: r.actor_name } as AuditActor,
      action: r.action as AuditAction,
      target: { type: r.target_type, id: r.target_id, name: r.target_name } as AuditTarget,
      details: (typeof r.details === 'string' ? JSON.parse(r.details) : r.details) as Record<string, unknown>,
    }));
  }

  /** Deletes entries older than the retention; returns how many. */
  async purge(): Promise<number> {
    const { rows } = await this.db.query<{ n: string }>(
      'WITH gone AS (DELETE FROM audit_log WHERE at < $1 RETURNING 1) SELECT count(*) AS n FROM gone',
      [new Date(this.now() - AUDIT_RETENTION_DAYS * 86_400_000).toISOString()],
    );
    return Number(rows[0]?.n ?? 0);
  }
}
