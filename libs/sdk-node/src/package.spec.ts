import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import ts from 'typescript';
import { systemBinary } from '@analytics/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the real service the packages are used against
import { type RealService, closeServer, listen, startRealService, urlOf } from '../../../apps/standalone/src/test-service';

const ROOT = join(__dirname, '../../..');
const CHROMIUM = systemBinary({ name: 'chromium', env: 'CHROMIUM_PATH', defaults: ['/usr/bin/chromium'], aptPackage: 'chromium' });
const launchChromium = () =>
  chromium.launch({ executablePath: CHROMIUM.path, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
// tools/test-runtime.mjs runs this file again on the other Nodes CI names for what depends on the runtime (the packages
// installed and run); tsc's diagnostics do not depend on the Node that runs it, so there the type checks are left to
// `npm test`'s run (TEST_RUNTIME_ONLY=1).
const RUNTIME_ONLY = process.env.TEST_RUNTIME_ONLY === '1';
let scratch: string;
let service: RealService;
let keys: { pk: string; sk: string; rk: string };

// `npm run pack:sdks`, then the tarballs installed into a project outside the repository: no path alias reaches them.
beforeAll(async () => {
  execFileSync(process.execPath, [join(ROOT, 'tools/pack-sdks/pack.mjs')], { cwd: ROOT, stdio: 'ignore' });
  const tarballs = readdirSync(join(ROOT, 'dist/packages')).filter((f) => /^event-analytics-(node|browser)-.*\.tgz$/.test(f)).map((f) => join(ROOT, 'dist/packages', f));
  expect(tarballs).toHaveLength(2);
  scratch = mkdtempSync(join(tmpdir(), 'sdk-consumer-'));
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs], { cwd: scratch, stdio: 'ignore' });
  service = await startRealService();
  keys = (await service.stores.keyStore.createProject({ name: 'packages', allowed_origins: ['http://localhost'] })).keys;
}, 180_000);
afterAll(async () => {
  await service?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

// Asynchronous: the real service answers from this process.
const run = async (file: string, source: string, env: Record<string, string> = {}) => {
  writeFileSync(join(scratch, file), source);
  return (await promisify(execFile)(process.execPath, [file], { cwd: scratch, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', ...env } })).stdout.trim();
};

/** The fenced code blocks of an installed package's README, in order: what a user copies from it. */
const readmeBlocks = (pkg: string) =>
  [...readFileSync(join(scratch, 'node_modules', pkg, 'README.md'), 'utf8').matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map(([, lang, code]) => ({ lang: lang!, code: code! }));
/** `tsc --noEmit` on one file of the consumer project: '' when it type-checks, else the diagnostics. */
function typecheck(file: string, source: string, lib: string[], types: string[]): string {
  writeFileSync(join(scratch, file), source);
  const config = `tsconfig.${file}.json`;
  writeFileSync(join(scratch, config), JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib, noEmit: true, types, typeRoots: [join(ROOT, 'node_modules/@types')] }, files: [file] }));
  try {
    return execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', config], { cwd: scratch, encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    return String((e as { stdout?: string }).stdout);
  }
}
const toJs = (source: string) => ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 } }).outputText;
// The placeholders a README example leaves for the reader to fill in.
const EXAMPLE_ENDPOINT = 'https://analytics.example.com';
const eventsNamed = async (name: string) =>
  (await service.stores.events.select<{ n: string | number }>(`SELECT count() AS n FROM ${service.stores.events.eventsTable} WHERE event_name = {e:String}`, { e: name }))[0]!.n;

