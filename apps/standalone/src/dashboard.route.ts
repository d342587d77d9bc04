import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Response, Router } from 'express';
import { frameAncestorsOf } from '@analytics/schema';

/**
 * The dashboard's Content-Security-Policy: its own scripts, styles, images and API only; no inline code, no other
 * host, no framing. docker/nginx.conf sends the same header (the deploy checks compare them).
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * The CSP of a share link's page: the dashboard's, and with `?embed=1` on a link that lists embed_origins, those
 * origins as its frame-ancestors (every other page still may not frame it).
 */
export const shareCsp = (embedOrigins: readonly string[] | undefined): string => DASHBOARD_CSP.replace("frame-ancestors 'none'", `frame-ancestors ${frameAncestorsOf(embedOrigins)}`);

function secureHeaders(res: Response, csp = DASHBOARD_CSP): void {
  res.setHeader('Content-Security-Policy', csp);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  // Unhashed file names: a browser revalidates, so a new build is seen at once.
  res.setHeader('Cache-Control', 'no-cache');
}

export interface DashboardRouterOptions {
  /** The origins a live share link lets frame its page (`?embed=1`); undefined for an unknown, revoked or expired link. */
  embedOrigins?: (token: string) => Promise<string[] | undefined>;
}

/**
 * GET / (the dashboard page) and /assets/* (its script, styles, icon) from the static build in `dir`
 * (dist/apps/dashboard). No key is needed to load them; the page asks for one. GET /share/<token> is the same page
 * in its read-only share mode (its relative assets under /share/assets/). Missing files are the API's JSON 404.
 */
export function createDashboardRouter(dir: string, options: DashboardRouterOptions = {}): Router {
  const router = Router();
  const index = join(dir, 'index.html');
  router.get('/', (_req, res, next) => {
    if (!existsSync(index)) return next();
    secureHeaders(res);
    res.sendFile(index, { etag: true, lastModified: false });
  });
  const assets = express.static(join(dir, 'assets'), { index: false, redirect: false, lastModified: false, setHeaders: (res) => secureHeaders(res) });
  router.use('/assets', assets);
  router.use('/share/assets', assets);
  router.get('/share/:token', async (req, res, next) => {
    if (!existsSync(index)) return next();
    try {
      // Only an embed asks the store: the plain page is never framed.
      const origins = req.query['embed'] === '1' && options.embedOrigins ? await options.embedOrigins(req.params.token) : undefined;
      secureHeaders(res, shareCsp(origins));
      // The token is in the address: no cache keeps the page.
      res.setHeader('Cache-Control', 'no-store');
      res.sendFile(index, { etag: false, lastModified: false });
    } catch (e) {
      next(e);
    }
  });
  return router;
}
