import { randomUUID } from 'node:crypto';

/**
 * Statements that may be cancelled carry a tag of their own in their SETTINGS (log_comment), found by KILL QUERY from
 * another connection: chDB assigns its own query ids (the client's query_id never reaches the engine) and applies
 * clickhouse_settings to the whole session, so neither can mark one statement. Tags are our own UUIDs.
 */
export const newCancelTag = (prefix = ''): string => `${prefix}${randomUUID()}`;

/** The aggregate builder's statements carry tags with this prefix: a new holder of the builder's lease cancels them all. */
export const BUILD_TAG_PREFIX = 'aggregate-build:';

/**
 * Cancels every build statement still running (a builder that lost its lease, or died, may have left one), and waits.
 * In a cluster on every node (`ON CLUSTER`): with parallel_distributed_insert_select a fold runs on a replica of every
 * shard, each carrying the tag (settings travel with the query to the shards), not only on the node the builder reached.
 */
export const killBuildsSql = (cluster?: string): string =>
  `KILL QUERY${cluster ? ` ON CLUSTER ${cluster}` : ''} WHERE startsWith(Settings['log_comment'], '${BUILD_TAG_PREFIX}') SYNC`;

/** The setting that tags a statement (appended to its SETTINGS clause). */
export const cancelTagSetting = (tag: string): string => `log_comment = '${tag}'`;

/** Cancels the statements carrying `tag`, without waiting for them to stop (in a cluster, on every node). */
export const killByTag = (tag: string, cluster?: string): string =>
  `KILL QUERY${cluster ? ` ON CLUSTER ${cluster}` : ''} WHERE Settings['log_comment'] = '${tag}' ASYNC`;
