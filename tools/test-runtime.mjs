#!/usr/bin/env node
// The suites that depend on the Node runtime, for the Nodes CI does not run the whole `npm test` on (.ci/run runs
// every suite on Node 24 and this on the machine's Node and Node 22): the native (chDB) and WebAssembly (PGlite) stores
// through their own specs, and the SDK packages installed from their tarballs. `node tools/test-runtime.mjs`; it
// needs TEST_DATABASE_URL and TEST_REDIS_URL as `npm test` does, and exits non-zero when any suite fails.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const SUITES = {
  // chDB, the embedded event store: schema and migrations, the writer, the read path.
  'libs/event-store/jest.config.cjs': ['src/tables/migrate.spec.ts', 'src/engines/write/event-writer.spec.ts', 'src/queries/read-path.spec.ts'],
  // PGlite and PostgreSQL behind one migration runner; the builder's lease on both.
  'libs/migrations/jest.config.cjs': ['src/run-migrations.spec.ts'],
  'apps/aggregate-builder/jest.config.cjs': ['src/lease.spec.ts'],
  // The Node SDK packed, installed into a fresh folder and run (ESM and CommonJS); its tsc checks are npm test's
  // (TEST_RUNTIME_ONLY below: the compiler's answers do not depend on the Node that runs it).
  'libs/sdk-node/jest.config.cjs': ['src/package.spec.ts'],
};

const jest = createRequire(import.meta.url).resolve('jest/bin/jest');
const env = { ...process.env, TEST_RUNTIME_ONLY: '1', NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules --no-warnings=ExperimentalWarning`.trim() };
console.log(`test-runtime: Node ${process.version}`);
let failed = false;
for (const [config, specs] of Object.entries(SUITES)) {
  const root = config.slice(0, config.lastIndexOf('/'));
  const run = spawnSync(process.execPath, [jest, '-c', config, '--runTestsByPath', ...specs.map((s) => `${root}/${s}`)], { stdio: 'inherit', env });
  if (run.status !== 0) failed = true;
}
process.exitCode = failed ? 1 : 0;
