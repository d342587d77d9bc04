// The one esbuild configuration for bundling our TypeScript for Node: tools/build.mjs (the apps) and the
// benchmarks (libs bundled from source) share it. Dependencies stay in node_modules; SQL files become text.
const UV_THREADPOOL_SIZE = '16';
// The same for the benchmarks that import this (through bench/lib.mjs) and run the embedded store in their own process:
// nothing has used the pool yet when their imports are evaluated.
process.env.UV_THREADPOOL_SIZE ??= UV_THREADPOOL_SIZE;

export const nodeBundleOptions = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  packages: 'external',
  loader: { '.sql': 'text' },
  tsconfig: 'tsconfig.base.json',
  logLevel: 'warning',
  // First statement of every bundle, before anything uses libuv's pool: each embedded chDB statement (a read, the
  // writer's and the builder's INSERTs, an export, a KILL) holds one of its threads until it ends, and the default of 4
  // left a read's KILL waiting behind the read it cancels. An operator's own UV_THREADPOOL_SIZE wins.
  banner: { js: `process.env.UV_THREADPOOL_SIZE ??= '${UV_THREADPOOL_SIZE}';` },
};
