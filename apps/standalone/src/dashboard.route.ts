import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Response, Router } from 'express';

/**
 * The dashboard's Content-Security-Policy: its own scripts, styles, images and API only; no inline code, no other
 * host, no framing. docker/nginx.conf sends the same header (the deploy checks compare them).
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

function secureHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  // Unhashed file names: a browser revalidates, so a new build is seen at once.
  res.setHeader('Cache-Control', 'no-cache');
}

/**
 * GET / (the dashboard page) and /assets/* (its script, styles, icon) from the static build in `dir`
 * (dist/apps/dashboard). No key is needed to load them; the page asks for one. Missing files are the API's JSON 404.
 */
export function createDashboardRouter(dir: string): Router {
  const router = Router();
  const index = join(dir, 'index.html');
  router.get('/', (_req, res, next) => {
    if (!existsSync(index)) return next();
    secureHeaders(res);
    res.sendFile(index, { etag: true, lastModified: false });
  });
  router.use('/assets', express.static(join(dir, 'assets'), { index: false, redirect: false, lastModified: false, setHeaders: secureHeaders }));
  return router;
}
