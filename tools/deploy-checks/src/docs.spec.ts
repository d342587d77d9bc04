import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { envSchema } from '@analytics/runtime';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the settings are read from each app's own config schema
import { adminApiConfig } from '../../../apps/admin-api/src/config';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the settings are read from each app's own config schema
import { aggregateBuilderConfig } from '../../../apps/aggregate-builder/src/config';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the settings are read from each app's own config schema
import { ingestApiConfig } from '../../../apps/ingest-api/src/config';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the settings are read from each app's own config schema
import { mcpGatewayConfig } from '../../../apps/mcp-gateway/src/config';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the settings are read from each app's own config schema
import { readApiConfig } from '../../../apps/read-api/src/config';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the settings are read from each app's own config schema
import { retentionOnceConfig, retentionWorkerConfig } from '../../../apps/retention-worker/src/config';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the settings are read from each app's own config schema
import { standaloneConfig } from '../../../apps/standalone/src/config';
import { root } from './routes';

// The docs hold together (issue 44, "Docs in pages"): every relative link and anchor of every Markdown file in the
// repository resolves, every setting of the apps' config schemas is in docs/configuration.md, the README stays short.

const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.nx', '.git', '.data', 'coverage', 'tmp']);

/** Every *.md file of the repository (README.md, BENCHMARKS.md, docs/**, apps/libs/tools/docker READMEs, ...). */
function markdownFiles(dir = root): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : markdownFiles(path);
    return entry.isFile() && entry.name.endsWith('.md') ? [path] : [];
  });
}

/** The lines of a Markdown file outside fenced code blocks, with their numbers. */
function proseLines(markdown: string): Array<{ line: string; n: number }> {
  const out: Array<{ line: string; n: number }> = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((line, i) => {
    const open = /^\s*(```+|~~~+)/.exec(line);
    if (open) {
      if (fence === undefined) fence = open[1]![0];
      else if (open[1]![0] === fence) fence = undefined;
      return;
    }
    if (fence === undefined) out.push({ line, n: i + 1 });
  });
  return out;
}

/** GitHub's heading anchor (github-slugger): lowercase, punctuation dropped but `-` and `_`, each space a `-`. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text only
    .replace(/<[^>]+>/g, ''); // inline HTML
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
}

/** The anchors a Markdown file offers: its headings' slugs (repeats get -1, -2, ...) and explicit `<a id|name>`. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { line } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const slug = githubSlug(heading[1]!);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}

/** The link targets of a Markdown file's prose (inline links and images, and reference definitions). */
function linksOf(markdown: string): Array<{ target: string; n: number }> {
  const links: Array<{ target: string; n: number }> = [];
  for (const { line, n } of proseLines(markdown)) {
    const prose = line.replace(/(`+)[\s\S]*?\1/g, '``'); // code spans hold no links
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: m[1]!, n });
    const ref = /^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)/.exec(prose);
    if (ref) links.push({ target: ref[1]!, n });
  }
  return links;
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

/** Every broken relative link or anchor of the given files, as `file:line: target (why)`. */
export function brokenLinks(files: readonly string[]): string[] {
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (file: string) => {
    if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(readFileSync(file, 'utf8')));
    return anchorCache.get(file)!;
  };
  const problems: string[] = [];
  for (const file of files) {
    for (const { target, n } of linksOf(readFileSync(file, 'utf8'))) {
      if (target === '' || isExternal(target)) continue;
      const at = `${relative(root, file)}:${n}: ${target}`;
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const resolved = pathPart === '' ? file : resolve(dirname(file), pathPart.split('?')[0]!);
      // Outside this repository (the workspace's ../shared/SPEC.md): not this repository's to check.
      if (resolved !== root && !resolved.startsWith(root + sep)) continue;
      if (!existsSync(resolved)) {
        problems.push(`${at} (no such file)`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (!resolved.endsWith('.md') || statSync(resolved).isDirectory()) continue;
      if (!anchors(resolved).has(anchor)) problems.push(`${at} (no heading with that anchor in ${relative(root, resolved)})`);
    }
  }
  return problems;
}

/** The setting names of a config schema, from the zod object itself. */
function settingsOf(schema: z.ZodType): string[] {
  if (!(schema instanceof z.ZodObject)) throw new Error('a config schema is expected to be a zod object');
  return Object.keys(schema.shape);
}

describe('docs', () => {
  const files = markdownFiles();

  it('finds the Markdown files it checks', () => {
    const names = files.map((f) => relative(root, f));
    for (const expected of ['README.md', 'BENCHMARKS.md', 'docs/configuration.md', 'libs/event-store/README.md', 'docker/README.md']) {
      expect(names).toContain(expected);
    }
  });

  it('resolves every relative link and anchor of every Markdown file', () => {
    expect(brokenLinks(files)).toEqual([]);
  });

  it('names every setting of the apps\' config schemas in docs/configuration.md', () => {
    const configs = [adminApiConfig, aggregateBuilderConfig, ingestApiConfig, mcpGatewayConfig, readApiConfig, retentionWorkerConfig, retentionOnceConfig, standaloneConfig];
    // Every app's config.ts is among them: a new app's settings cannot be left out by forgetting its import here.
    const appsWithConfig = readdirSync(join(root, 'apps')).filter((app) => existsSync(join(root, 'apps', app, 'src', 'config.ts')));
    expect(new Set(configs.map((c) => c.name))).toEqual(new Set(appsWithConfig));
    const names = new Set([envSchema, ...configs.map((c) => c.schema)].flatMap(settingsOf));
    expect(names.size).toBeGreaterThan(40);
    const page = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');
    const missing = [...names].filter((name) => !page.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it('keeps the README to 250 lines at most', () => {
    expect(readFileSync(join(root, 'README.md'), 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(250);
  });

  it('slugs headings as GitHub does', () => {
    expect(githubSlug('Insights (`POST /v1/insights`, `GET /v1/properties`)')).toBe('insights-post-v1insights-get-v1properties');
    expect(githubSlug('Fair reads (`read-gate.ts`, `read-usage.ts`, `read-side.ts`)')).toBe('fair-reads-read-gatets-read-usagets-read-sidets');
    expect(githubSlug('Conversions: goals, funnels, retention')).toBe('conversions-goals-funnels-retention');
    expect(githubSlug('`daily_uniques_by` (006): visitors')).toBe('daily_uniques_by-006-visitors');
  });
});
