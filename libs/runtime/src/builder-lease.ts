import type { Client } from 'pg';
import type { Logger } from '@analytics/service-kit';
import type { Env } from './config';
import type { Stores } from './stores';

/** The aggregate builder's lease of one event-store database: pg_try_advisory_lock(hashtext(this)). */
export const builderLockName = (database: string) => `analytics:aggregate-builder:${database}`;

export interface LeaseOptions {
  databaseUrl: string;
  /** The lock: pg_try_advisory_lock(hashtext(lockName)). */
  lockName: string;
  /** Who holds it, in log lines and errors ("aggregate builder", "scheduler"). */
  label: string;
  /** What the holder does, in its log line when it takes the lease (`lease taken, building`); default `active`. */
  doing?: string;
  /**
   * `schema`: one lease per schema of the connection (the lock named `<lockName>:<current_schema()>`), so deployments
   * sharing a PostgreSQL database in schemas of their own (`search_path` in DATABASE_URL) each have theirs; advisory
   * locks are per database. Default `database`: the name alone.
   */
  scope?: 'database' | 'schema';
  logger: Logger;
  /** How often a standby tries to take the lease, and a holder checks it still has it (ms). */
  intervalMs?: number;
  /** A check of the lease's session that takes longer than this counts as lost (ms). */
  confirmTimeoutMs?: number;
}

export interface LeaseHooks {
  acquired: (confirm: () => Promise<void>) => Promise<void>;
  lost: () => Promise<void>;
}

/**
 * One active process of a deployment by lease: a PostgreSQL session-level advisory lock, held on a connection of its
 * own. PostgreSQL releases it when that session ends: the holder died, or its connection did (TCP keepalive). A standby
 * tries every intervalMs; the holder checks its session as often, and `confirm` checks it on demand. Used by the
 * aggregate builder (BuilderLease) and the scheduler (scheduler.ts).
 */
export class AdvisoryLease {
  private client: Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private busy = false;
  private readonly intervalMs: number;
  private readonly confirmTimeoutMs: number;

  constructor(
    private readonly options: LeaseOptions,
    private readonly hooks: LeaseHooks,
  ) {
    this.intervalMs = options.intervalMs ?? 2000;
    this.confirmTimeoutMs = options.confirmTimeoutMs ?? 5000;
  }

  get held(): boolean {
    return this.client !== undefined;
  }

  /** Tries now, then every intervalMs: a standby takes the lease when it is free; a holder checks it still has it. */
  start(): void {
    void this.step();
    this.timer = setInterval(() => void this.step(), this.intervalMs);
    this.timer.unref();
  }

  /** Throws unless this process holds the lease now (its session answers within confirmTimeoutMs). */
  readonly confirm = async (): Promise<void> => {
    const client = this.client;
    if (!client) throw new Error(`${this.options.label}: the lease is not held`);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client.query('SELECT 1'),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${this.options.label}: the lease session did not answer`)), this.confirmTimeoutMs))),
      ]);
    } catch (e) {
      // Not awaited: the holder calls confirm() from inside its own chain, which lost() waits for.
      void this.drop('lease session failed', e);
      throw e;
    } finally {
      clearTimeout(timer);
    }
  };

  /** Stops trying, releases the lease (the hooks' lost() runs first when it was held). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    while (this.busy) await new Promise((r) => setTimeout(r, 20));
    if (this.client) await this.drop('stopping', undefined);
  }

  private async step(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      if (this.client) await this.confirm().catch(() => undefined);
      else await this.tryAcquire();
    } finally {
      this.busy = false;
    }
  }

  private async tryAcquire(): Promise<void> {
    // Loaded here: a deployment on the embedded stores never loads pg.
    const { Client } = await import('pg');
    const client = new Client({ connectionString: this.options.databaseUrl, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    client.on('error', (e) => void this.drop('lease session error', e));
    try {
      await client.connect();
      const { rows } = await client.query<{ ok: boolean }>(
        "SELECT pg_try_advisory_lock(hashtext($1 || CASE WHEN $2 THEN ':' || coalesce(current_schema(), '') ELSE '' END)) AS ok",
        [this.options.lockName, this.options.scope === 'schema'],
      );
      if (!rows[0]?.ok) {
        await client.end().catch(() => undefined);
        return;
      }
    } catch (e) {
      this.options.logger.warn({ err: (e as Error).message }, `${this.options.label}: could not reach PostgreSQL for the lease`);
      await client.end().catch(() => undefined);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.options.logger.info(`${this.options.label}: lease taken, ${this.options.doing ?? 'active'}`);
    try {
      await this.hooks.acquired(this.confirm);
    } catch (e) {
      await this.drop('starting failed', e);
    }
  }

  private async drop(why: string, e: unknown): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.client = undefined;
    this.options.logger.warn({ err: e instanceof Error ? e.message : undefined }, `${this.options.label}: lease given up (${why})`);
    await this.hooks.lost().catch(() => undefined);
    // Ending the session releases the lock.
    await client.end().catch(() => undefined);
  }
}

export interface BuilderLeaseOptions extends Omit<LeaseOptions, 'lockName' | 'label' | 'doing'> {
  /** The event store's database (CLICKHOUSE_DATABASE): one lease per database. */
  database: string;
}

/**
 * The aggregate builder's lease on a ClickHouse server (libs/event-store/README.md, "One builder, every mode"). The
 * holder confirms the session before every statement that writes (`confirm`), so it stops within one statement of
 * losing it; the next holder first cancels any build statement still running in the store
 * (EventStore.startBuilding), then rechecks the range in flight.
 */
export class BuilderLease extends AdvisoryLease {
  constructor(options: BuilderLeaseOptions, hooks: LeaseHooks) {
    super({ ...options, lockName: builderLockName(options.database), label: 'aggregate builder', doing: 'building' }, hooks);
  }
}

/** At a shutdown, how long the builder may go on building what has finished before it releases the lease (ms). */
const SHUTDOWN_CATCH_UP_MS = 5_000;

/** What runs the aggregate builder in this process: stop() before the stores close. */
export interface AggregateBuilding {
  stop(): Promise<void>;
}

/**
 * Runs the aggregate builder of a ClickHouse server in this process whenever it holds the lease (apps/aggregate-builder,
 * and a standalone service on a server). With no PostgreSQL (DATABASE_URL unset: a single process on PGlite) there is
 * nobody to share with, and it builds from the start. The embedded store's builder runs inside the store already.
 * Whether this process builds now is the store's (EventStore.buildingAggregates: analytics_aggregate_builder_active).
 */
export function startAggregateBuilding(stores: Stores, env: Env, logger: Logger): AggregateBuilding {
  const events = stores.events;
  if (events.embedded) return { stop: async () => undefined };
  if (!env.DATABASE_URL) {
    void events.startBuilding().catch((e: unknown) => logger.error({ err: e }, 'aggregate builder failed to start'));
    return { stop: () => events.stopBuilding(SHUTDOWN_CATCH_UP_MS) };
  }
  const lease = new BuilderLease(
    { databaseUrl: env.DATABASE_URL, database: env.CLICKHOUSE_DATABASE, logger },
    { acquired: (confirm) => events.startBuilding({ confirm }), lost: () => events.stopBuilding() },
  );
  lease.start();
  return {
    // At a shutdown the holder builds what has finished (within a bound), then releases the lease.
    async stop() {
      await events.stopBuilding(SHUTDOWN_CATCH_UP_MS);
      await lease.stop();
    },
  };
}
