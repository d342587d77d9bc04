// Child process of the batch benchmark: the raw insert rate of the same enriched rows straight into the embedded
// event store (EventStore.insertRows: one INSERT per call, no HTTP, no validation, no enrichment in the timing).
// Prints one JSON line: { perBlock: { <rows per INSERT>: events/s }, peakRssMiB }.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { UAS, batchBodies, memoryOf } from './lib.mjs';

const [bundle, seconds, ...blocks] = process.argv.slice(2);
const lib = createRequire(import.meta.url)(bundle);
const dir = mkdtempSync(join(tmpdir(), 'bench-raw-'));
const store = await lib.EventStore.open({ chdbPath: join(dir, 'clickhouse'), database: 'analytics' });
lib.loadGeo();

// The same inputs the HTTP run sends, enriched as the server would (outside the timing).
const rows = [];
batchBodies().forEach((body, b) => {
  const enrich = lib.createEnricher({ projectId: '7d1c6a2e-6a0e-4c1e-9a53-1f0d3c1b2a10', ip: '81.2.69.160', userAgent: UAS[b % UAS.length], host: 'shop.example.com', nowMs: Date.now(), ipHashSecret: 'bench' });
  for (const e of JSON.parse(body.replace('__REQ__', `raw-${b}`)).events) rows.push(enrich(lib.eventInputSchema.parse(e)));
});

const perBlock = {};
for (const block of blocks.map(Number)) {
  const chunks = [];
  for (let i = 0; i + block <= Math.max(rows.length, block); i += block) {
    const chunk = [];
    for (let j = 0; j < block; j++) chunk.push(rows[(i + j) % rows.length]);
    chunks.push(chunk);
  }
  await store.insertRows(chunks[0]); // warm-up
  let n = 0;
  let k = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < Number(seconds) * 1000) {
    const chunk = chunks[k++ % chunks.length];
    await store.insertRows(chunk);
    n += chunk.length;
  }
  perBlock[block] = n / ((performance.now() - t0) / 1000);
}
const peakRssMiB = memoryOf(process.pid).hwmMiB;
await store.close();
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ perBlock, peakRssMiB }));
