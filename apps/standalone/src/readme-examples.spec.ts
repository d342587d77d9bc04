import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from './app';
import { resolveSecrets } from './secrets';
import { closeServer, listen, urlOf } from './test-service';

// The docs' curl examples (docs/api/admin.md, ingest.md, read.md), followed top to bottom as a new user would (bash,
// curl, node; a fresh server whose token npm start generated into ./.data/secrets.json), must read back the events
// the ingest examples sent.

const DOCS = resolve(__dirname, '../../../docs/api');
const README_BASE = 'http://localhost:8080';

/** The ```sh blocks of a page of docs/api from its `# heading` or `## heading` to the next `## ` heading, in order. */
function shBlocks(page: string, heading: string): string[] {
  const markdown = `\n${readFileSync(join(DOCS, page), 'utf8')}`;
  const at = [`\n# ${heading}\n`, `\n## ${heading}\n`].map((h) => markdown.indexOf(h)).filter((i) => i >= 0);
  if (at.length === 0) throw new Error(`docs/api/${page} has no "${heading}" section`);
  const start = at[0]!;
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** One curl call the examples made: its URL argument and what it printed. */
interface CurlCall {
  url: string;
  output: string;
}

let stores: Awaited<ReturnType<typeof openTestStores>>;
let server: Server;
let home: string;
const answered: Array<{ method: string; path: string; status: number }> = [];

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'readme-examples-'));
  // What the first `npm start` leaves in the repository: a generated token in ./.data/secrets.json.
  const { secrets } = resolveSecrets(join(home, '.data'), {});
  stores = await openTestStores();
  const app = buildApp({ stores, secrets, logger: silentLogger });
  server = await listen((req, res) => {
    res.on('finish', () => answered.push({ method: req.method ?? '', path: req.url ?? '', status: res.statusCode }));
    app(req, res);
  });
});
afterAll(async () => {
  await closeServer(server);
  await stores.close();
  rmSync(home, { recursive: true, force: true });
});

/** Runs the examples in one bash (variables chain), with a curl that also logs each call's URL and output. */
async function runExamples(script: string): Promise<{ code: number | null; stderr: string; calls: CurlCall[] }> {
  const log = join(home, 'curl.log');
  writeFileSync(log, '');
  const prelude = [
    'set -euo pipefail',
    'curl() {',
    '  local url="" out a',
    '  for a in "$@"; do case "$a" in http*) url="$a";; esac; done',
    '  out=$(command curl "$@")',
    '  printf "%s\\t%s\\n" "$url" "$out" >> "$CURL_LOG"',
    '  printf "%s" "$out"',
    '}',
  ].join('\n');
  const env = { PATH: process.env.PATH, HOME: home, CURL_LOG: log };
  const child = spawn('bash', ['-c', `${prelude}\n${script}`], { cwd: home, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  const calls = readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [url, ...rest] = line.split('\t');
      return { url: url!, output: rest.join('\t') };
    });
  return { code, stderr, calls };
}

describe('docs examples', () => {
  it('followed top to bottom on a fresh server, the read examples return the events the ingest examples sent', async () => {
    const projects = shBlocks('admin.md', 'Projects and keys').filter((block) => block.includes('curl'));
    const ingest = shBlocks('ingest.md', 'Ingest');
    const read = shBlocks('read.md', 'Read');
    expect([projects.length, ingest.length, read.length]).toEqual([1, 1, 1]);
    const script = [...projects, ...ingest, ...read].join('\n');
    expect(script).toContain(`BASE=${README_BASE}`);

    // The examples send their events "now": the UTC days the run spans (one, or two across midnight).
    const runDays = new Set([new Date().toISOString().slice(0, 10)]);
    const { code, stderr, calls } = await runExamples(script.replaceAll(README_BASE, urlOf(server)));
    runDays.add(new Date().toISOString().slice(0, 10));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(answered.filter((r) => r.status >= 400)).toEqual([]);

    const readOutput = (path: string) => {
      const call = calls.find((c) => new URL(c.url).pathname === path);
      if (!call) throw new Error(`the examples never call ${path}`);
      return JSON.parse(call.output);
    };
    const query = readOutput('/v1/query');
    expect(query.rows).toEqual([expect.objectContaining({ event_name: 'signup', anonymous_id: 'a-1', properties: '{"plan":"pro"}' })]);
    const stats = readOutput('/v1/stats');
    expect(stats.metric).toBe('uniques');
    expect(stats.rows.length).toBeGreaterThan(0);
    expect(stats.rows.every((r: { value: number }) => r.value > 0)).toBe(true);
    const sources = readOutput('/v1/sources');
    expect(sources.rows).toContainEqual(expect.objectContaining({ source: 'newsletter' }));
    const same = { events: 1, visitors: 1, comparison: { events: 0, visitors: 0 } };
    expect(readOutput('/v1/insights').rows).toEqual(['$pageview', 'a', 'b', 'signup'].map((event_name) => ({ event_name, ...same })));
    expect(readOutput('/v1/properties')).toEqual({ rows: [{ key: 'plan', events: 1 }] });
    expect(readOutput('/v1/funnel').steps.map((x: { count: number }) => x.count)).toEqual([1, 1]);
    const retention = readOutput('/v1/retention') as { cohorts: Array<{ cohort: string }> };
    expect(retention).toEqual({ cohorts: [{ cohort: expect.any(String), size: 1, returned: [1] }] });
    expect(runDays).toContain(retention.cohorts[0]!.cohort);
  });
});

// The SDKs are not on the npm registry (publishing is a release step): every page that tells a user how to install one
// gives the tarball `npm run pack:sdks` writes, by its real name, and none gives a registry install that fails.
describe('SDK install instructions', () => {
  const ROOT = resolve(__dirname, '../../..');
  const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');
  const INSTALL_PAGES = { 'sdk-node': ['README.md', 'docs/sdks.md', 'libs/sdk-node/README.md'], 'sdk-browser': ['libs/sdk-browser/README.md'] } as const;

  it('name the tarball npm run pack:sdks writes (dist/packages/<name>-<version>.tgz) after npm run pack:sdks', () => {
    const pack = read('tools/pack-sdks/pack.mjs');
    expect(pack).toContain("join(root, 'dist/packages')");
    expect(pack).toContain('pack-sdks: dist/packages/${filename}');
    for (const [sdk, pages] of Object.entries(INSTALL_PAGES)) {
      const { name, version } = JSON.parse(read(`libs/${sdk}/package.json`)) as { name: string; version: string };
      // npm pack's file name for an unscoped package.
      const tarball = `dist/packages/${name}-${version}.tgz`;
      for (const page of pages) {
        const text = read(page);
        expect({ page, packs: text.includes('npm run pack:sdks') }).toEqual({ page, packs: true });
        expect({ page, installs: new RegExp(`npm install \\S*/${tarball.replaceAll('.', '\\.')}`).test(text) }).toEqual({ page, installs: true });
      }
    }
  });

  it('never give the registry install by name, which fails until the packages are published', () => {
    const pages = [...new Set(Object.values(INSTALL_PAGES).flat())];
    for (const page of pages) expect({ page, bare: /npm (install|i) event-analytics-(node|browser)\b/.test(read(page)) }).toEqual({ page, bare: false });
    expect(read('docs/sdks.md')).toMatch(/not on the registry yet[\s\S]{0,300}release step/);
  });
});
