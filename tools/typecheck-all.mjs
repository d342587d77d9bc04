#!/usr/bin/env node
// Type-checks every project with a tsconfig.json (apps/*, libs/*, tools/*) in as few TypeScript programs as their
// settings allow: projects whose compilerOptions are the same are checked together, so a library that twenty projects
// import is checked once per set of settings, not twenty times (~190 s of CPU for 24 programs, ~15 s for three).
// Each project's own `typecheck` target (`npx nx typecheck auth`) still checks it alone.
// Usage: node tools/typecheck-all.mjs   (exits 1 when any program has an error)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc');

/** Every project folder with a tsconfig.json, and that config's compilerOptions and include (as paths from the root). */
const projects = ['apps', 'libs', 'tools']
  .flatMap((group) => readdirSync(join(root, group), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => join(group, d.name)))
  .filter((dir) => existsSync(join(root, dir, 'tsconfig.json')))
  .map((dir) => {
    const config = JSON.parse(readFileSync(join(root, dir, 'tsconfig.json'), 'utf8'));
    if (config.extends !== '../../tsconfig.base.json' || config.files || config.references) {
      throw new Error(`${dir}/tsconfig.json: typecheck-all groups configs that extend ../../tsconfig.base.json with include only; check this one alone or teach it`);
    }
    return { dir, options: JSON.stringify(config.compilerOptions ?? {}), include: config.include.map((p) => relative(root, resolve(root, dir, p))) };
  });

const groups = new Map();
for (const p of projects) groups.set(p.options, [...(groups.get(p.options) ?? []), p]);

// Inside the repository, so that `types` (node, jest) resolve from its node_modules as they do for the projects' own.
const out = join(root, 'node_modules/.cache/typecheck-all');
mkdirSync(out, { recursive: true });
let failed = 0;
let n = 0;
for (const [options, members] of groups) {
  const file = join(out, `tsconfig.${n++}.json`);
  const include = [...new Set(members.flatMap((m) => m.include))].map((p) => join(root, p));
  writeFileSync(file, JSON.stringify({ extends: join(root, 'tsconfig.base.json'), compilerOptions: JSON.parse(options), include }, null, 2));
  const started = Date.now();
  const run = spawnSync(process.execPath, [tsc, '-p', file, '--noEmit', '--pretty'], { cwd: root, stdio: 'inherit' });
  const names = members.map((m) => m.dir).join(', ');
  console.log(`typecheck-all: ${run.status === 0 ? 'ok' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${names}`);
  if (run.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
