import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { SKIP_MARKER, type SystemBinarySpec, findExecutable, skipLine, systemBinary } from './system-binary';

const NODE = process.execPath;
const spec = (defaults: string[]): SystemBinarySpec => ({ name: 'frobnicator', env: 'FROB_BIN', defaults, aptPackage: 'frob-light' });

// Declared at collection time, as a spec file does: one suite whose program exists and one whose program does not.
const printed: string[] = [];
const ran: string[] = [];
const write = (line: string) => void printed.push(line);
systemBinary(spec(['/nonexistent/frob', NODE]), { env: { PATH: '' }, write }).describe('a suite whose program is installed', () => {
  it('runs', () => void ran.push('installed'));
});
systemBinary(spec(['/nonexistent/frob', 'frob']), { env: { PATH: dirname(NODE) }, write }).describe('a suite whose program is missing', () => {
  it('is skipped', () => void ran.push('missing'));
});
describe('single tests', () => {
  systemBinary(spec([NODE]), { env: { PATH: '' }, write }).it('a test whose program is installed', () => void ran.push('installed test'));
  systemBinary(spec(['frob']), { env: { PATH: dirname(NODE) }, write }).it('a test whose program is missing', () => void ran.push('missing test'));
  it('runs in its place, before a nested suite would', () => void ran.push('sibling'));
});

describe('systemBinary', () => {
  it('runs the suite or test whose program is found, skips the other and prints one marked line naming it, program and apt-get install', () => {
    expect(ran).toEqual(['installed', 'installed test', 'sibling']);
    expect(printed).toEqual([
      `${SKIP_MARKER} libs/testing/src/system-binary.spec.ts › a suite whose program is missing needs frobnicator (looked at FROB_BIN unset, /nonexistent/frob, frob); enable it with: apt-get update && apt-get install -y frob-light`,
      `${SKIP_MARKER} libs/testing/src/system-binary.spec.ts › a test whose program is missing needs frobnicator (looked at FROB_BIN unset, frob); enable it with: apt-get update && apt-get install -y frob-light`,
    ]);
  });

  it('looks only at the environment override when it is set, so pointing it elsewhere hides an installed program', () => {
    const hidden = systemBinary(spec([NODE]), { env: { FROB_BIN: '/nonexistent/frob' }, write });
    expect(hidden.found).toBe(false);
    expect(() => hidden.path).toThrow('frobnicator is not installed (apt-get install -y frob-light)');
    expect(systemBinary(spec(['/nonexistent/frob']), { env: { FROB_BIN: NODE }, write }).path).toBe(NODE);
  });

  it('names the override and its value in the skip line when it was set', () => {
    expect(skipLine('a suite', spec([NODE]), { FROB_BIN: '/nonexistent/frob' })).toBe(
      `${SKIP_MARKER} a suite needs frobnicator (looked at FROB_BIN=/nonexistent/frob); enable it with: apt-get update && apt-get install -y frob-light`,
    );
  });
});

describe('findExecutable', () => {
  const dir = mkdtempSync(join(tmpdir(), 'system-binary-'));
  const plain = join(dir, 'not-executable');
  writeFileSync(plain, '#!/bin/sh\n');
  chmodSync(plain, 0o644);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['an absolute path that is executable', [NODE], '', NODE],
    ['a name found in a PATH directory', [basename(NODE)], `/nonexistent:${dirname(NODE)}`, join(dirname(NODE), basename(NODE))],
    ['the first candidate that exists', ['/nonexistent/a', NODE], '', NODE],
    ['nothing for a file without the execute bit', [plain], '', undefined],
    ['nothing for a name on no PATH directory', [basename(NODE)], '/nonexistent', undefined],
  ])('returns %s', (_what, candidates, searchPath, expected) => {
    expect(findExecutable(candidates, searchPath)).toBe(expected);
  });
});

describe('the marker is one string', () => {
  it.each(['tools/test.mjs', '.ci/run'])('%s looks for the line the helper prints', (file) => {
    expect(readFileSync(join(__dirname, '../../..', file), 'utf8')).toContain(SKIP_MARKER);
  });
});
