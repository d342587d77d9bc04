// Bundles each app's main.ts into dist/apps/<app>/main.js (dependencies stay in node_modules; SQL files inlined as text).
// An app with its own build.mjs (the browser dashboard) is built by it instead.
import { build } from 'esbuild';
import { writeOutputFiles } from './build-output.mjs';
import { nodeBundleOptions } from './esbuild-options.mjs';
import { existsSync, readdirSync } from 'node:fs';

const apps = readdirSync('apps').filter((a) => existsSync(`apps/${a}/src/main.ts`) && !existsSync(`apps/${a}/build.mjs`));
const ownBuilds = readdirSync('apps').filter((a) => existsSync(`apps/${a}/build.mjs`));
// The local production shape (npm run topology) and its ClickHouse HTTP test harness: tools, never shipped.
const tools = { 'tools/topology': 'tools/topology/src/main.ts', 'tools/clickhouse-harness': 'tools/topology/src/harness-main.ts' };
const entries = { ...Object.fromEntries(apps.map((app) => [`apps/${app}`, `apps/${app}/src/main.ts`])), ...tools };
await Promise.all(
  Object.entries(entries).map(([out, entry]) =>
    build({
      entryPoints: [entry],
      outfile: `dist/${out}/main.js`,
      ...nodeBundleOptions,
      sourcemap: true,
      write: false,
    }).then(writeOutputFiles),
  ),
);
for (const app of ownBuilds) await import(`../apps/${app}/build.mjs`);
// The browser SDK's script tag build, served by the service at /sdk/analytics.min.js.
await import('../libs/sdk-browser/build.mjs');
console.log(`built ${[...Object.keys(entries), ...ownBuilds.map((a) => `apps/${a}`)].join(', ')}`);
