// The JavaScript cost per event of the batch path, in one process, without HTTP or the store:
// JSON.parse of the body, validation (batchInputSchema), enrichment (createEnricher) and the INSERT payload
// (JSONCompactEachRow lines). Single-threaded, and timed in this process's CPU time (not wall time), so a change's
// effect shows even on a machine busy with other work.
//   node tools/bench/pipeline.mjs [--seconds=5]
import { performance } from 'node:perf_hooks';
import { UAS, batchBodies, bundleFromSource } from './lib.mjs';

const seconds = Number(process.argv.find((a) => a.startsWith('--seconds='))?.slice(10) ?? 5);
const { lib } = await bundleFromSource('pipeline-bench', [
  "export { EVENT_INSERT_COLUMNS } from './libs/event-store/src/index';",
  "export { createEnricher, loadGeo } from './libs/enrichment/src/index';",
  "export { batchInputSchema } from './libs/schema/src/index';",
]);
lib.loadGeo();
const bodies = batchBodies().map((b, i) => b.replace('__REQ__', `req-${i}`));
const columns = lib.EVENT_INSERT_COLUMNS;
const once = (i) => {
  const { events } = lib.batchInputSchema.parse(JSON.parse(bodies[i % bodies.length]));
  const enrich = lib.createEnricher({ projectId: '7d1c6a2e-6a0e-4c1e-9a53-1f0d3c1b2a10', ip: '81.2.69.160', userAgent: UAS[i % UAS.length], host: 'shop.example.com', nowMs: Date.now(), ipHashSecret: 'bench' });
  let text = '';
  for (const e of events) {
    const row = enrich(e);
    text += `${JSON.stringify(columns.map((c) => row[c]))}\n`;
  }
  return text.length;
};
for (let i = 0; i < 50; i++) once(i); // warm-up
let n = 0;
const t0 = performance.now();
const cpu0 = process.cpuUsage();
while (performance.now() - t0 < seconds * 1000) once(n++);
const cpu = process.cpuUsage(cpu0);
const us = cpu.user + cpu.system;
console.log(`batch path in JS: ${(us / (n * 1000)).toFixed(1)} µs of CPU per event (${n} requests of 1000 events; ${Math.round((n * 1000) / (us / 1e6)).toLocaleString('en')} events per CPU-second)`);
