// Which reliability suites measure the machine and which only check outcomes. The timed ones (throughput, p99, event-loop
// lag and memory beside an attack, under load) run alone, one file at a time: `npm run test:reliability`
// (jest.reliability.config.cjs). The others assert what happened (nothing lost after kill -9, the right codes while a
// store is cut, no 5xx whatever the input, no leak across projects, no IP or secret stored) and hold on a busy machine:
// they run within `npm test` (jest.config.cjs, the nx `test` target), beside the other projects' suites.
module.exports = {
  TIMED: ['hostile', 'hostile-writes', 'heavy-tenant', 'slow-bodies', 'export-hold', 'load'],
  OUTCOMES: ['crash', 'topology-crash', 'faults', 'fuzz', 'isolation', 'privacy'],
};

// A suite in neither list would run nowhere: refuse to start until it is named in one.
const { readdirSync } = require('node:fs');
const path = require('node:path');
const named = new Set([...module.exports.TIMED, ...module.exports.OUTCOMES]);
const unnamed = readdirSync(path.join(__dirname, 'src'))
  .filter((f) => f.endsWith('.reliability.ts'))
  .map((f) => f.slice(0, -'.reliability.ts'.length))
  .filter((name) => !named.has(name));
if (unnamed.length) throw new Error(`tools/reliability/suites.cjs: name ${unnamed.join(', ')} in TIMED or OUTCOMES`);
