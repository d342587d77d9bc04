// Reads a V8 .cpuprofile (node --cpu-prof) and prints where the time went: self time by package / source file,
// and the top functions by self time.   node tools/bench/profile-summary.mjs <file.cpuprofile> [top=25] [--skip=<s>]
// --skip leaves out the first seconds (start-up: PGlite, migrations, geo data) so the load alone is summed.
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const skipUs = Number(process.argv.find((a) => a.startsWith('--skip='))?.slice(7) ?? 0) * 1e6;
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
let at = 0;
for (let i = 0; i < profile.samples.length; i++) {
  at += dt[i] ?? 0;
  if (at >= skipUs) self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (dt[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);

const where = (url) => {
  if (!url) return '(native/vm)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1];
  if (url.startsWith('node:')) return url;
  if (url.includes('dist/apps/')) return 'ours (dist bundle)';
  return url;
};
const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);
const byPkg = new Map();
const byFn = new Map();
for (const [id, us] of self) {
  const n = byId.get(id);
  const cf = n.callFrame;
  add(byPkg, where(cf.url), us);
  add(byFn, `${cf.functionName || '(anonymous)'}  ${where(cf.url)}:${cf.lineNumber + 1}`, us);
}
const show = (title, map) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
};
console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`);
show('self time by package / file', byPkg);
show('self time by function', byFn);
