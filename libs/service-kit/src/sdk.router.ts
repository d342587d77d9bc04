import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Router, type Response } from 'express';
import { ApiError } from '@analytics/schema';

const YEAR_S = 365 * 86_400;

/**
 * The browser SDK's IIFE for one script tag on any site (as Plausible's /js/script.js and Umami's /script.js):
 * GET /sdk/analytics.min.js (the current build, cached 5 minutes) and GET /sdk/<version>/analytics.min.js (that
 * version only, cached a year, immutable: the URL to pin with an integrity hash). `dir` is the built package
 * (dist/libs/sdk-browser); without it the paths answer 404 not_found.
 */
export function sdkRouter(dir: string): Router {
  const file = join(dir, 'analytics.min.js');
  const built = existsSync(file);
  const script = built ? readFileSync(file) : undefined;
  const version = built ? (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version : undefined;
  const send = (res: Response, cacheControl: string) => {
    if (!script) throw new ApiError('not_found');
    res
      .type('text/javascript')
      .set({ 'Cache-Control': cacheControl, 'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin', 'X-Content-Type-Options': 'nosniff' })
      .send(script);
  };
  const router = Router();
  router.get('/sdk/analytics.min.js', (_req, res) => send(res, 'public, max-age=300'));
  router.get('/sdk/:version/analytics.min.js', (req, res) => {
    if (req.params.version !== version) throw new ApiError('not_found');
    send(res, `public, max-age=${YEAR_S}, immutable`);
  });
  return router;
}
