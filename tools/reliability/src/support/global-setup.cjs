// Builds dist/apps/*/main.js once (what `npm start` runs) before the suites spawn it.
const { execFileSync } = require('node:child_process');
const path = require('node:path');

module.exports = async () => {
  execFileSync(process.execPath, ['tools/build.mjs'], { cwd: path.join(__dirname, '../../../..'), stdio: 'inherit' });
};
