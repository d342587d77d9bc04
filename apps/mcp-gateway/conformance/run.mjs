// The MCP conformance suite's applicable server scenarios against a real /mcp (.ci/run). Needs Node 22 for the suite:
// NODE22=<node 22 binary> CONFORMANCE=<@modelcontextprotocol/conformance/dist/index.js> node apps/mcp-gateway/conformance/run.mjs
// Starts the built standalone app on embedded stores, creates a project, and puts a proxy in front that adds the rk_ key
// (the suite sends no Authorization). Prints "<n> passed, <m> failed" like the other smoke checks.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../../..');
const { NODE22, CONFORMANCE } = process.env;
if (!NODE22 || !CONFORMANCE) {
  console.error('conformance: set NODE22 (a Node 22 binary) and CONFORMANCE (the suite\'s dist/index.js)');
  process.exit(2);
}
const { applicable, not_applicable: notApplicable } = JSON.parse(readFileSync(join(import.meta.dirname, 'scenarios.json'), 'utf8'));

const listed = spawnSync(NODE22, [CONFORMANCE, 'list', '--server'], { encoding: 'utf8' });
const offered = [...listed.stdout.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]);
const unknown = offered.filter((s) => !applicable.includes(s) && !(s in notApplicable));
if (offered.length === 0 || unknown.length > 0) {
  console.error(`conformance: scenarios neither run nor explained in scenarios.json: ${unknown.join(', ') || '(the suite listed none)'}`);
  process.exit(1);
}

const listen = (server) => new Promise((r) => server.listen(0, '127.0.0.1', () => r(server.address().port)));
const freePort = async () => {
  const s = createServer();
  const port = await listen(s);
  await new Promise((r) => s.close(r));
  return port;
};

const dataDir = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
const adminToken = randomBytes(16).toString('hex');
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
spawnSync(process.execPath, ['tools/build.mjs'], { cwd: root, stdio: 'inherit' });
const app = spawn(process.execPath, ['dist/apps/standalone/main.js'], {
  cwd: root,
  env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, ADMIN_TOKEN: adminToken, MCP_OAUTH: 'off', LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const stop = () => {
  app.kill();
  rmSync(dataDir, { recursive: true, force: true });
};

let rk;
try {
  for (let i = 0; ; i++) {
    const up = await fetch(`${base}/healthz`).then((r) => r.ok, () => false);
    if (up) break;
    if (i > 120) throw new Error('standalone app did not start');
    await new Promise((r) => setTimeout(r, 500));
  }
  const created = await fetch(`${base}/admin/projects`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'conformance' }) });
  rk = (await created.json()).keys.rk;
} catch (e) {
  stop();
  throw e;
}

// Adds the key; passes everything else (Origin and Host included: dns-rebinding-protection checks the gateway's answer).
const proxy = createServer((req, res) => {
  const upstream = request(`${base}${req.url}`, { method: req.method, headers: { ...req.headers, authorization: `Bearer ${rk}` } }, (up) => {
    res.writeHead(up.statusCode ?? 502, up.headers);
    up.pipe(res);
  });
  upstream.on('error', () => res.writeHead(502).end());
  req.pipe(upstream);
});
const proxyPort = await listen(proxy);

function runSuite(args) {
  return new Promise((done) => {
    const child = spawn(NODE22, [CONFORMANCE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill(), 120_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      done({ status, stdout, stderr });
    });
  });
}

let passed = 0;
let failed = 0;
for (const scenario of applicable) {
  // Asynchronous: the proxy answers from this process's event loop while the suite runs.
  const run = await runSuite(['server', '--url', `http://127.0.0.1:${proxyPort}/mcp`, '--scenario', scenario, '-o', join(dataDir, 'results')]);
  const ok = run.status === 0;
  if (ok) passed++;
  else failed++;
  console.log(`conformance ${ok ? 'PASS' : 'FAIL'} ${scenario}`);
  if (!ok) console.log(`${run.stdout}${run.stderr}`);
}
console.log(`conformance: not applicable (scenarios.json): ${Object.keys(notApplicable).join(', ')}`);
proxy.close();
stop();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
