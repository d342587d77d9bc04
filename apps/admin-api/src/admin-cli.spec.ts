import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { Accounts, PasswordHasher } from '@analytics/accounts';
import { KeyStore, migrateKeyStore, type SqlPort } from '@analytics/auth';
import { createLogger } from '@analytics/service-kit';
import { buildApp } from './app';
import { ADMIN_TOKEN, TEST_HASHER_PARAMS } from './test-people';
import { memoryPglitePort } from '@analytics/testing';

// `npm run admin` (tools/admin-cli.mjs) over a real admin-api: the people commands, as an operator runs them.
const CLI = resolve(__dirname, '../../../tools/admin-cli.mjs');
let db: SqlPort;
let server: Server;
let url: string;

beforeAll(async () => {
  db = await memoryPglitePort();
  await migrateKeyStore(db);
  const keyStore = new KeyStore(db);
  const accounts = new Accounts({ db, keyStore, throttleSecret: 'cli', hasher: new PasswordHasher({ params: TEST_HASHER_PARAMS }) });
  server = createServer(buildApp({ logger: createLogger({ level: 'silent' }), keyStore, accounts, adminToken: ADMIN_TOKEN }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await db.close();
});

async function cli(args: string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args, '--url', url], { env: { PATH: process.env.PATH, ADMIN_TOKEN }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(stdin);
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

describe('npm run admin: people', () => {
  it('sets up the first user with the password read without echo (a pipe here), then lists users and organizations', async () => {
    const short = await cli(['setup', '--email', 'you@example.com'], 'short\n');
    expect([short.code, short.stderr]).toEqual([2, expect.stringContaining('10 to 256 characters')]);
    const setup = await cli(['setup', '--email', 'you@example.com', '--name', 'You'], 'a long passphrase\n');
    expect(setup.code).toBe(0);
    expect(setup.stdout).toContain('Set up you@example.com');
    expect(setup.stdout).not.toMatch(/ses_/);
    const again = await cli(['setup', '--email', 'other@example.com'], 'a long passphrase\n');
    expect([again.code, again.stdout]).toEqual([1, expect.stringContaining('already_set_up')]);
    const users = JSON.parse((await cli(['users'])).stdout);
    expect(users.users).toEqual([expect.objectContaining({ email: 'you@example.com', name: 'You', organizations: [expect.objectContaining({ name: 'Default', role: 'owner' })] })]);
    expect(JSON.parse((await cli(['orgs'])).stdout).orgs.map((o: { name: string }) => o.name)).toEqual(['Default']);
  });

  it('invites, prints reset links, lists keys and deletes a project', async () => {
    const org = JSON.parse((await cli(['orgs'])).stdout).orgs[0].id as string;
    const invite = await cli(['invite', '--org', org, '--email', 'colleague@example.com', '--role', 'editor']);
    expect(invite.code).toBe(0);
    expect(invite.stdout).toMatch(/Hand this link to colleague@example\.com .*\n.*\/#invitation=inv_/);
    const reset = await cli(['reset-password', '--email', 'you@example.com']);
    expect(reset.stdout).toMatch(/\/#reset=rst_[0-9A-Za-z]+\n$/);
    expect((await cli(['reset-password', '--email', 'nobody@example.com'])).code).toBe(1);
    const created = JSON.parse((await cli(['create-project', '--name', 'cli'])).stdout);
    expect(created.project.org_id).toBe(org);
    const keys = JSON.parse((await cli(['keys', created.project.id])).stdout).keys as Array<{ prefix: string }>;
    expect(keys.length).toBe(3);
    expect(JSON.stringify(keys)).not.toContain(created.keys.sk.split('_')[3]);
    expect((await cli(['delete-project', created.project.id])).code).toBe(0);
    expect((await cli(['get-project', created.project.id])).code).toBe(1);
  });

  it('sets a project time zone with --timezone on create-project and update-project; an unknown one is refused (exit 1)', async () => {
    const created = JSON.parse((await cli(['create-project', '--name', 'zoned', '--timezone', 'Europe/Berlin'])).stdout);
    expect(created.project.timezone).toBe('Europe/Berlin');
    const updated = await cli(['update-project', created.project.id, '--timezone', 'America/Los_Angeles']);
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout).project.timezone).toBe('America/Los_Angeles');
    const refused = await cli(['update-project', created.project.id, '--timezone', 'Mars/Olympus']);
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toContain('invalid_payload');
    expect(JSON.parse((await cli(['get-project', created.project.id])).stdout).project.timezone).toBe('America/Los_Angeles');
  });
});
