import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express, { Router } from 'express';
import request from 'supertest';
import { routes } from '@analytics/schema';
import { createServiceApp, logRouteAs } from './app';
import { defineRoute, routerOf } from './define-route';
import { createLogger } from './logger';

// The route label of analytics_http_requests_total for each way a request is answered (the whole service's metrics,
// with real requests and stores, are apps/standalone's metrics.spec).
const logger = createLogger({ level: 'silent' });
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'metrics-static-'));
  writeFileSync(join(dir, 'app.js'), 'console.log(1)');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const routesOf = (text: string) =>
  [...text.matchAll(/^analytics_http_requests_total\{method="(\w+)",route="([^"]*)",status="(\d+)"\} (\d+)$/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]} x${m[4]}`).sort();

describe('route labels', () => {
  it('names the declared pattern, a fixed pattern a handler set, a static mount, and `unmatched`: never a path as it arrived', async () => {
    const declared = routerOf({ session: { authenticate: async () => ({ kind: 'operator' }), authorizeBody: async (caller) => caller } }, [
      defineRoute(routes.getProject, ({ params }) => ({ project: { id: params.id, name: 'p', allowed_origins: [], retention_days: 90, created_at: '2026-01-01T00:00:00Z', org_id: null, timezone: 'UTC' } })),
    ]);
    const fixed = Router();
    fixed.use((req, res, next) => {
      if (req.path !== '/callback/abc123') return next();
      logRouteAs(res, '/callback');
      res.json({ ok: true });
    });
    const statics = Router();
    statics.use('/assets', express.static(dir, { index: false, redirect: false }));
    const app = createServiceApp({ name: 't', logger, routers: [declared, fixed, statics] });
    expect((await request(app).get('/admin/projects/6f1c0d2e-0000-4000-8000-000000000001').set('authorization', 'Bearer admin')).status).toBe(200);
    expect((await request(app).get('/callback/abc123')).status).toBe(200);
    expect((await request(app).get('/assets/app.js')).status).toBe(200);
    expect((await request(app).get('/assets/missing-6f1c.js')).status).toBe(404);
    expect((await request(app).get('/nowhere/6f1c')).status).toBe(404);
    expect((await request(app).post('/admin/projects/6f1c')).status).toBe(405);
    const text = (await request(app).get('/metrics')).text;
    expect(routesOf(text)).toEqual(
      ['GET /admin/projects/:id 200 x1', 'GET /callback 200 x1', 'GET /assets/* 200 x1', 'GET unmatched 404 x2', 'POST /admin/projects/:id 405 x1'].sort(),
    );
    expect(text).not.toMatch(/6f1c|abc123|missing/);
  });
});
