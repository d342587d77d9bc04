import type { ConnectionConfig } from './client/client';
import type { ForgetQueueOptions } from './engines/maintenance/forget-queue';
import type { ReadLimits } from './engines/read/read-limits';
import type { BuilderConfig } from './engines/write/write-side';

/** The event store's settings: how to reach the engine, where our tables are, and how each engine runs. */
export interface EventStoreConfig extends ConnectionConfig, BuilderConfig {
  /** Database holding our tables. */
  database: string;
  /** Cluster name: tables become Replicated + Distributed ON CLUSTER. */
  cluster?: string;
  /** Limits and admission of reads (GET /v1/query, /v1/stats, /v1/sources and the MCP read tools). */
  read?: Partial<ReadLimits>;
  /**
   * A ClickHouse server, in a process that does not build: how long a read of the aggregates waits for the builder to
   * build what was acknowledged before it (AGGREGATE_WAIT_MS; default 0: reads do not wait, they answer from what is
   * built). Deletes wait for the builder whatever it is (at least 5 s).
   */
  aggregateWaitMs?: number;
  /** Batching of forgets (one mutation per interval, bounded pending mutations). */
  forget?: ForgetQueueOptions;
}
