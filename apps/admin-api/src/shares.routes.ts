import type { Router } from 'express';
import { type Accounts, actorOf, sessionGuard } from '@analytics/accounts';
import { parseOriginEntry } from '@analytics/auth';
import { frameAncestorsOf, routes, shareInputSchema } from '@analytics/schema';
import { defineRoute, publicBaseUrl, routerOf } from '@analytics/service-kit';

export interface SharesRouterDeps {
  accounts: Accounts;
  adminToken: string;
  /** PUBLIC_URL: the base of the links (unset: the request's validated Host). */
  publicUrl?: string;
}

// embed_origins are checked as a project's allowed_origins are (libs/auth's rules: normalised, wildcards over a
// registrable domain only), except "*": a link any site may frame is not one the issue allows.
const shareBody = shareInputSchema.extend({
  embed_origins: shareInputSchema.shape.embed_origins.unwrap().transform((list, ctx) => {
    const out: string[] = [];
    list.forEach((value, i) => {
      const entry = parseOriginEntry(value);
      if ('problem' in entry) ctx.addIssue({ code: 'custom', path: [i], message: `${entry.problem}: ${value}` });
      else if (entry.origin === '*') ctx.addIssue({ code: 'custom', path: [i], message: 'name the origins that may frame the link (scheme://host[:port] or https://*.example.com): "*" is not accepted' });
      else out.push(entry.origin);
    });
    return [...new Set(out)];
  }).optional(),
});

/**
 * Share links (docs/saved-and-shared.md, "Share links and embeds"): editors of the project's organization (and
 * ADMIN_TOKEN) make, list and revoke them; POST /v1/share/unlock opens one (no credential: the link's token is in the body).
 */
export function createSharesRouter(deps: SharesRouterDeps): Router {
  const { shares, audit } = deps.accounts;
  return routerOf({ session: sessionGuard(deps.accounts, deps.adminToken), adminToken: deps.adminToken }, [
    defineRoute(
      routes.createShare,
      async ({ body, params }, caller, { req }) => {
        const created = await shares.create(params.id, body, { createdBy: caller.kind === 'user' ? caller.user.id : null, baseUrl: publicBaseUrl(req, deps.publicUrl) });
        await audit.record({ orgOfProject: params.id }, { action: 'share.created', actor: actorOf(caller), target: { type: 'share', id: created.share.id, name: created.share.name }, details: { has_password: created.share.has_password, expires_at: created.share.expires_at, segment: created.share.segment?.id ?? null, embed_origins: created.share.embed_origins } });
        return created;
      },
      { body: shareBody },
    ),
    defineRoute(routes.listShares, async ({ params }) => ({ shares: await shares.list(params.id) })),
    defineRoute(routes.deleteShare, async ({ params }, caller) => {
      const share = await shares.revoke(params.id, params.share_id);
      await audit.record({ orgOfProject: params.id }, { action: 'share.revoked', actor: actorOf(caller), target: { type: 'share', id: share.id, name: share.name }, details: {} });
    }),
    defineRoute(routes.shareUnlock, async ({ body }, _auth, { req }) => shares.unlock(body.token, body.password, req.ip)),
    defineRoute(routes.shareFrameAncestors, async ({ query }, _auth, { res }) => {
      // Only an embed asks the store: every other page of a link is framed by nobody.
      const frameAncestors = frameAncestorsOf(query.embed === '1' ? await shares.embedOrigins(query.token) : undefined);
      res.set({ 'x-frame-ancestors': frameAncestors, 'cache-control': 'no-store' });
      return { frame_ancestors: frameAncestors };
    }),
  ]);
}
