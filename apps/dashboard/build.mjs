// Builds the dashboard into dist/apps/dashboard: index.html, assets/dashboard.js (minified, uPlot bundled),
// assets/dashboard.css and the favicon. Everything is local: the page requests nothing from another host.
// Fails when the JavaScript is over its budget (100 KB gzipped, the dashboard's target).
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { copyIfChanged, writeOutputFiles } from '../../tools/build-output.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const src = join(root, 'apps/dashboard/src');
const out = join(root, 'dist/apps/dashboard');
const BUDGET_GZIP_BYTES = 100 * 1024;

const result = await build({
  entryPoints: [join(src, 'main.ts'), join(src, 'styles.css')],
  outdir: join(out, 'assets'),
  entryNames: 'dashboard',
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['chrome100', 'firefox100', 'safari15'],
  legalComments: 'none',
  logLevel: 'warning',
  tsconfig: join(root, 'apps/dashboard/tsconfig.json'),
  write: false,
});
writeOutputFiles(result);
copyIfChanged(join(src, 'index.html'), join(out, 'index.html'));
copyIfChanged(join(src, 'favicon.svg'), join(out, 'assets/favicon.svg'));

const js = gzipSync(readFileSync(join(out, 'assets/dashboard.js')), { level: 9 }).length;
console.log(`dashboard: assets/dashboard.js ${js} B gzipped (budget ${BUDGET_GZIP_BYTES} B)`);
if (js > BUDGET_GZIP_BYTES) throw new Error(`dashboard: JavaScript over its budget (${js} B > ${BUDGET_GZIP_BYTES} B gzipped)`);
