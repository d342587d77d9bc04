import { envSchema, loadConfig, openStores, reportMailingOf, runScheduledReports } from '@analytics/runtime';
import { createLogger } from '@analytics/service-kit';

// A scheduler replica in a process of its own, for reports.spec.ts to kill mid-send: one pass of the scheduled
// reports at REPORT_NOW over DATABASE_URL's key store (its own embedded event store under DATA_DIR), then exit 0.
async function main() {
  const env = loadConfig(envSchema, process.env);
  const logger = createLogger({ level: 'silent' });
  const stores = await openStores(env, logger);
  const mailing = reportMailingOf(stores, env, logger);
  if ('missing' in mailing) throw new Error(`missing ${mailing.missing}`);
  process.stdout.write('ready\n');
  // REPORT_DIE_AFTER_ACCEPTED: killed right after the SMTP server accepted a mail, before the send log marks it sent
  // (the window docs/alerts-and-reports.md names).
  const onAccepted = process.env.REPORT_DIE_AFTER_ACCEPTED ? () => void process.kill(process.pid, 'SIGKILL') : undefined;
  const result = await runScheduledReports({ ...mailing, onAccepted }, new Date(Number(process.env.REPORT_NOW)));
  process.stdout.write(`sent ${result.sent}\n`);
  await stores.close();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
