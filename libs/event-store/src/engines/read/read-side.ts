import { AGGREGATES } from '../../tables/aggregates';
import { cancelTagSetting, killByTag, newCancelTag } from '../../primitives/cancel-tag';
import { ReadGate } from './read-gate';
import { clickHouseCodeOf } from '../../client/store-error';
import { type ReadLimits, exportLimitError, exportSettingsClause, readLimitError, readSettingsClause } from './read-limits';

const QUERY_WAS_CANCELLED = 394;
/** A preempted read's KILL is sent again this often (ms) until the read ends. */
const KILL_RETRY_MS = 25;

/**
 * A read naming one of these tables reads what the aggregate builder builds (every aggregate, and sources_daily which
 * it refreshes); a read of `events` alone does not.
 */
const BUILT_TABLES = new RegExp(`\\.(${[...AGGREGATES.map((a) => a.table), 'sources_daily', 'sources_daily_days'].join('|')})\\b`);

export interface ReadSideDeps {
  /** Runs one statement and returns its JSON rows. */
  select<T>(query: string, params: Record<string, unknown>): Promise<T[]>;
  /** Runs a statement beside the reads (KILL QUERY of a preempted read). */
  control(sql: string): Promise<void>;
  /** Before every read of the aggregates: what was acknowledged before it is in the aggregates it reads. */
  caughtUp(): Promise<void>;
}

/**
 * The read side of the event store: reads of one project each, admitted fairly between projects (ReadGate), bounded
 * in the engine by the read limits (a read that hits them is 400 query_too_expensive), and a bursting project's read
 * preempted for a quiet project's.
 */
export class ReadSide {
  private readonly gate: ReadGate;
  /** Exports: their own turns, so a long export never holds one of the reads' (see `export`). */
  private readonly exportGate: ReadGate;
  /** Appended to every read's SQL: chDB applies clickhouse_settings to the whole session, not to one statement. */
  private readonly settings: string;

  constructor(
    readonly limits: ReadLimits,
    private readonly deps: ReadSideDeps,
  ) {
    this.gate = new ReadGate(limits);
    this.exportGate = new ReadGate({ concurrency: limits.exportConcurrency, perProject: 1, queuePerProject: 1, queueWaitMs: limits.queueWaitMs });
    this.settings = readSettingsClause(limits);
  }

  /** Reads waiting for their turn at the gate. */
  get queued(): number {
    return this.gate.queued;
  }

  async read<T>(projectId: string, query: string, params: Record<string, unknown>): Promise<T[]> {
    const deadline = Date.now() + this.limits.queueWaitMs;
    // Only reads of the aggregates wait for the builder (a failing build is the builder's to report; the read goes on).
    if (BUILT_TABLES.test(query)) await this.deps.caughtUp().catch(() => undefined);
    for (;;) {
      const outcome = await this.gate.run(projectId, async (turn): Promise<{ rows: T[] } | { preempted: true }> => {
        // A bursting project's read may be cancelled for a quiet project's (chDB runs them one at a time): it then
        // queues again, until its wait is over; after that it runs to the end.
        const tag = turn.bursting && Date.now() < deadline ? newCancelTag() : undefined;
        // The KILL is sent again until the read ends: one sent before the engine has registered the statement (its
        // turn has begun, the statement is still on its way; under load, tens of ms) finds nothing, and the quiet
        // read would wait for the whole bursting read.
        let retry: NodeJS.Timeout | undefined;
        if (tag) {
          turn.preempt = () => {
            if (retry) return;
            const kill = () => void this.deps.control(killByTag(tag)).catch(() => undefined);
            kill();
            retry = setInterval(kill, KILL_RETRY_MS);
          };
        }
        try {
          return { rows: await this.deps.select<T>(`${query} ${this.settings}${tag ? `, ${cancelTagSetting(tag)}` : ''}`, params) };
        } catch (e) {
          if (turn.preempted && clickHouseCodeOf(e) === QUERY_WAS_CANCELLED) return { preempted: true };
          throw readLimitError(e, this.limits) ?? e;
        } finally {
          clearInterval(retry);
        }
      });
      if ('rows' in outcome) return outcome.rows;
    }
  }

  /**
   * An export of one project (GET /v1/export): `run` streams it with the SETTINGS clause it is given (the read limits
   * with EXPORT_MAX_EXECUTION_S, and a cancel tag) and calls `cancel` when its consumer goes away. It holds a turn of
   * the export gate for its whole run: `exportConcurrency` in the process, one per project (a second export of the
   * project waits up to the queue wait, then 429 rate_limited). Not a turn of the reads' gate: an export runs for
   * minutes on a connection of its own (embedded: a chDB session of its own), and holding one of the reads' turns
   * that long (on the embedded engine, the only one) would hold up every other project's dashboard behind it.
   */
  async export<T>(projectId: string, run: (settings: string, cancel: () => void) => Promise<T>): Promise<T> {
    return this.exportGate.run(projectId, async () => {
      const tag = newCancelTag();
      const cancel = () => void this.deps.control(killByTag(tag)).catch(() => undefined);
      try {
        return await run(`${exportSettingsClause(this.limits)}, ${cancelTagSetting(tag)}`, cancel);
      } catch (e) {
        throw exportLimitError(e, this.limits) ?? e;
      }
    });
  }
}
