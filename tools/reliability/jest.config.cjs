// The reliability suites that check outcomes, not timings (suites.cjs): real server processes and real stores, run by
// `npm test` as the nx `test` target of this project. The timed ones are jest.reliability.config.cjs's.
const path = require('node:path');
const { OUTCOMES } = require('./suites.cjs');

module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'reliability',
  rootDir: __dirname,
  testMatch: OUTCOMES.map((name) => `**/src/${name}.reliability.ts`),
  globalSetup: path.join(__dirname, 'src/support/global-setup.cjs'),
  // Each file starts its own servers: one at a time, beside the other projects' suites.
  maxWorkers: 1,
};
