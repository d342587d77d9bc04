import { type StatsParams, type StatsResponse, type StatsRow, rangeInZone } from '@analytics/schema';
import type { Reader } from './reader';
import { type StatsPlan, planStats } from './stats.planner';

/** Runs a plan; ClickHouse renders UInt64 as JSON strings, the API answers numbers. */
export async function runStatsPlan(reader: Reader, plan: StatsPlan): Promise<StatsRow[]> {
  const rows = await reader.read<Record<string, string | number | null>>(plan.projectId, plan.sql, plan.params);
  // The plan selects `bucket`, the group_by columns (allow-listed) and `value`: the schema's row.
  return rows.map((r) => ({ ...r, value: Number(r.value) }) as StatsRow);
}

/** GET /v1/stats over validated params (group_by already parsed into allowed columns by the schema). */
export async function queryStats(reader: Reader, projectId: string, sent: StatsParams): Promise<StatsResponse> {
  // `tz` (UTC by default, the spec): dates sent without a time are its local midnights, buckets its wall clock.
  const params = rangeInZone(sent, sent.tz ?? 'UTC');
  const plan = planStats(reader.tables, projectId, params, params.group_by ?? []);
  return { metric: params.metric, rows: await runStatsPlan(reader, plan) };
}
