import { randomUUID } from 'node:crypto';
import type { SqlQueryable } from '@analytics/auth';
import { ApiError, type Caller, type InvitationInput, type Role } from '@analytics/schema';
import { actorOf } from './audit-log';
import { type AccountsContext, DAY_MS, isoOf } from './context';
import type { Mailer } from './mailer';
import { invitationMail } from './mails';
import { mintLinkToken } from './tokens';

/** How long an invitation can be accepted (issue 45). */
export const INVITATION_TTL_MS = 7 * DAY_MS;

type OrgCaller = Caller & { org: { id: string; role: Role | null } };

const memberOf = (r: Record<string, unknown>) => ({
  user_id: String(r.user_id),
  email: String(r.email),
  name: (r.name as string | null) ?? null,
  role: r.role as Role,
  joined_at: isoOf(r.joined_at),
});

/** Owners and the owner role are an owner's to give and take; the operator may do everything. */
function requireOwnerFor(caller: OrgCaller, touchesOwner: boolean): void {
  if (!touchesOwner || caller.kind === 'operator' || caller.org.role === 'owner') return;
  throw new ApiError('insufficient_role', { details: { required: 'owner', role: caller.org.role } });
}

/** The caller checked by the route's role guard: its organization is set. */
export function inOrg(caller: Caller): OrgCaller {
  if (!caller.org) throw new Error('an organization route without its role guard');
  return caller as OrgCaller;
}

/**
 * Organizations, their members and invitations. The routes' role guard has checked the caller's role in the
 * organization (libs/accounts' Access); what is left here is what depends on the target: owners are managed by owners,
 * and the last owner of an organization can be neither removed nor demoted (409 last_owner).
 */
export class Organizations {
  constructor(
    private readonly ctx: AccountsContext,
    private readonly mail: { mailer?: Mailer; onError: (e: unknown) => void },
  ) {}

  async list(caller: Caller) {
    const { rows } =
      caller.kind === 'user'
        ? await this.ctx.db.query('SELECT o.id, o.name, o.created_at, m.role FROM organizations o JOIN memberships m ON m.org_id = o.id WHERE m.user_id = $1 ORDER BY o.created_at, o.id', [caller.user.id])
        : await this.ctx.db.query('SELECT id, name, created_at, NULL AS role FROM organizations ORDER BY created_at, id');
    return rows.map((r) => ({ id: String(r.id), name: String(r.name), role: (r.role as Role | null) ?? null, created_at: isoOf(r.created_at) }));
  }

  /** A new organization; a signed-in caller becomes its owner (the operator's has no member until someone is invited). */
  async create(caller: Caller, name: string, q?: SqlQueryable) {
    const run = async (tx: SqlQueryable) => {
      const id = randomUUID();
      await tx.query('INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)', [id, name, new Date(this.ctx.now()).toISOString()]);
      if (caller.kind === 'user') await tx.query("INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'owner', $3)", [id, caller.user.id, new Date(this.ctx.now()).toISOString()]);
      await this.ctx.audit.record({ org: id }, { action: 'org.created', actor: actorOf(caller), target: { type: 'org', id, name } }, tx);
      return { id, name };
    };
    return q ? run(q) : this.ctx.db.transaction(run);
  }

  async rename(caller: Caller, name: string) {
    const { org } = inOrg(caller);
    const { rows } = await this.ctx.db.query<{ name: string }>('WITH old AS (SELECT name FROM organizations WHERE id = $1) UPDATE organizations SET name = $2 WHERE id = $1 RETURNING (SELECT name FROM old) AS name', [org.id, name]);
    if (!rows[0]) throw new ApiError('not_found');
    await this.ctx.audit.record({ org: org.id }, { action: 'org.renamed', actor: actorOf(caller), target: { type: 'org', id: org.id, name }, details: { from: rows[0].name, to: name } });
    return { id: org.id, name };
  }

