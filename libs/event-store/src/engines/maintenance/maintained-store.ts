import type { ClickHouseClient } from '@clickhouse/client';

/**
 * The port forgets and retention delete through (the EventStore is one): the events tables, reads and statements, and
 * the wait that puts every acknowledged event into the aggregates before a delete (which never rewrites them).
 */
export interface MaintainedStore {
  readonly db: string;
  readonly cluster: string | undefined;
  /** The table reads go to: `events` (the Distributed table in a cluster). */
  readonly eventsTable: string;
  /** The table holding the rows, for mutations and partition drops: `events_local` in a cluster. */
  readonly localEventsTable: string;
  /** Statements that carry settings of their own (a lightweight delete, an asynchronous mutation). */
  readonly client: Pick<ClickHouseClient, 'command'>;
  /** The group-commit writer: a partition drop holds its far lane, the one lane that writes months not live. */
  readonly writer: { exclusiveFar<T>(fn: () => Promise<T>): Promise<T> };
  select<T>(query: string, params: Record<string, unknown>): Promise<T[]>;
  command(query: string, params?: Record<string, unknown>): Promise<void>;
  /** Waits until every INSERT started so far is in the aggregates; the highest insert_seq among them (embedded store). */
  settleForDelete(): Promise<number | undefined>;
}
