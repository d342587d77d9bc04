import { SKIP_MARKER, systemServer } from './test-servers';

// Declared at collection time, as a spec file does: a suite and a single test, each with and without the server's variable.
const serverPrinted: string[] = [];
const serverRan: string[] = [];
const server = (env: NodeJS.ProcessEnv) =>
  systemServer({ name: 'FrobDB', env: 'TEST_FROB_URL', example: 'frob://127.0.0.1/test', aptPackage: 'frob-server' }, { env, write: (line) => void serverPrinted.push(line) });
server({ TEST_FROB_URL: 'frob://127.0.0.1/test' }).describe('a suite whose server is set', () => {
  it('runs', () => void serverRan.push('suite set'));
});
server({}).describe('a suite whose server is unset', () => {
  it('is skipped', () => void serverRan.push('suite unset'));
});
describe('single tests', () => {
  server({ TEST_FROB_URL: 'frob://127.0.0.1/test' }).it('a test whose server is set', async () => void serverRan.push('test set'));
  server({ TEST_FROB_URL: '' }).it('a test whose server is empty', async () => void serverRan.push('test empty'));
});

describe('systemServer', () => {
  it('runs what has its variable set, skips the rest and prints one marked line each naming the test, the server, apt-get install and the export', () => {
    expect(serverRan.sort()).toEqual(['suite set', 'test set']);
    const line = (name: string) =>
      `${SKIP_MARKER} libs/auth/src/test-servers.spec.ts › ${name} needs FrobDB (TEST_FROB_URL unset); enable it with: apt-get update && apt-get install -y frob-server, then export TEST_FROB_URL=frob://127.0.0.1/test`;
    expect(serverPrinted).toEqual([line('a suite whose server is unset'), line('a test whose server is empty')]);
    expect(server({ TEST_FROB_URL: 'frob://h/db' }).url).toBe('frob://h/db');
  });
});

