import type { Request, Router } from 'express';
import { type Accounts, type Client, type UserCaller, sessionGuard } from '@analytics/accounts';
import { ApiError, type Caller, routes } from '@analytics/schema';
import { defineRoute, publicBaseUrl, routerOf } from '@analytics/service-kit';

export interface AuthRouterDeps {
  accounts: Accounts;
  adminToken: string;
  /** PUBLIC_URL: the base of the reset links the operator mints (unset: the request's validated Host). */
  publicUrl?: string;
}

/** The client of a sign-in: its address as TRUST_PROXY decides (throttling only, never stored) and its User-Agent. */
const clientOf = (req: Request): Client => ({ address: req.ip, userAgent: req.get('user-agent') });

/** Single sign-on, or 404 not_found when OIDC_* is not set (the routes exist in every document; they answer only when configured). */
function ssoOf(accounts: Accounts) {
  if (!accounts.sso) throw new ApiError('not_found');
  return accounts.sso;
}

function userOf(caller: Caller): UserCaller {
  if (caller.kind !== 'user') throw new ApiError('invalid_session');
  return caller;
}

/** /auth/*: setup, the sign-in page's config, sign-in and out (with a password or single sign-on), sessions, passwords, invitations, session read keys; and the operator's user routes. */
export function createAuthRouter(deps: AuthRouterDeps): Router {
  const { signIn, sessions, readKeys } = deps.accounts;
  return routerOf({ session: sessionGuard(deps.accounts, deps.adminToken), adminToken: deps.adminToken }, [
    defineRoute(routes.authSetup, async ({ body }, _auth, { req }) => signIn.setup(body, clientOf(req))),
    defineRoute(routes.authLogin, async ({ body }, _auth, { req }) => signIn.login(body, clientOf(req))),
    defineRoute(routes.authMe, async (_input, caller) => deps.accounts.me(userOf(caller))),
    defineRoute(routes.authLogout, async (_input, caller) => {
      const user = userOf(caller);
      await sessions.end(user.user.id, { only: [user.session.id] });
      await deps.accounts.audit.record({ orgsOfUser: user.user.id }, { action: 'user.signed_out', actor: { type: 'user', id: user.user.id, name: user.user.email }, target: { type: 'session', id: user.session.id, name: null }, details: {} });
    }),
    defineRoute(routes.authSessions, async (_input, caller) => ({ sessions: await sessions.list(userOf(caller)) })),
    defineRoute(routes.authDeleteSession, async ({ params }, caller) => {
      const user = userOf(caller);
      if ((await sessions.end(user.user.id, { only: [params.id] })).length === 0) throw new ApiError('not_found');
      await deps.accounts.audit.record({ orgsOfUser: user.user.id }, { action: 'session.ended', actor: { type: 'user', id: user.user.id, name: user.user.email }, target: { type: 'session', id: params.id, name: null }, details: {} });
    }),
    defineRoute(routes.authPassword, async ({ body }, caller, { req }) => signIn.changePassword(userOf(caller), body, clientOf(req))),
    defineRoute(routes.authPasswordReset, async ({ body }, _auth, { req }) => {
      await signIn.requestReset(body.email, clientOf(req));
      return { ok: true as const };
    }),
    defineRoute(routes.authPasswordResetConfirm, async ({ body }, _auth, { req }) => signIn.confirmReset(body, clientOf(req))),
    defineRoute(routes.authAcceptInvitation, async ({ body }, caller, { req }) => signIn.acceptInvitation(body, caller && userOf(caller), clientOf(req))),
    defineRoute(routes.authConfig, async () => deps.accounts.config()),
    defineRoute(routes.authOidcStart, async ({ body }, _auth, { req }) => ssoOf(deps.accounts).start(body.binding, clientOf(req))),
    defineRoute(routes.authOidcCallback, async (_input, _auth, { req, res }) => {
      const sso = ssoOf(deps.accounts);
      // The provider's whole answer (iss included, RFC 9207), as it came: openid-client checks it.
      const search = new URLSearchParams(req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '');
      const location = await sso.callback(search);
      // The code of the fragment is one-time and bound to the browser's secret; still, no page it lands on should pass it on.
      res.set({ location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
    }),
    defineRoute(routes.authOidcComplete, async ({ body }, _auth, { req }) => ssoOf(deps.accounts).complete(body, clientOf(req))),
    defineRoute(routes.authReadKey, async ({ body }, caller) => readKeys.mint(caller, body.project_id)),
    defineRoute(routes.listUsers, async () => ({ users: await deps.accounts.users() })),
    defineRoute(routes.createPasswordReset, async ({ body }, _auth, { req }) => {
      const link = await signIn.resetLink(body.email, publicBaseUrl(req, deps.publicUrl));
      if (!link) throw new ApiError('not_found');
      return link;
    }),
  ]);
}
