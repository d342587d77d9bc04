import { randomUUID } from 'node:crypto';

/**
 * Statements that may be cancelled carry a tag of their own in their SETTINGS (log_comment), found by KILL QUERY from
 * another connection: chDB assigns its own query ids (the client's query_id never reaches the engine) and applies
 * clickhouse_settings to the whole session, so neither can mark one statement. Tags are our own UUIDs.
 */
export const newCancelTag = (): string => randomUUID();

/** The setting that tags a statement (appended to its SETTINGS clause). */
export const cancelTagSetting = (tag: string): string => `log_comment = '${tag}'`;

/** Cancels the statements carrying `tag`, without waiting for them to stop. */
export const killByTag = (tag: string): string => `KILL QUERY WHERE Settings['log_comment'] = '${tag}' ASYNC`;
