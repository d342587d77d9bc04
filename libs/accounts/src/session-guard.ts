import type { Request } from 'express';
import { ApiError, type Caller, type SessionAuth } from '@analytics/schema';
import { type SessionGuard, presentsAdminToken } from '@analytics/service-kit';
import type { Accounts } from './accounts';

const bearerToken = (authorization: string | undefined) => (authorization ? /^Bearer[ \t]+(\S+)\s*$/i.exec(authorization)?.[1] : undefined);

// Scopes the path names (checked before the body is read) and the path parameter holding each.
const PATH_PARAM = { org: 'id', project: 'id', key: 'prefix' } as const;

/**
 * The `session` guard of a router (service-kit's defineRoute): the user token (or ADMIN_TOKEN where the route takes
 * it) resolved to its caller, then the declared role checked in the organization the route names. Sessions are read
 * from the store on every request: ending one, removing a member or deleting an organization holds at once.
 */
export function sessionGuard(accounts: Accounts, adminToken: string): SessionGuard {
  return {
    async authenticate(req: Request, auth: SessionAuth): Promise<Caller | undefined> {
      const token = bearerToken(req.get('authorization'));
      if (token === undefined) {
        if (auth.session === 'optional') return undefined;
        throw new ApiError('invalid_session');
      }
      const caller: Caller = auth.session === 'any' && presentsAdminToken(req, adminToken) ? { kind: 'operator' } : await accounts.sessions.authenticate(token);
      if (!auth.role || !auth.of || !(auth.of in PATH_PARAM)) return caller;
      return accounts.access.authorize(caller, auth.role, auth.of, req.params[PATH_PARAM[auth.of as keyof typeof PATH_PARAM]]);
    },
    async authorizeBody(caller: Caller, auth: SessionAuth, body: unknown): Promise<Caller> {
      const field = auth.of as 'org_id' | 'project_id';
      const value = (body as Record<string, unknown>)[field];
      if (value === undefined) {
        // The operator may leave it out (the handler picks); a user names the organization they act in.
        if (caller.kind === 'operator') return caller;
        throw new ApiError('invalid_payload', { details: { formErrors: [], fieldErrors: { [field]: ['required with a user token'] } } });
      }
      return accounts.access.authorize(caller, auth.role!, auth.of!, value);
    },
  };
}
