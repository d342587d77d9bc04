import { localTableOf } from '../../tables/migrate';
import type { MaintainedStore } from './maintained-store';

export interface ForgetQueueOptions {
  /** One delete per this many ms at most: forgets arriving meanwhile go into the next one. */
  intervalMs?: number;
  /** One flush (existence check) per this many ms at most: a storm of forgets costs a few queries a second. */
  flushEveryMs?: number;
  /** Mutations of the events table the store may have pending; a new one waits for room. */
  maxPendingMutations?: number;
  /** How long a forget waits for that room before it fails (500 forget_failed). */
  maxWaitMs?: number;
  /** User ids in one mutation at most (its text carries them). */
  maxUsersPerMutation?: number;
}

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** The mutations of the events table are backed up: the store takes no more deletions for now. */
export class ForgetBacklogError extends Error {
  constructor(pending: number) {
    super(`${pending} deletions of events are still pending in the store`);
  }
}

/**
 * Forgets, batched: every request waits for the next flush, which deletes every user id queued meanwhile in ONE
 * delete (`DELETE ... WHERE (project_id = p AND user_id IN (...)) OR ...`), or in none when none of them has rows.
 * A flush runs at most every `flushEveryMs`; a delete waits until `intervalMs` after the previous one (forgets
 * arriving meanwhile join the next flush). A storm of forgets thus costs a few existence checks a second and at most
 * one delete per interval. The embedded store deletes with a lightweight update (a patch part, applied by reads at once); a
 * server with a mutation (ALTER TABLE ... DELETE), and the mutations pending there stay bounded. A forget resolves once its deletion is submitted (durable in the store): the answer
 * `{ ok: true, queued: true }` still means the deletion will happen.
 */
export class ForgetQueue {
  private pending = new Map<string, Map<string, Waiter[]>>();
  /** Deleted projects whose every event goes, in the next delete with the users' (DELETE /admin/projects/:id). */
  private projects = new Map<string, Waiter[]>();
  private users = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastDeleteAt = 0;
  private lastFlushAt = 0;
  private readonly flushEveryMs: number;
  private readonly intervalMs: number;
  private readonly maxPending: number;
  private readonly maxWaitMs: number;
  private readonly maxUsers: number;

  constructor(
    private readonly store: MaintainedStore,
    options: ForgetQueueOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 1_000;
    this.flushEveryMs = options.flushEveryMs ?? 250;
    this.maxPending = options.maxPendingMutations ?? 4;
    this.maxWaitMs = options.maxWaitMs ?? 30_000;
    this.maxUsers = options.maxUsersPerMutation ?? 1_000;
  }

