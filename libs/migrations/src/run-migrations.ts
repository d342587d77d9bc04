import type { Migration } from './migration';

/** A row of a store's schema_migrations; `checksum` is null on rows recorded before checksums were. */
export interface AppliedMigration {
  version: number;
  name: string;
  checksum: string | null;
}

/** What the runner needs of a store. */
export interface MigrationTarget {
  /** Every recorded row, the record table created or brought up to date first. */
  listApplied(): Promise<AppliedMigration[]>;
  /** Runs a migration's statements. */
  apply(migration: Migration): Promise<void>;
  /** Records the migration as applied with its checksum; for one recorded without a checksum, adds the checksum. */
  record(migration: Migration): Promise<void>;
}

/**
 * Applies the migrations not yet recorded, in order, and returns their versions. Before anything runs it checks every
 * recorded one against its file and refuses, naming the file, when the name or the checksum differs; rows recorded
 * before checksums existed get the current checksum. Versions recorded that `migrations` does not hold (a newer
 * release's) are left alone.
 */
export async function runMigrations(target: MigrationTarget, migrations: readonly Migration[], store: string): Promise<number[]> {
  migrations.forEach((m, i) => {
    if (i > 0 && m.version <= migrations[i - 1]!.version) throw new Error(`${store}: migration versions must increase (${migrations[i - 1]!.name}, then ${m.name})`);
  });
  const rows = await target.listApplied();
  const recorded = new Set(rows.map((r) => r.version));
  const missingChecksum: Migration[] = [];
  for (const m of migrations) {
    const mine = rows.filter((r) => r.version === m.version);
    if (mine.length === 0) continue;
    for (const r of mine) {
      if (r.name !== m.name || (r.checksum !== null && r.checksum !== m.checksum)) throw changedError(store, m, r);
    }
    if (mine.every((r) => r.checksum === null)) missingChecksum.push(m);
  }
  for (const m of missingChecksum) await target.record(m);
  const applied: number[] = [];
  for (const m of migrations) {
    if (recorded.has(m.version)) continue;
    await target.apply(m);
    await target.record(m);
    applied.push(m.version);
  }
  return applied;
}

function changedError(store: string, m: Migration, r: AppliedMigration): Error {
  const file = m.file ?? `${m.name} (no file in this mode)`;
  const what = r.name !== m.name ? `version ${m.version} was applied as ${r.name}` : `its statements differ from those applied (checksum ${r.checksum}, now ${m.checksum})`;
  return new Error(
    `${store} refuses to start: migration ${file} has changed since it was applied: ${what}. ` +
      'An applied migration must stay as it was: restore the file and make the change in a new migration.',
  );
}
