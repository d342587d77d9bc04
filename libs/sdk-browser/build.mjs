// Builds the browser SDK: dist/libs/sdk-browser/index.mjs (ES module), index.cjs (CommonJS) + index.d.ts, and analytics.min.js
// (minified IIFE for a <script> tag, exposing window.analytics). Prints the IIFE's minified+gzipped size.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import ts from 'typescript';
import { copyIfChanged, writeIfChanged, writeOutputFiles } from '../../tools/build-output.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const src = join(root, 'libs/sdk-browser/src/index.ts');
const out = join(root, 'dist/libs/sdk-browser');

const common = { write: false, entryPoints: [src], bundle: true, target: 'es2018', legalComments: 'none', logLevel: 'warning', tsconfig: join(root, 'libs/sdk-browser/tsconfig.json') };
await Promise.all([
  build({ ...common, format: 'esm', outfile: join(out, 'index.mjs') }).then(writeOutputFiles),
  build({ ...common, format: 'cjs', outfile: join(out, 'index.cjs') }).then(writeOutputFiles),
  build({ ...common, format: 'iife', globalName: 'analytics', minify: true, outfile: join(out, 'analytics.min.js') }).then(writeOutputFiles),
]);

// Declarations of the ES module (the source annotates every export, so a per-file transpile is enough).
const dts = ts.transpileDeclaration(readFileSync(src, 'utf8'), { fileName: 'index.ts', compilerOptions: { lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'] } });
writeIfChanged(join(out, 'index.d.ts'), dts.outputText);
// The directory is the npm package (npm run pack:sdks packs it): its manifest and README beside the builds.
for (const file of ['package.json', 'README.md']) copyIfChanged(join(root, 'libs/sdk-browser', file), join(out, file));

const min = readFileSync(join(out, 'analytics.min.js'));
console.log(`sdk-browser: analytics.min.js ${min.length} B minified, ${gzipSync(min, { level: 9 }).length} B gzipped`);
