import type { ChdbConnection } from 'chdb/connection';

/** The connection's methods that run a statement on its session. */
const STATEMENTS = new Set<PropertyKey>(['query', 'exec', 'command', 'insert', 'ping']);
/**
 * And the `.chdb` escape hatches that do (chDB's raw insert is how the writers insert). Not `queryStream`: it returns
 * before its statement ends, and nothing calls it on these connections (an export streams on a session of its own).
 */
const RAW_STATEMENTS = new Set<PropertyKey>(['queryAsync', 'rawInsert', 'streamInsert']);

/**
 * A chDB connection whose statements run one at a time, each failed one followed, before any other statement, by one
 * that takes what it left behind.
 *
 * chDB (3.4.0, the latest) keeps the output a statement wrote before it failed (a read cancelled by KILL QUERY, one
 * stopped by a limit or an error after its first block) and hands it out as the start of the next result on the same
 * session: the next read's rows would begin with the failed read's rows, another project's among them (the read gate
 * cancels one project's read for another's). Measured: a `throwIf` at row 5,000 in blocks of 10, and the next
 * `SELECT 1` on that session answered 5,001 rows; on another session, 1; the statement after that one, 1. So every
 * statement waits here for the one before it to end (the session runs one at a time anyway, and a statement already
 * queued in the engine behind a failing one would receive its leftovers), and a failure is followed by a `SELECT 1`
 * whose answer is dropped. Server mode needs none of this: an HTTP answer is its statement's alone.
 */
export function oneStatementAtATime(connection: ChdbConnection): ChdbConnection {
  let tail: Promise<unknown> = Promise.resolve();
  const serial = <T>(statement: () => Promise<T>): Promise<T> => {
    const run = tail.then(async () => {
      try {
        return await statement();
      } catch (e) {
        await connection.chdb.queryAsync('SELECT 1', { format: 'CSV' }).catch(() => undefined);
        throw e;
      }
    });
    tail = run.catch(() => undefined);
    return run;
  };
  /** `target`'s member `name`, bound to it (the connection keeps its session in private fields), serialized if `names` has it. */
  const member = (target: object, name: PropertyKey, names: Set<PropertyKey>): unknown => {
    const value: unknown = Reflect.get(target, name, target);
    if (typeof value !== 'function') return value;
    const bound = (value as (...args: unknown[]) => unknown).bind(target);
    return names.has(name) ? (...args: unknown[]) => serial(async () => bound(...args)) : bound;
  };
  const chdb = new Proxy(connection.chdb, { get: (t, name) => member(t, name, RAW_STATEMENTS) });
  return new Proxy(connection, { get: (t, name) => (name === 'chdb' ? chdb : member(t, name, STATEMENTS)) });
}
