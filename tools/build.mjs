// Bundles each app's main.ts into dist/apps/<app>/main.js (dependencies stay in node_modules; SQL files inlined as text).
import { build } from 'esbuild';
import { nodeBundleOptions } from './esbuild-options.mjs';
import { existsSync, readdirSync } from 'node:fs';

const apps = readdirSync('apps').filter((a) => existsSync(`apps/${a}/src/main.ts`));
await Promise.all(
  apps.map((app) =>
    build({
      entryPoints: [`apps/${app}/src/main.ts`],
      outfile: `dist/apps/${app}/main.js`,
      ...nodeBundleOptions,
      sourcemap: true,
    }),
  ),
);
console.log(`built ${apps.join(', ')}`);
