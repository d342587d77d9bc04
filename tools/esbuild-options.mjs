// The one esbuild configuration for bundling our TypeScript for Node: tools/build.mjs (the apps) and the
// benchmarks (libs bundled from source) share it. Dependencies stay in node_modules; SQL files become text.
export const nodeBundleOptions = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  packages: 'external',
  loader: { '.sql': 'text' },
  tsconfig: 'tsconfig.base.json',
  logLevel: 'warning',
};
