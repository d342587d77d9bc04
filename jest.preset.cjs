// Shared jest settings: swc for speed (types are checked by the typecheck target),
// and the tsconfig path aliases mapped to source so tests run without a build.
const path = require('node:path');

// As in every bundle (tools/esbuild-options.mjs): embedded chDB statements hold libuv pool threads until they end.
// Set before jest starts its workers (they inherit it) and before the in-band run first uses the pool.
process.env.UV_THREADPOOL_SIZE ??= '16';
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = {};
for (const [alias, [target]] of Object.entries(compilerOptions.paths)) {
  moduleNameMapper[`^${alias}$`] = path.join(__dirname, target);
}

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.sql$': path.join(__dirname, 'tools/sql-transform.cjs'),
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs', ignoreDynamic: true } }],
  },
  moduleFileExtensions: ['ts', 'js', 'json', 'sql'],
  moduleNameMapper,
  testMatch: ['**/*.spec.ts'],
  // Generous: a test's bound is what it asserts, never how fast this machine is (a loaded 2-core CI runner included).
  testTimeout: 180_000,
  // A handle a suite leaves open (a timer, a socket) must not keep jest, and with it `npm test` and CI, running after
  // the last result: every test is already bounded by testTimeout, and the run ends when they have all reported.
  forceExit: true,
};
