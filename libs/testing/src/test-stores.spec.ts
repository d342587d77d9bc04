import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openTestStores } from './test-stores';

it('opens real embedded stores in a temp DATA_DIR and removes it on close', async () => {
  const stores = await openTestStores();
  expect(existsSync(join(stores.dataDir, 'clickhouse'))).toBe(true);
  expect(stores.events.db).toMatch(/^t_[0-9a-f]{12}$/);
  const [row] = await stores.events.select<{ n: string }>('SELECT count() AS n FROM ' + stores.events.eventsTable, {});
  expect(Number(row!.n)).toBe(0);
  const { project } = await stores.keyStore.createProject({ name: 'x' });
  expect(await stores.keyStore.getProject(project.id)).toMatchObject({ name: 'x' });
  await stores.close();
  expect(existsSync(stores.dataDir)).toBe(false);
});
