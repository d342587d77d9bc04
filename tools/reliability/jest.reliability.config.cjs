// The reliability suite (`npm run test:reliability`): real server processes and real stores, one file at a time
// (each file starts its own servers; in parallel they would measure the machine, not the service). Named so the
// @nx/jest plugin, which infers `test` from jest.config.*, leaves it out of `npm test`.
const path = require('node:path');

module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'reliability',
  rootDir: __dirname,
  testMatch: ['**/*.reliability.ts'],
  globalSetup: path.join(__dirname, 'src/support/global-setup.cjs'),
  maxWorkers: 1,
  testTimeout: 180_000,
};