describe('event-analytics-node installed from its tarball', () => {
  it('works from CommonJS (require) against the real service', async () => {
    const out = await run('use.cjs', `const { Analytics } = require('event-analytics-node');
new Analytics({ endpoint: ${JSON.stringify(service.endpoint)}, key: ${JSON.stringify(keys.sk)} }).track({ event: 'from_cjs' }).then((r) => console.log(JSON.stringify(r)));`);
    expect(JSON.parse(out)).toEqual({ ok: true, event_id: expect.any(String) });
    expect(Number(await eventsNamed('from_cjs'))).toBe(1);
  });

  it('works from an ES module (import) against the real service, reads back with an rk_ key', async () => {
    const out = await run('use.mjs', `import { Analytics } from 'event-analytics-node';
const endpoint = ${JSON.stringify(service.endpoint)};
await new Analytics({ endpoint, key: ${JSON.stringify(keys.sk)} }).batch([{ event: 'from_esm' }, { event: 'from_esm' }]);
const q = await new Analytics({ endpoint, key: ${JSON.stringify(keys.rk)} }).query({ from: new Date(Date.now() - 3600e3), to: new Date(Date.now() + 3600e3), event: 'from_esm' });
console.log(String(q.rows.length));`);
    expect(out).toBe('2');
  });

  (RUNTIME_ONLY ? it.skip : it)('type-checks a TypeScript consumer with the types derived from libs/schema (tsc --noEmit), and refuses a wrong one', () => {
    writeFileSync(join(scratch, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noEmit: true, types: [] }, files: ['use.ts'] }));
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    writeFileSync(join(scratch, 'use.ts'), `import { Analytics, type TrackResponse, type QueryRow } from 'event-analytics-node';
export async function go(a: Analytics): Promise<string> {
  const r: TrackResponse = await a.track({ event: 'typed', properties: { plan: 'pro' } });
  const q = await a.query({ from: new Date(0), to: new Date() });
  const row: QueryRow | undefined = q.rows[0];
  const s = await a.stats({ from: new Date(0), to: new Date(), group_by: ['source'] });
  return r.event_id + (row?.event_name ?? '') + String(s.rows[0]?.source ?? '');
}
`);
    const check = () => execFileSync(process.execPath, [tsc, '-p', '.'], { cwd: scratch, encoding: 'utf8', stdio: 'pipe' });
    expect(check()).toBe('');
    writeFileSync(join(scratch, 'use.ts'), `import { Analytics } from 'event-analytics-node';
export const bad = (a: Analytics) => a.track({ event: 42 });
`);
    const refused = (() => {
      try {
        check();
        return '';
      } catch (e) {
        return String((e as { stdout?: string }).stdout);
      }
    })();
    expect(refused).toMatch(/use\.ts\(2,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/);
  }, 180_000);

  it('runs the Usage block of its installed README as a user copies it: tsc, then against the real service', async () => {
    const blocks = readmeBlocks('event-analytics-node');
    expect(blocks.map((b) => b.lang)).toEqual(['ts']);
    const { code } = blocks[0]!;
    expect(code).toContain("from 'event-analytics-node'");
    if (!RUNTIME_ONLY) expect(typecheck('readme.mts', code, ['es2022'], ['node'])).toBe('');

    const { sk, rk } = (await service.stores.keyStore.createProject({ name: 'node-readme' })).keys;
    const out = await run('readme.mjs', toJs(code.replaceAll(EXAMPLE_ENDPOINT, service.endpoint)), { ANALYTICS_SK: sk, ANALYTICS_RK: rk, FORCE_COLOR: '0' }); // nx forces colours on; the output is read as text
    expect(out).toMatch(/^invalid_payload 400 /);
    const calls = service.requests.filter((r) => r.key === sk || r.key === rk).map((r) => `${r.method} ${r.path.split('?')[0]} ${r.status < 300 ? 'ok' : r.status}`);
    expect(calls).toEqual(['POST /v1/track ok', 'POST /v1/batch ok', 'POST /v1/identify ok', 'GET /v1/query ok', 'GET /v1/stats ok', 'GET /v1/sources ok', 'POST /v1/insights ok', 'GET /v1/properties ok', 'POST /v1/funnel ok', 'POST /v1/retention ok', 'POST /v1/insights ok', 'POST /v1/track 400', 'POST /v1/forget ok']);
  }, 180_000);
});

