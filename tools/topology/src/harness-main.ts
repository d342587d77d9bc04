import { parseArgs } from 'node:util';
import { createHarness } from './clickhouse-harness';

/**
 * `node dist/tools/clickhouse-harness/main.js --path <dir> [--port <n>]`: the ClickHouse HTTP test harness (never
 * shipped) on 127.0.0.1. Prints one JSON line `{"msg":"listening","port":N}` like the apps; stops on SIGINT/SIGTERM.
 */
const { values } = parseArgs({ options: { path: { type: 'string' }, port: { type: 'string', default: '0' } } });
if (!values.path) {
  process.stderr.write('clickhouse-harness: --path <data directory> is required\n');
  process.exit(1);
}
const harness = createHarness(values.path);
harness.server.listen(Number(values.port), '127.0.0.1', () => {
  const address = harness.server.address();
  process.stdout.write(`${JSON.stringify({ msg: 'listening', service: 'clickhouse-harness', port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void harness.close().then(() => process.exit(0)));
