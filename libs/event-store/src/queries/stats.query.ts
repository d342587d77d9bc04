import type { StatsParams, StatsResponse, StatsRow } from '@analytics/schema';
import type { EventStore } from '../event-store';
import { readTablesOf } from '../tables/read-tables';
import { type StatsPlan, planStats } from './stats.planner';

/** Runs a plan; ClickHouse renders UInt64 as JSON strings, the API answers numbers. */
export async function runStatsPlan(store: EventStore, plan: StatsPlan): Promise<StatsRow[]> {
  const rows = await store.read<Record<string, string | number | null>>(plan.projectId, plan.sql, plan.params);
  // The plan selects `bucket`, the group_by columns (allow-listed) and `value`: the schema's row.
  return rows.map((r) => ({ ...r, value: Number(r.value) }) as StatsRow);
}

/** GET /v1/stats over validated params (group_by already parsed into allowed columns by the schema). */
export async function queryStats(store: EventStore, projectId: string, params: StatsParams): Promise<StatsResponse> {
  const plan = planStats(readTablesOf(store), projectId, params, params.group_by ?? []);
  return { metric: params.metric, rows: await runStatsPlan(store, plan) };
}