CHROMIUM.describe('event-analytics-browser installed from its tarball, in Chromium', () => {
  let page: Server;
  const readmePages = new Map<string, string>();
  beforeAll(async () => {
    const pkg = join(scratch, 'node_modules/event-analytics-browser');
    page = await listen((req, res) => {
      const path = (req.url ?? '/').split('?')[0]!;
      const readme = readmePages.get(path);
      if (readme) return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>readme</title>${readme}`);
      if (path === '/analytics.min.js' || path === '/index.mjs') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(join(pkg, path.slice(1))));
      const loader = path === '/esm' ? `<script type="module">import * as a from '/index.mjs'; window.loaded = typeof a.init;</script>` : `<script src="/analytics.min.js"></script><script>window.loaded = typeof analytics.init;</script>`;
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>p</title>${loader}`);
    });
  });
  afterAll(() => closeServer(page));

  it('loads the ESM and the IIFE builds of the installed package', async () => {
    const browser = await launchChromium();
    try {
      const tab = await browser.newPage();
      for (const path of ['/esm', '/iife']) {
        await tab.goto(`${urlOf(page)}${path}`, { waitUntil: 'networkidle' });
        expect(await tab.evaluate(() => (globalThis as unknown as { loaded?: string }).loaded)).toBe('function');
      }
    } finally {
      await browser.close();
    }
  }, 180_000);

  it('runs the code blocks of its installed README as a user copies them: tsc on the module, each block in Chromium against the real service', async () => {
    const blocks = readmeBlocks('event-analytics-browser');
    expect(blocks.map((b) => b.lang)).toEqual(['html', 'ts', 'js']);
    const [tag, module, persistence] = blocks.map((b) => b.code) as [string, string, string];
    expect(module).toContain("from 'event-analytics-browser'");
    if (!RUNTIME_ONLY) expect(typecheck('readme-browser.mts', module, ['es2022', 'dom'], [])).toBe('');

    const { project, keys: own } = await service.stores.keyStore.createProject({ name: 'browser-readme', allowed_origins: [urlOf(page)] });
    const fill = (code: string) => code.replaceAll(EXAMPLE_ENDPOINT, service.endpoint).replaceAll('pk_live_…', own.pk).replace('https://cdn.example.com/analytics.min.js', '/analytics.min.js');
    readmePages.set('/readme/tag', fill(tag));
    readmePages.set('/readme/module', `<script type="importmap">{"imports":{"event-analytics-browser":"/index.mjs"}}</script><script type="module">${fill(toJs(module))}</script>`);
    readmePages.set('/readme/persistence', `<script src="/analytics.min.js"></script><script>${fill(persistence)}</script>`);
    const browser = await launchChromium();
    try {
      const tab = await browser.newPage();
      // Leaving each page flushes its buffer (keepalive); the last stop loads no SDK.
      for (const path of ['/readme/tag', '/readme/module', '/readme/persistence', '/done']) await tab.goto(`${urlOf(page)}${path}`, { waitUntil: 'networkidle' });
    } finally {
      await browser.close();
    }
    const stored = async () =>
      (await service.stores.events.select<{ event_name: string; path: string | null }>(`SELECT event_name, path FROM ${service.stores.events.eventsTable} WHERE project_id = {p:UUID}`, { p: project.id }))
        .map((r) => (r.event_name === '$identify' ? r.event_name : `${r.event_name} ${r.path}`))
        .sort();
    const expected = ['$identify', '$pageview /readme/module', '$pageview /readme/persistence', '$pageview /readme/tag', 'clicked_pricing /readme/tag', 'signup /readme/module'];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && (await stored()).length < expected.length; ) await new Promise((r) => setTimeout(r, 100));
    expect(await stored()).toEqual(expected);
  }, 180_000);
});
