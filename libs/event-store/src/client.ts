import { type ClickHouseClient, createClient } from '@clickhouse/client';

export interface EventStoreConfig {
  /** ClickHouse server over HTTP; when unset the embedded chDB engine is used. */
  url?: string;
  username?: string;
  password?: string;
  /** chDB data directory (DATA_DIR/clickhouse). */
  chdbPath?: string;
  /** Database holding our tables. */
  database: string;
  /** Cluster name: tables become Replicated + Distributed ON CLUSTER. */
  cluster?: string;
  requestTimeoutMs?: number;
}

export function createClickHouseClient(config: EventStoreConfig): ClickHouseClient {
  if (config.url) {
    return createClient({
      url: config.url,
      username: config.username,
      password: config.password,
      request_timeout: config.requestTimeoutMs ?? 10_000,
      max_open_connections: 32,
      keep_alive: { enabled: true },
    });
  }
  if (!config.chdbPath) throw new Error('event store: set CLICKHOUSE_URL or a chDB path');
  // Loaded lazily so a server-mode deployment never loads the native engine.
  const { createChdbConnection } = require('chdb/connection') as typeof import('chdb/connection');
  return createClient({ connection: createChdbConnection({ path: config.chdbPath }) } as never);
}
