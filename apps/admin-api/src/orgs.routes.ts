import type { Router } from 'express';
import { type Accounts, sessionGuard } from '@analytics/accounts';
import { routes } from '@analytics/schema';
import { defineRoute, publicBaseUrl, routerOf } from '@analytics/service-kit';

export interface OrgsRouterDeps {
  accounts: Accounts;
  adminToken: string;
  /** PUBLIC_URL: the base of invitation links (unset: the request's validated Host). */
  publicUrl?: string;
}

/** /admin/orgs: organizations, members, invitations and the audit log, each route with its declared role. */
export function createOrgsRouter(deps: OrgsRouterDeps): Router {
  const { orgs, audit } = deps.accounts;
  return routerOf({ session: sessionGuard(deps.accounts, deps.adminToken) }, [
    defineRoute(routes.listOrgs, async (_input, caller) => ({ orgs: await orgs.list(caller) })),
    defineRoute(routes.createOrg, async ({ body }, caller) => ({ org: await orgs.create(caller, body.name) })),
    defineRoute(routes.updateOrg, async ({ body }, caller) => ({ org: await orgs.rename(caller, body.name) })),
    defineRoute(routes.deleteOrg, async (_input, caller) => orgs.delete(caller)),
    defineRoute(routes.createInvitation, async ({ body }, caller, { req }) => orgs.invite(caller, body, publicBaseUrl(req, deps.publicUrl))),
    defineRoute(routes.listInvitations, async (_input, caller) => ({ invitations: await orgs.invitations(caller) })),
    defineRoute(routes.deleteInvitation, async ({ params }, caller) => orgs.withdraw(caller, params.invitation_id)),
    defineRoute(routes.listMembers, async (_input, caller) => ({ members: await orgs.members(caller) })),
    defineRoute(routes.updateMember, async ({ body, params }, caller) => ({ member: await orgs.setRole(caller, params.user_id, body.role) })),
    defineRoute(routes.removeMember, async ({ params }, caller) => orgs.remove(caller, params.user_id)),
    defineRoute(routes.orgAudit, async ({ query }, caller) => ({ entries: await audit.list(caller.org!.id, query) })),
  ]);
}
