// npm run pack:sdks: builds both SDKs as npm packages and writes one `npm pack` tarball each to dist/packages/.
// sdk-browser: its own build (ESM, CJS, d.ts, IIFE). sdk-node: ESM and CJS bundles, and declarations emitted from the
// source with those of libs/schema it derives its types from (the '@analytics/schema' alias becomes a relative path).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const packages = join(root, 'dist/packages');
mkdirSync(packages, { recursive: true });

execFileSync(process.execPath, [join(root, 'libs/sdk-browser/build.mjs')], { cwd: root, stdio: 'inherit' });

const nodeOut = join(root, 'dist/libs/sdk-node');
rmSync(nodeOut, { recursive: true, force: true });
const common = { entryPoints: [join(root, 'libs/sdk-node/src/index.ts')], bundle: true, platform: 'node', target: 'node20', legalComments: 'none', logLevel: 'warning', packages: 'external' };
await Promise.all([
  build({ ...common, format: 'esm', outfile: join(nodeOut, 'index.mjs') }),
  build({ ...common, format: 'cjs', outfile: join(nodeOut, 'index.cjs') }),
]);

const types = join(nodeOut, 'types');
const program = ts.createProgram([join(root, 'libs/sdk-node/src/index.ts')], {
  declaration: true,
  emitDeclarationOnly: true,
  outDir: types,
  rootDir: join(root, 'libs'),
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.Preserve,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  strict: true,
  skipLibCheck: true,
  lib: ['lib.es2023.d.ts'],
  types: ['node'],
  paths: { '@analytics/schema': [join(root, 'libs/schema/src/index.ts')] },
});
const emitted = program.emit();
const problems = ts.getPreEmitDiagnostics(program).concat(emitted.diagnostics).filter((d) => d.category === ts.DiagnosticCategory.Error);
if (problems.length > 0) throw new Error(ts.formatDiagnostics(problems, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => '\n' }));
const schemaIndex = join(types, 'schema/src/index');
const walk = (dir) => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));
for (const file of walk(types)) {
  const text = readFileSync(file, 'utf8');
  const rel = relative(dirname(file), schemaIndex);
  writeFileSync(file, text.replaceAll("'@analytics/schema'", `'${rel.startsWith('.') ? rel : `./${rel}`}'`));
}
for (const file of ['package.json', 'README.md']) copyFileSync(join(root, 'libs/sdk-node', file), join(nodeOut, file));

for (const dir of ['dist/libs/sdk-browser', 'dist/libs/sdk-node']) {
  const out = execFileSync('npm', ['pack', '--pack-destination', packages, '--json'], { cwd: join(root, dir), encoding: 'utf8' });
  const [{ filename, size }] = JSON.parse(out);
  console.log(`pack-sdks: dist/packages/${filename} (${size} B)`);
}
