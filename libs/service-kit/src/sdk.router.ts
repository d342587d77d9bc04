import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Response, Router } from 'express';
import { ApiError, routes } from '@analytics/schema';
import { ANSWERED, defineRoute, routerOf } from './define-route';

const YEAR_S = 365 * 86_400;

/**
 * The browser SDK's IIFE for one script tag on any site (as Plausible's /js/script.js and Umami's /script.js), at the
 * paths `routes.sdkScript` and `routes.sdkScriptVersion` declare: the current build (cached 5 minutes), and one version
 * only (cached a year, immutable: the URL to pin with an integrity hash). `dir` is the built package
 * (dist/libs/sdk-browser); without a build there the paths answer 404 not_found.
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
    return ANSWERED;
  };
  return routerOf({}, [
    defineRoute(routes.sdkScript, (_input, _auth, { res }) => send(res, 'public, max-age=300')),
    defineRoute(routes.sdkScriptVersion, ({ params }, _auth, { res }) => {
      if (params.version !== version) throw new ApiError('not_found');
      return send(res, `public, max-age=${YEAR_S}, immutable`);
    }),
  ]);
}
