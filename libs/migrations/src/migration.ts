import { createHash } from 'node:crypto';

/** One migration as a store (in its mode) runs it. */
export interface Migration {
  version: number;
  /** The file name without `.sql`, as recorded: `001_events`. */
  name: string;
  /** The file errors name (a path under the store's migrations folder); undefined where this mode runs nothing for the version. */
  file: string | undefined;
  statements: readonly string[];
  /** sha256 (hex) of the statements: what is recorded when the migration is applied, and checked at every start after. */
  checksum: string;
}

const FILE_NAME = /^(\d+)_(\w+)\.sql$/;

/** `001_events.sql` (or a path ending in it) -> version 1, name `001_events`. */
export function parseMigrationFileName(path: string): { version: number; name: string } {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const match = FILE_NAME.exec(base);
  if (!match) throw new Error(`a migration file is named <number>_<name>.sql (got ${JSON.stringify(path)})`);
  return { version: Number(match[1]), name: base.slice(0, -'.sql'.length) };
}

/** The statements of a migration file: whole-line `--` comments dropped, split at a `;` that ends a line. */
export function splitStatements(sql: string): string[] {
  return sql
    .replace(/^\s*--.*$/gm, '')
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter(Boolean);
}

export function checksumOf(statements: readonly string[]): string {
  return createHash('sha256').update(statements.join(';\n')).digest('hex');
}

/** A migration named by its file: `fileName` gives version and name, `file` is the path errors name (none: nothing runs). */
export function defineMigration(fileName: string, statements: readonly string[], file: string | undefined): Migration {
  return { ...parseMigrationFileName(fileName), file, statements, checksum: checksumOf(statements) };
}
