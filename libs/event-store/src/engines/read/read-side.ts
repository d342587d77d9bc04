import { AGGREGATES } from '../../tables/aggregates';
import { cancelTagSetting, killByTag, newCancelTag } from '../../primitives/cancel-tag';
import { ReadGate } from './read-gate';
import { clickHouseCodeOf } from '../../client/store-error';
import { ExportIdleError, type ReadLimits, exportDeadlineError, exportLimitError, exportSettingsClause, readLimitError, readSettingsClause } from './read-limits';

const QUERY_WAS_CANCELLED = 394;
/** A preempted read's KILL is sent again this often (ms) until the read ends. */
const KILL_RETRY_MS = 25;
/**
 * While another export waits for a turn, a running export whose client took nothing for this long (ms) gives its turn
 * up: a steady client's socket takes bytes every few hundred ms, one that reads nothing would hold the turn for the
 * whole EXPORT_IDLE_TIMEOUT_S, longer than the waiting export's queue wait.
 */
export const CONTENDED_IDLE_MS = 5_000;
/** How often (ms) a write waiting on an export's client checks its idle bounds. */
const IDLE_CHECK_MS = 250;

/** A running export's turn (ReadSide.export). */
export interface ExportTurn {
  /** The SETTINGS clause its statement ends with: the read limits with the export's own, and its cancel tag. */
  settings: string;
  /** Aborted when the export must stop (its client went away or idled, its deadline passed); its statement is killed. */
  signal: AbortSignal;
  /** Resolves once the client took a write (`write` resolved); rejects when the export must stop first. */
  consumed(write: Promise<void>): Promise<void>;
}

/**
 * A read naming one of these tables reads what the aggregate builder builds (every aggregate, and sources_daily which
 * it refreshes); a read of `events` alone does not.
 */
const BUILT_TABLES = new RegExp(`\\.(${[...AGGREGATES.map((a) => a.table), 'sources_daily', 'sources_daily_days', 'sources_weekly', 'sources_weekly_weeks'].join('|')})\\b`);

export interface ReadSideDeps {
  /** Runs one statement and returns its JSON rows. */
  select<T>(query: string, params: Record<string, unknown>): Promise<T[]>;
  /** Runs a statement beside the reads (KILL QUERY of a preempted read). */
  control(sql: string): Promise<void>;
  /** Before every read of the aggregates: what was acknowledged before it is in the aggregates it reads. */
  caughtUp(): Promise<void>;
}

/**
 * The read side of the event store: reads of one project each, admitted fairly between projects by the engine time
 * each used recently (ReadGate), bounded in the engine by the read limits (a read that hits them is 400
 * query_too_expensive), and a far heavier project's read preempted for a lighter project's.
 */
export class ReadSide {
  private readonly gate: ReadGate;
  /** Exports: their own turns, so a long export never holds one of the reads' (see `export`). */
  private readonly exportGate: ReadGate;
  /** Exports stopped to give their turn to a waiting one, not yet ended: one at a time, so one waiter costs one turn. */
  private yielding = 0;
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
        // Any read may be cancelled for a far lighter project's (chDB runs them one at a time): it then queues again,
        // until its wait is over; after that it runs to the end (how a heavy project still makes progress).
        const tag = Date.now() < deadline ? newCancelTag() : undefined;
        // The KILL is sent again until the read ends: one sent before the engine has registered the statement (its
        // turn has begun, the statement is still on its way; under load, tens of ms) finds nothing, and the light
        // read would wait for the whole heavy read.
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
   * An export of one project (GET /v1/export): `run` streams it with the turn's SETTINGS clause and signal, passing
   * each write to its client through `turn.consumed`. It holds a turn of the export gate for its whole run:
   * `exportConcurrency` in the process, one per project (a second export of the project waits up to the queue wait,
   * then 429 rate_limited). Not a turn of the reads' gate: an export runs for minutes on a connection of its own
   * (embedded: a chDB session of its own), and holding one of the reads' turns that long (on the embedded engine, the
   * only one) would hold up every other project's dashboard behind it.
   *
   * The turn ends, its statement killed by its cancel tag, when the client went away (`gone`), when the export's wall
   * time reaches EXPORT_MAX_EXECUTION_S (waits on the client included: the engine's own max_execution_time does not
   * count a stream nobody pulls) with 400 query_too_expensive, or when the client took nothing for
   * EXPORT_IDLE_TIMEOUT_S (CONTENDED_IDLE_MS while another export waits behind it) with ExportIdleError.
   */
  async export<T>(projectId: string, gone: AbortSignal, run: (turn: ExportTurn) => Promise<T>): Promise<T> {
    return this.exportGate.run(projectId, async () => {
      const tag = newCancelTag();
      const stop = new AbortController();
      stop.signal.addEventListener('abort', () => void this.deps.control(killByTag(tag)).catch(() => undefined), { once: true });
      const onGone = () => stop.abort(gone.reason);
      gone.addEventListener('abort', onGone, { once: true });
      if (gone.aborted) onGone();
      const deadline = setTimeout(() => stop.abort(exportDeadlineError(this.limits)), this.limits.exportMaxExecutionS * 1000);
      const state = { stop, yielded: false };
      const turn: ExportTurn = {
        settings: `${exportSettingsClause(this.limits)}, ${cancelTagSetting(tag)}`,
        signal: stop.signal,
        consumed: (write) => this.consumed(projectId, state, write),
      };
      try {
        return await run(turn);
      } catch (e) {
        if (stop.signal.aborted) throw stop.signal.reason;
        throw exportLimitError(e, this.limits) ?? e;
      } finally {
        clearTimeout(deadline);
        gone.removeEventListener('abort', onGone);
        if (state.yielded) this.yielding--;
      }
    });
  }

  /** Waits for an export's client to take `write`; past its idle bound, stops the export (ExportIdleError). */
  private consumed(projectId: string, state: { stop: AbortController; yielded: boolean }, write: Promise<void>): Promise<void> {
    const { stop } = state;
    if (stop.signal.aborted) return Promise.reject(stop.signal.reason);
    const idleMs = this.limits.exportIdleTimeoutS * 1000;
    const since = Date.now();
    return new Promise<void>((resolve, reject) => {
      const check = setInterval(() => {
        const idle = Date.now() - since;
        if (idle >= idleMs) return stop.abort(new ExportIdleError(idle));
        if (idle >= CONTENDED_IDLE_MS && this.yielding === 0 && this.exportGate.wanted(projectId)) {
          state.yielded = true;
          this.yielding++;
          stop.abort(new ExportIdleError(idle));
        }
      }, IDLE_CHECK_MS);
      const settle = (then: () => void) => () => {
        clearInterval(check);
        stop.signal.removeEventListener('abort', onStop);
        then();
      };
      const onStop = settle(() => reject(stop.signal.reason));
      stop.signal.addEventListener('abort', onStop, { once: true });
      write.then(settle(resolve), (e: unknown) => settle(() => reject(e))());
    });
  }
}
