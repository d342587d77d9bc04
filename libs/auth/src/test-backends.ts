import { randomBytes } from 'node:crypto';
import { type SqlPort, createPgPort } from './sql-port';
import { memoryPglitePort } from './pglite-template';
import { POSTGRES, systemServer } from './test-servers';

export * from './test-servers';
export { memoryPglitePort, seedPgliteDir } from './pglite-template';

/** The key-store backends to run a suite against: PGlite always, real PostgreSQL when TEST_DATABASE_URL is set (else a skip line). */
export function keyStoreBackends(): Array<[string, () => Promise<SqlPort>]> {
  const backends: Array<[string, () => Promise<SqlPort>]> = [['PGlite', memoryPglitePort]];
  const pg = systemServer(POSTGRES);
  if (pg.available('its key-store suites on PostgreSQL')) backends.push(['PostgreSQL', () => isolatedPgPort(pg.url!)]);
  return backends;
}

/** A PostgreSQL port confined to a fresh schema, so parallel suites never see each other's tables. */
export async function isolatedPgPort(url: string): Promise<SqlPort> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = await createPgPort(url);
  await admin.exec(`CREATE SCHEMA ${schema}`);
  await admin.close();
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  const port = await createPgPort(u.toString());
  return {
    ...port,
    async close() {
      await port.exec(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
      await port.close();
    },
  };
}