  /** Deletes an organization that holds no project (409 not_empty); its members, invitations and audit log go with it. */
  async delete(caller: Caller): Promise<void> {
    const { org } = inOrg(caller);
    await this.ctx.db.transaction(async (tx) => {
      // The row lock orders this against a project being created into the organization meanwhile.
      await tx.query('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [org.id]);
      const { rows } = await tx.query<{ n: string }>('SELECT count(*) AS n FROM projects WHERE org_id = $1', [org.id]);
      if (Number(rows[0]?.n ?? 0) > 0) throw new ApiError('not_empty', { details: { projects: Number(rows[0]!.n) } });
      await tx.query('DELETE FROM organizations WHERE id = $1', [org.id]);
    });
  }

  async members(caller: Caller) {
    const { org } = inOrg(caller);
    const { rows } = await this.ctx.db.query(
      'SELECT m.user_id, u.email, u.name, m.role, m.joined_at FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = $1 ORDER BY m.joined_at, u.email',
      [org.id],
    );
    return rows.map(memberOf);
  }

  /** Changes a member's role; owners (and making one) need an owner; the last owner stays one. */
  async setRole(caller: Caller, userId: string, role: Role) {
    const { org } = inOrg(caller);
    const { member, from } = await this.ctx.db.transaction(async (tx) => {
      const target = await this.lockedMember(tx, org.id, userId);
      requireOwnerFor(inOrg(caller), target.role === 'owner' || role === 'owner');
      if (target.role === 'owner' && role !== 'owner') await this.keepAnOwner(tx, org.id);
      await tx.query('UPDATE memberships SET role = $3 WHERE org_id = $1 AND user_id = $2', [org.id, userId, role]);
      return { member: { ...target, role }, from: target.role };
    });
    await this.ctx.audit.record({ org: org.id }, { action: 'member.role_changed', actor: actorOf(caller), target: { type: 'user', id: userId, name: member.email }, details: { from, to: role } });
    return member;
  }

  /** Removes a member: their read keys (and later grants) of the organization's projects are revoked on every instance. */
  async remove(caller: Caller, userId: string): Promise<void> {
    const { org } = inOrg(caller);
    const { member, revoked } = await this.ctx.db.transaction(async (tx) => {
      const target = await this.lockedMember(tx, org.id, userId);
      requireOwnerFor(inOrg(caller), target.role === 'owner');
      if (target.role === 'owner') await this.keepAnOwner(tx, org.id);
      await tx.query('DELETE FROM memberships WHERE org_id = $1 AND user_id = $2', [org.id, userId]);
      const keys = await tx.query<{ prefix: string }>(
        `UPDATE api_keys k SET revoked_at = $3 FROM projects p
          WHERE p.id = k.project_id AND p.org_id = $1 AND k.user_id = $2 AND k.revoked_at IS NULL RETURNING k.prefix`,
        [org.id, userId, new Date(this.ctx.now()).toISOString()],
      );
      return { member: target, revoked: keys.rows.map((r) => String(r.prefix)) };
    });
    await this.ctx.keysRevoked(revoked);
    await this.ctx.audit.record({ org: org.id }, { action: 'member.removed', actor: actorOf(caller), target: { type: 'user', id: userId, name: member.email }, details: { role: member.role } });
  }

  private async lockedMember(tx: SqlQueryable, orgId: string, userId: string) {
    // Every membership of the organization is locked: two owners demoting each other at once cannot leave none.
    const { rows } = await tx.query(
      'SELECT m.user_id, u.email, u.name, m.role, m.joined_at FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = $1 ORDER BY m.user_id FOR UPDATE OF m',
      [orgId],
    );
    const row = rows.find((r) => String(r.user_id) === userId);
    if (!row) throw new ApiError('not_found');
    return memberOf(row);
  }

  private async keepAnOwner(tx: SqlQueryable, orgId: string): Promise<void> {
    const { rows } = await tx.query<{ n: string }>("SELECT count(*) AS n FROM memberships WHERE org_id = $1 AND role = 'owner'", [orgId]);
    if (Number(rows[0]?.n ?? 0) <= 1) throw new ApiError('last_owner');
  }

  /**
   * A one-time invitation valid 7 days (a new one for the same email replaces a pending one), its token shown once and
   * its link; mailed in the background when mail is configured (a failed mail is logged: the inviter has the link).
   */
  async invite(caller: Caller, input: InvitationInput, baseUrl: string) {
    const scoped = inOrg(caller);
    requireOwnerFor(scoped, input.role === 'owner');
    const { rows: members } = await this.ctx.db.query('SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = $1 AND u.email = $2', [scoped.org.id, input.email]);
    if (members.length > 0) throw new ApiError('already_member');
    const { token, hash } = mintLinkToken('inv');
    const now = this.ctx.now();
    const invitation = { id: randomUUID(), email: input.email, role: input.role, expires_at: new Date(now + INVITATION_TTL_MS).toISOString() };
    const orgName = await this.ctx.db.transaction(async (tx) => {
      await tx.query('DELETE FROM invitations WHERE org_id = $1 AND email = $2 AND accepted_at IS NULL', [scoped.org.id, input.email]);
      await tx.query('INSERT INTO invitations (id, org_id, email, role, token_hash, invited_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
        invitation.id,
        scoped.org.id,
        input.email,
        input.role,
        hash,
        caller.kind === 'user' ? caller.user.id : null,
        new Date(now).toISOString(),
        invitation.expires_at,
      ]);
      const { rows } = await tx.query<{ name: string }>('SELECT name FROM organizations WHERE id = $1', [scoped.org.id]);
      return String(rows[0]?.name ?? '');
    });
    const acceptUrl = `${baseUrl}/#invitation=${token}`;
    await this.ctx.audit.record({ org: scoped.org.id }, { action: 'invitation.created', actor: actorOf(caller), target: { type: 'invitation', id: invitation.id, name: input.email }, details: { role: input.role } });
    const mailer = this.mail.mailer;
    if (mailer) {
      const inviter = caller.kind === 'user' ? (caller.user.name ?? caller.user.email) : undefined;
      void mailer.send({ to: input.email, ...invitationMail({ orgName, inviter, role: input.role, link: acceptUrl, expiresAt: invitation.expires_at }) }).catch(this.mail.onError);
    }
    return { invitation, token, accept_url: acceptUrl };
  }

