import { defineMigration } from './migration';
import { type AppliedMigration, type MigrationTarget, runMigrations } from './run-migrations';

// The stores' own specs run the runner on chDB, PGlite and PostgreSQL; this one covers its rules on a plain list.
function listTarget(rows: AppliedMigration[] = []): MigrationTarget & { rows: AppliedMigration[]; ran: string[] } {
  return {
    rows,
    ran: [],
    listApplied: async () => rows.map((r) => ({ ...r })),
    async apply(m) {
      this.ran.push(...m.statements);
    },
    async record(m) {
      const row = rows.find((r) => r.version === m.version);
      if (row) row.checksum = m.checksum;
      else rows.push({ version: m.version, name: m.name, checksum: m.checksum });
    },
  };
}

const m1 = defineMigration('001_a.sql', ['CREATE a'], '001_a.sql');
const m2 = defineMigration('002_b.sql', ['CREATE b', 'FILL b'], '002_b.sql');

describe('runMigrations', () => {
  it('applies every migration of a fresh store in order and records its checksum', async () => {
    const target = listTarget();
    expect(await runMigrations(target, [m1, m2], 'test store')).toEqual([1, 2]);
    expect(target.ran).toEqual(['CREATE a', 'CREATE b', 'FILL b']);
    expect(target.rows).toEqual([{ version: 1, name: '001_a', checksum: m1.checksum }, { version: 2, name: '002_b', checksum: m2.checksum }]);
    expect(await runMigrations(target, [m1, m2], 'test store')).toEqual([]);
  });

  it('refuses to start, naming the file, when an applied migration changed, and applies nothing', async () => {
    const target = listTarget([{ version: 1, name: '001_a', checksum: m1.checksum }]);
    const changed = defineMigration('001_a.sql', ['CREATE a2'], 'sub/001_a.sql');
    await expect(runMigrations(target, [changed, m2], 'test store')).rejects.toThrow(/^test store refuses to start: migration sub\/001_a\.sql has changed since it was applied/);
    expect(target.ran).toEqual([]);
  });

  it('refuses a file renamed after it was applied', async () => {
    const target = listTarget([{ version: 1, name: '001_old', checksum: null }]);
    await expect(runMigrations(target, [m1], 'test store')).rejects.toThrow('migration 001_a.sql has changed since it was applied: version 1 was applied as 001_old');
  });

  it('records the checksums of migrations applied before checksums existed, then checks them', async () => {
    const target = listTarget([{ version: 1, name: '001_a', checksum: null }]);
    expect(await runMigrations(target, [m1, m2], 'test store')).toEqual([2]);
    expect(target.rows[0]).toEqual({ version: 1, name: '001_a', checksum: m1.checksum });
    await expect(runMigrations(target, [defineMigration('001_a.sql', ['CREATE a2'], '001_a.sql'), m2], 'test store')).rejects.toThrow(/001_a\.sql has changed/);
  });

  it('leaves alone versions a newer release recorded', async () => {
    const target = listTarget([{ version: 9, name: '009_later', checksum: 'x' }]);
    expect(await runMigrations(target, [m1], 'test store')).toEqual([1]);
  });

  it('refuses a list whose versions do not increase', async () => {
    await expect(runMigrations(listTarget(), [m2, m1], 'test store')).rejects.toThrow('migration versions must increase');
  });
});
