import { Router } from 'express';
import { type ApiApp, openApiDocument } from '@analytics/schema';

/** GET /openapi.json without a key: the OpenAPI 3.1 document of the routes this app serves, generated once at start. */
export function apiDocsRouter(apps: readonly ApiApp[] | 'all'): Router {
  const body = JSON.stringify(openApiDocument(apps));
  const router = Router();
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').set('Access-Control-Allow-Origin', '*').send(body);
  });
  return router;
}
