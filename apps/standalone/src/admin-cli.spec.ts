import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { closeServer, listen, urlOf } from './test-service';
import { resolveSecrets } from './secrets';

// `npm run admin` (tools/admin-cli.mjs) is the operator CLI of this server: it reads the DATA_DIR/secrets.json
// that resolveSecrets writes. It runs here as an operator runs it, against a server that records every request.

const CLI = resolve(__dirname, '../../../tools/admin-cli.mjs');
const seen: Array<{ url: string; authorization: string | undefined }> = [];
let server: Server;
let dataDir: string;

beforeAll(async () => {
  server = await listen((req, res) => {
    seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"projects":[]}');
  });
});
afterAll(() => closeServer(server));
beforeEach(() => {
  seen.length = 0;
  dataDir = mkdtempSync(join(tmpdir(), 'admin-cli-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

/** Runs the CLI with DATA_DIR as its only possible token source (no --token, no ADMIN_TOKEN). */
async function runCli(...args: string[]): Promise<{ code: number | null; stderr: string }> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, DATA_DIR: dataDir };
  const child = spawn(process.execPath, [CLI, ...args, '--url', urlOf(server)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stderr };
}

describe('npm run admin without a usable admin token', () => {
  it('stops before any request with exit 2 when the server got ADMIN_TOKEN from its environment (not in secrets.json)', async () => {
    // What `ADMIN_TOKEN=… npm start` leaves on disk: the other secrets, generated, and no ADMIN_TOKEN.
    resolveSecrets(dataDir, { ADMIN_TOKEN: 'given-to-npm-start' });
    const { code, stderr } = await runCli('projects');
    expect(code).toBe(2);
    expect(stderr).toContain('--token');
    expect(stderr).toContain('ADMIN_TOKEN');
    expect(stderr).toContain(`${join(dataDir, 'secrets.json')}: no ADMIN_TOKEN in it`);
    expect(stderr).toContain('ADMIN_TOKEN=<token> npm run admin -- projects');
    expect(seen).toEqual([]);
  });

  it('stops before any request with exit 2 naming the missing secrets.json', async () => {
    const { code, stderr } = await runCli('create-project', '--name', 'shop');
    expect(code).toBe(2);
    expect(stderr).toContain(`${join(dataDir, 'secrets.json')}: file missing`);
    expect(stderr).toContain('--token <token>');
    expect(seen).toEqual([]);
  });

  it('stops before any request with exit 2 when secrets.json is not JSON', async () => {
    writeFileSync(join(dataDir, 'secrets.json'), '{"ADMIN_TOKEN":');
    const { code, stderr } = await runCli('projects');
    expect(code).toBe(2);
    expect(stderr).toContain(`${join(dataDir, 'secrets.json')}: unreadable`);
    expect(seen).toEqual([]);
  });

  it('sends the token npm start generated into secrets.json (the recording server sees requests)', async () => {
    const { secrets } = resolveSecrets(dataDir, {});
    const { code } = await runCli('projects');
    expect(code).toBe(0);
    expect(seen).toEqual([{ url: '/admin/projects', authorization: `Bearer ${secrets.ADMIN_TOKEN}` }]);
  });
});
