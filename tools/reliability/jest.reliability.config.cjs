// The timed reliability suites (`npm run test:reliability`, suites.cjs): real server processes and real stores, one file
// at a time and nothing else running (each measures throughput, latency or memory beside an attack: in parallel they
// would measure the machine, not the service). Named so the @nx/jest plugin, which infers `test` from jest.config.*,
// leaves it out of `npm test`; the suites that check outcomes only are jest.config.cjs's, run by `npm test`.
const path = require('node:path');
const { TIMED } = require('./suites.cjs');

module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'reliability',
  rootDir: __dirname,
  testMatch: TIMED.map((name) => `**/src/${name}.reliability.ts`),
  globalSetup: path.join(__dirname, 'src/support/global-setup.cjs'),
  maxWorkers: 1,
  testTimeout: 180_000,
};