  /** Queues the deletion of every event of `userId` in `projectId`; resolves once it is submitted. */
  forget(projectId: string, userId: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let users = this.pending.get(projectId);
      if (!users) this.pending.set(projectId, (users = new Map()));
      const waiters = users.get(userId);
      if (waiters) waiters.push({ resolve, reject });
      else {
        users.set(userId, [{ resolve, reject }]);
        this.users++;
      }
      this.schedule();
    });
  }

  /** Queues the deletion of every event of a deleted project; resolves once it is submitted. */
  forgetProject(projectId: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.projects.set(projectId, [...(this.projects.get(projectId) ?? []), { resolve, reject }]);
      this.schedule();
    });
  }

  /** Resolves when no flush is running or due. */
  async idle(): Promise<void> {
    while (this.running || this.timer) await (this.running ?? new Promise((r) => setTimeout(r, 10)));
  }

  /** A flush once the previous one is done and flushEveryMs after it began: what arrived meanwhile is the next batch. */
  private schedule(): void {
    if (this.running || this.timer || (this.users === 0 && this.projects.size === 0)) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.lastFlushAt = Date.now();
        this.running = this.flush().finally(() => {
          this.running = undefined;
          this.schedule();
        });
      },
      Math.max(0, this.lastFlushAt + this.flushEveryMs - Date.now()),
    );
  }

  /** Up to maxUsers queued user ids, by project, with their waiters. */
  private take(): Map<string, Map<string, Waiter[]>> {
    const batch = new Map<string, Map<string, Waiter[]>>();
    let n = 0;
    for (const [project, users] of this.pending) {
      for (const [user, waiters] of users) {
        if (n === this.maxUsers) return batch;
        let into = batch.get(project);
        if (!into) batch.set(project, (into = new Map()));
        into.set(user, waiters);
        users.delete(user);
        this.users--;
        n++;
      }
      this.pending.delete(project);
    }
    return batch;
  }

  private async flush(): Promise<void> {
    const batch = this.take();
    const projects = this.projects;
    this.projects = new Map();
    const waiters = () => [...[...batch.values()].flatMap((users) => [...users.values()]), ...projects.values()].flat();
    try {
      // Events acknowledged before these requests are committed, so the check sees them.
      const found = await this.usersWithRows(batch);
      if (found.size > 0 || projects.size > 0) await this.submit(found, [...projects.keys()]);
      waiters().forEach((w) => w.resolve());
    } catch (e) {
      waiters().forEach((w) => w.reject(e));
    }
  }

  /** The batch's user ids that have events, by project: a forget of a user without rows submits nothing. */
  private async usersWithRows(batch: Map<string, Map<string, Waiter[]>>): Promise<Map<string, string[]>> {
    const found = new Map<string, string[]>();
    for (const [project, users] of batch) {
      const rows = await this.store.select<{ user_id: string }>(
        `SELECT DISTINCT user_id FROM ${this.store.eventsTable} WHERE project_id = {p:UUID} AND user_id IN {u:Array(String)}`,
        { p: project, u: [...users.keys()] },
      );
      if (rows.length > 0) found.set(project, rows.map((r) => r.user_id));
    }
    return found;
  }

  private async submit(found: Map<string, string[]>, projects: readonly string[]): Promise<void> {
    const wait = this.lastDeleteAt + this.intervalMs - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await this.waitForRoom();
    // Every INSERT started so far is in the aggregates, which the deletion does not rewrite; later ones are untouched.
    const seq = await this.store.settleForDelete();
    this.lastDeleteAt = Date.now();
    const params: Record<string, unknown> = {};
    const conditions = [...found].map(([project, users], i) => {
      params[`p${i}`] = project;
      params[`u${i}`] = users;
      return `(project_id = {p${i}:UUID} AND user_id IN {u${i}:Array(String)})`;
    });
    if (projects.length > 0) {
      params.dp = projects;
      conditions.push('project_id IN {dp:Array(UUID)}');
    }
    const where = conditions.join(' OR ');
    if (seq !== undefined) {
      // The embedded store (migration 007): a lightweight delete patches the partitions holding the users' rows.
      await this.store.client.command({
        query: `DELETE FROM ${this.store.eventsTable} WHERE (${where}) AND insert_seq <= {seq:UInt64}`,
        query_params: { ...params, seq },
        clickhouse_settings: { lightweight_delete_mode: 'lightweight_update' },
      });
      return;
    }
    const table = this.store.cluster ? `${this.store.localEventsTable} ON CLUSTER ${this.store.cluster}` : this.store.localEventsTable;
    await this.store.client.command({ query: `ALTER TABLE ${table} DELETE WHERE ${where}`, query_params: params, clickhouse_settings: { mutations_sync: '0' } });
  }

  /** Waits until the events table has fewer than maxPending unfinished mutations (or gives up after maxWaitMs). */
  private async waitForRoom(): Promise<void> {
    const deadline = Date.now() + this.maxWaitMs;
    for (;;) {
      const [row] = await this.store.select<{ n: string }>(
        'SELECT count() AS n FROM system.mutations WHERE database = {db:String} AND table = {t:String} AND NOT is_done',
        { db: this.store.db, t: localTableOf(this.store, 'events') },
      );
      const pending = Number(row?.n ?? 0);
      if (pending < this.maxPending) return;
      if (Date.now() >= deadline) throw new ForgetBacklogError(pending);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
