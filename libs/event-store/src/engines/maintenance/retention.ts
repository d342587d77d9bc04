import { DAY_MS, toClickHouseTime } from '../../primitives/clickhouse-time';
import { isLivePartition } from '../../primitives/lanes';
import { localTableOf } from '../../tables/migrate';
import type { MaintainedStore } from './maintained-store';

export interface RetentionPolicy {
  id: string;
  retention_days: number;
}

export interface RetentionResult {
  projects: number;
  /** Projects that had rows past their retention, each submitted as one delete mutation. */
  mutations: number;
  /** Whole month partitions dropped because every row in them was past every project's retention. */
  dropped_partitions: string[];
}

/** End (exclusive) of the month of a `YYYYMM` partition id, in epoch ms. */
function partitionEnd(id: string): number {
  return Date.UTC(Number(id.slice(0, 4)), Number(id.slice(4, 6)), 1);
}

/**
 * Deletes each project's events older than its retention_days. Whole month partitions whose every possible row
 * is older than the LONGEST retention of all projects are dropped outright (cheap, instant); the rest is one
 * asynchronous delete mutation per project that still has expired rows (checked first on the sort key, so
 * repeated runs submit nothing). Idempotent, and safe to run twice at once: deletes of deleted rows are no-ops.
 * Every acknowledged event is in the aggregates first (they are not rewritten by the deletion): a mutation names
 * the insert_seq the store settled at, and a partition is dropped with the far lane held, the only lane that writes
 * a month that is not live (a live month is left to the mutations).
 */
export async function runRetention(store: MaintainedStore, projects: readonly RetentionPolicy[], nowMs = Date.now()): Promise<RetentionResult> {
  const result: RetentionResult = { projects: projects.length, mutations: 0, dropped_partitions: [] };
  const local = store.localEventsTable;
  const onCluster = store.cluster ? ` ON CLUSTER ${store.cluster}` : '';

  if (projects.length > 0) {
    const longest = Math.max(...projects.map((p) => p.retention_days));
    const globalCutoff = nowMs - longest * DAY_MS;
    // In a cluster every shard's parts count: a month may only exist on shards other than the one answering.
    const partsTable = store.cluster ? `clusterAllReplicas(${store.cluster}, system.parts)` : 'system.parts';
    const parts = await store.select<{ partition_id: string }>(
      `SELECT DISTINCT partition_id FROM ${partsTable} WHERE database = {db:String} AND table = {t:String} AND active`,
      { db: store.db, t: localTableOf(store, 'events') },
    );
    for (const { partition_id } of parts) {
      // Ids come from ClickHouse itself; the pattern check keeps the inlined literal safe all the same.
      if (/^\d{6}$/.test(partition_id) && partitionEnd(partition_id) <= globalCutoff && !isLivePartition(partition_id, Date.now())) {
        await store.writer.exclusiveFar(async () => {
          await store.settleForDelete();
          await store.command(`ALTER TABLE ${local}${onCluster} DROP PARTITION ID '${partition_id}'`);
        });
        result.dropped_partitions.push(partition_id);
      }
    }
  }

  for (const p of projects) {
    const cutoff = toClickHouseTime(nowMs - p.retention_days * DAY_MS);
    const params = { p: p.id, cutoff };
    const [row] = await store.select<{ n: string }>(
      `SELECT count() AS n FROM ${store.eventsTable} WHERE project_id = {p:UUID} AND timestamp < {cutoff:DateTime64(3, 'UTC')}`,
      params,
    );
    if (Number(row?.n ?? 0) === 0) continue;
    const seq = await store.settleForDelete();
    const bound = seq === undefined ? '' : ' AND insert_seq <= {seq:UInt64}';
    await store.command(`ALTER TABLE ${local}${onCluster} DELETE WHERE project_id = {p:UUID} AND timestamp < {cutoff:DateTime64(3, 'UTC')}${bound}`, { ...params, seq });
    result.mutations++;
  }
  return result;
}