  async invitations(caller: Caller) {
    const { org } = inOrg(caller);
    const { rows } = await this.ctx.db.query(
      'SELECT id, email, role, expires_at, created_at FROM invitations WHERE org_id = $1 AND accepted_at IS NULL AND expires_at > $2 ORDER BY created_at DESC, id',
      [org.id, new Date(this.ctx.now()).toISOString()],
    );
    return rows.map((r) => ({ id: String(r.id), email: String(r.email), role: r.role as Role, expires_at: isoOf(r.expires_at), created_at: isoOf(r.created_at) }));
  }

  async withdraw(caller: Caller, invitationId: string): Promise<void> {
    const scoped = inOrg(caller);
    const { rows } = await this.ctx.db.query<{ role: Role; email: string }>(
      "SELECT role, email FROM invitations WHERE id::text = $1 AND org_id = $2 AND accepted_at IS NULL",
      [invitationId, scoped.org.id],
    );
    const invitation = rows[0];
    if (!invitation) throw new ApiError('not_found');
    requireOwnerFor(scoped, invitation.role === 'owner');
    await this.ctx.db.query('DELETE FROM invitations WHERE id::text = $1 AND org_id = $2', [invitationId, scoped.org.id]);
    await this.ctx.audit.record({ org: scoped.org.id }, { action: 'invitation.deleted', actor: actorOf(caller), target: { type: 'invitation', id: invitationId, name: invitation.email }, details: { role: invitation.role } });
  }
}
