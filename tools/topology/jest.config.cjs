const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'topology',
  rootDir: __dirname,
  testTimeout: 60_000,
};
