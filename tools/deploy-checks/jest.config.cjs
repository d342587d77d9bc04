// kubernetes-models is ESM only: keep `import()` native (jest runs it with --experimental-vm-modules) instead of
// letting swc turn it into require().
const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'deploy-checks',
  rootDir: __dirname,
  transform: {
    ...preset.transform,
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs', ignoreDynamic: true } }],
  },
  testTimeout: 120_000,
};
