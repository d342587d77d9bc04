// Shared jest settings: swc for speed (types are checked by the typecheck target),
// and the tsconfig path aliases mapped to source so tests run without a build.
const path = require('node:path');
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = {};
for (const [alias, [target]] of Object.entries(compilerOptions.paths)) {
  moduleNameMapper[`^${alias}$`] = path.join(__dirname, target);
}

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.sql$': path.join(__dirname, 'tools/sql-transform.cjs'),
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  moduleFileExtensions: ['ts', 'js', 'json', 'sql'],
  moduleNameMapper,
  testMatch: ['**/*.spec.ts'],
  testTimeout: 60_000,
};
