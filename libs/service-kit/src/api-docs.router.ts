import { readFileSync } from 'node:fs';
import { Router } from 'express';
import { type ApiApp, openApiDocument, routes } from '@analytics/schema';

// Relative URLs: the page works under any path prefix a proxy puts in front of the app.
const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Event Analytics API reference</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; }</style>
</head>
<body>
<redoc spec-url="openapi.json" hide-download-button="false"></redoc>
<script src="docs/redoc.standalone.js"></script>
</body>
</html>
`;

const REDOCLY_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const INLINE_LOGO = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/%3E";

/**
 * GET /openapi.json without a key: the OpenAPI 3.1 document of the routes this app serves, generated once at start.
 * GET /docs: the API reference rendered from it by Redoc's standalone bundle, served from here (no request elsewhere).
 */
export function apiDocsRouter(apps: readonly ApiApp[] | 'all'): Router {
  const body = JSON.stringify(openApiDocument(apps));
  // The bundle's one remote asset (the Redocly logo in the sidebar) becomes an inline image: the page requests no other host.
  const redoc = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8').replaceAll(REDOCLY_LOGO, INLINE_LOGO);
  const router = Router();
  router.get(routes.openapi.path, (_req, res) => {
    res.type('application/json').set('Access-Control-Allow-Origin', '*').send(body);
  });
  router.get('/docs', (_req, res) => {
    res.type('html').set('Cache-Control', 'no-cache').send(DOCS_PAGE);
  });
  router.get('/docs/redoc.standalone.js', (_req, res) => {
    res.type('text/javascript').set('Cache-Control', 'public, max-age=86400').send(redoc);
  });
  return router;
}
