import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The text of an applied migration file, read (never written) by specs that pin what it created. */
export function readMigrationFile(name: string): string {
  return readFileSync(join(__dirname, '..', 'tables', 'migrations', name), 'utf8');
}
