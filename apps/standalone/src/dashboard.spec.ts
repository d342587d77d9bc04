import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from './app';
import { DASHBOARD_CSP } from './dashboard.route';
import { firstMinuteBlock } from './first-minute';

const SECRETS = { ADMIN_TOKEN: 'admin-token-dashboard-tests', IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal' };
let stores: Awaited<ReturnType<typeof openTestStores>>;
let app: Express;
let bare: Express;

beforeAll(async () => {
  // A stand-in for dist/apps/dashboard: what is served is under test here, not the build (the Chromium suite uses it).
  const dir = mkdtempSync(join(tmpdir(), 'dashboard-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Analytics dashboard</title>');
  writeFileSync(join(dir, 'assets/dashboard.js'), 'void 0;');
  stores = await openTestStores();
  app = buildApp({ stores, secrets: SECRETS, logger: silentLogger, dashboardDir: dir });
  bare = buildApp({ stores, secrets: SECRETS, logger: silentLogger });
});
afterAll(() => stores.close());

describe('standalone: the dashboard at GET /', () => {
  it('serves the page and its assets without a key, under the strict CSP, with no cookie', async () => {
    for (const [path, type] of [['/', 'text/html'], ['/assets/dashboard.js', 'javascript']] as const) {
      const res = await request(app).get(path);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toContain(type);
      expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    expect(DASHBOARD_CSP).toMatch(/script-src 'self'; style-src 'self';.*connect-src 'self'/);
    expect(DASHBOARD_CSP).not.toMatch(/unsafe|https?:/);
  });

  it('answers a missing asset with the JSON 404 and another method on / with 405', async () => {
    const missing = await request(app).get('/assets/nope.js');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'not_found' });
    const post = await request(app).post('/');
    expect(post.status).toBe(405);
    expect(post.headers['allow']).toBe('GET, HEAD');
  });

  it('leaves the API untouched: keys are still required on /v1', async () => {
    expect((await request(app).get('/v1/stats')).body.error).toBe('missing_bearer_token');
  });

  it('is not served when the app is built without a dashboard', async () => {
    const res = await request(bare).get('/');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found' });
  });
});

describe('npm start: the first-minute block', () => {
  it('names the dashboard URL, where the generated admin token is kept and the command that creates a first project', () => {
    const block = firstMinuteBlock({ port: 8080, secretsFile: '/srv/data/secrets.json' });
    expect(block).toContain('http://localhost:8080/');
    expect(block).toContain('/srv/data/secrets.json');
    expect(block).toContain('npm run admin -- create-project --name');
    expect(block).toContain('then open http://localhost:8080/ and paste the rk_ key');
    expect(block).not.toContain('#key=');
    expect(block).not.toContain('API reference');
    expect(block.split('\n').every((line) => !line.startsWith('{'))).toBe(true);
  });

  it('points at ADMIN_TOKEN when the token came from the environment, and at the API reference once there is one', () => {
    const block = firstMinuteBlock({ port: 3000, secretsFile: undefined, apiReferencePath: '/docs' });
    expect(block).toContain('ADMIN_TOKEN you started with');
    expect(block).toContain('API reference  http://localhost:3000/docs');
  });

  it('says how many projects exist and how to open the dashboard instead of offering a first project', () => {
    const many = firstMinuteBlock({ port: 8080, secretsFile: undefined, projectCount: 3 });
    expect(many).toContain('Projects       3 projects (npm run admin -- projects lists them)');
    expect(many).toContain("open http://localhost:8080/ and paste a project's rk_ key");
    expect(many).toContain('npm run admin -- create-key PROJECT_ID --kind rk');
    expect(many).not.toContain('First project');
    expect(many).not.toContain('create-project');
    expect(firstMinuteBlock({ port: 8080, secretsFile: undefined, projectCount: 1 })).toContain('1 project (');
    expect(firstMinuteBlock({ port: 8080, secretsFile: undefined, projectCount: 0 })).toContain('First project  npm run admin -- create-project');
  });

  it('says how to set up the first account while there is no user (the first-run page or the CLI), and where to sign in after', () => {
    const first = firstMinuteBlock({ port: 8080, secretsFile: undefined, hasUsers: false });
    expect(first).toContain('First account  open http://localhost:8080/ (the first-run page)');
    expect(first).toContain('npm run admin -- setup --email you@example.com');
    const later = firstMinuteBlock({ port: 8080, secretsFile: undefined, hasUsers: true });
    expect(later).toContain('Accounts       sign in at http://localhost:8080/');
    expect(later).not.toContain('First account');
  });
});
