// The reliability suites that check outcomes, not timings (suites.cjs): real server processes and real stores, run by
// `npm test` as the nx `test` target of this project, one file at a time beside the other projects' suites. The timed
// ones are jest.reliability.config.cjs's, whose settings these share.
const { OUTCOMES } = require('./suites.cjs');

module.exports = {
  ...require('./jest.reliability.config.cjs'),
  testMatch: OUTCOMES.map((name) => `**/src/${name}.reliability.ts`),
};
