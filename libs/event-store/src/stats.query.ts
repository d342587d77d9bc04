import type { StatsParams } from '@analytics/schema';
import type { EventStore } from './event-store';
import { readTablesOf } from './read-tables';
import { type StatsPlan, type StatsSource, planStats } from './stats.planner';

/** A row of GET /v1/stats: `bucket` (with an interval), one field per group_by column, and `value`. */
export type StatsRow = Record<string, string | number | null> & { value: number };

export interface StatsAnswer {
  metric: StatsParams['metric'];
  rows: StatsRow[];
}

/** Runs a plan; ClickHouse renders UInt64 as JSON strings, the API answers numbers. */
export async function runStatsPlan(store: EventStore, plan: StatsPlan): Promise<StatsRow[]> {
  const rows = await store.select<Record<string, string | number | null>>(plan.sql, plan.params);
  return rows.map((r) => ({ ...r, value: Number(r.value) }));
}

/** GET /v1/stats over validated params (group_by already parsed into allowed columns by the schema). */
export async function queryStats(store: EventStore, projectId: string, params: StatsParams, force?: StatsSource): Promise<StatsAnswer> {
  const plan = planStats(readTablesOf(store), projectId, params, params.group_by ?? [], force);
  return { metric: params.metric, rows: await runStatsPlan(store, plan) };
}
