import type { ReadTables } from '../tables/read-tables';

/**
 * The port every query reads through (the EventStore is one; a spec may hand any other): the tables its SQL names, and
 * a read of one project's data, admitted fairly between projects and bounded by the read limits.
 */
export interface Reader {
  readonly tables: ReadTables;
  read<T>(projectId: string, query: string, params: Record<string, unknown>): Promise<T[]>;
}
