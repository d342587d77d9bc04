import { extractPrefix, isUuid } from '@analytics/auth';
import { ApiError, type Caller, type Role, type RoleScope, roleAtLeast } from '@analytics/schema';
import type { AccountsContext } from './context';

// The organization a scope points at, and the caller's membership in it (role NULL: not a member).
const ORG_OF: Record<RoleScope, string> = {
  org: 'SELECT o.id AS org_id, m.role FROM organizations o LEFT JOIN memberships m ON m.org_id = o.id AND m.user_id = $2 WHERE o.id = $1',
  org_id: 'SELECT o.id AS org_id, m.role FROM organizations o LEFT JOIN memberships m ON m.org_id = o.id AND m.user_id = $2 WHERE o.id = $1',
  project: 'SELECT p.org_id, m.role FROM projects p LEFT JOIN memberships m ON m.org_id = p.org_id AND m.user_id = $2 WHERE p.id = $1',
  project_id: 'SELECT p.org_id, m.role FROM projects p LEFT JOIN memberships m ON m.org_id = p.org_id AND m.user_id = $2 WHERE p.id = $1',
  key: `SELECT p.org_id, m.role FROM api_keys k JOIN projects p ON p.id = k.project_id
          LEFT JOIN memberships m ON m.org_id = p.org_id AND m.user_id = $2 WHERE k.prefix = $1`,
};

/**
 * Role checks: the caller's role in the organization a route's scope names must be at least the required one. A user
 * who is not a member gets 404 not_found, the answer for a resource that does not exist, so that membership is the only
 * way to learn that an organization, project or key exists (docs/accounts.md, "Roles"). Too low a role is 403
 * insufficient_role with `details: { required, role }`. The operator (ADMIN_TOKEN) passes every role check.
 */
export class Access {
  constructor(private readonly ctx: AccountsContext) {}

  /** `caller` with the organization `value` names under `of` and their role in it, or the refusal. */
  async authorize(caller: Caller, required: Role, of: RoleScope, value: unknown): Promise<Caller> {
    const handle = of === 'key' ? (typeof value === 'string' ? extractPrefix(value) : null) : typeof value === 'string' && isUuid(value) ? value : null;
    if (handle === null) throw new ApiError('not_found');
    const userId = caller.kind === 'user' ? caller.user.id : null;
    const { rows } = await this.ctx.db.query<{ org_id: string | null; role: Role | null }>(ORG_OF[of], [handle, userId]);
    const row = rows[0];
    if (!row) throw new ApiError('not_found');
    if (caller.kind === 'operator') return { ...caller, org: row.org_id ? { id: String(row.org_id), role: null } : undefined };
    // A project without an organization (before setup) is the operator's alone.
    if (!row.org_id || !row.role) throw new ApiError('not_found');
    if (!roleAtLeast(row.role, required)) throw new ApiError('insufficient_role', { details: { required, role: row.role } });
    return { ...caller, org: { id: String(row.org_id), role: row.role } };
  }
}
