/**
 * Which rows are live traffic. Every INSERT writes one part per month partition it touches, so rows of today's
 * months cost one part per INSERT while a batch spread over many months costs one per month (1000 months: seconds).
 * Live rows share the group-commit lane; the rest go to a lane of their own (EventWriter), and their partitions count
 * against the project's batch bucket (IngestService).
 */
import { LIMITS } from '@analytics/schema';

/** A month as one number: year * 12 + month (0-11). */
const monthIndexOfMs = (ms: number) => {
  const d = new Date(ms);
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
};

/**
 * Month partitions one INSERT may touch: every month of the accepted timestamps (1200), not ClickHouse's default 100,
 * over which the whole group-committed INSERT fails (a 500 for every request in it).
 */
export const MAX_PARTITIONS_PER_INSERT = monthIndexOfMs(LIMITS.timestamp.max - 1) - monthIndexOfMs(LIMITS.timestamp.min) + 1;

/** The month of a row's 'YYYY-MM-DD HH:MM:SS.mmm' timestamp, without parsing the date. */
const monthIndexOfRowTime = (t: string) => Number(t.slice(0, 4)) * 12 + Number(t.slice(5, 7)) - 1;

/** Last month, this month and next (a client clock a little ahead at a month's end): the months live traffic writes. */
const isLiveMonth = (month: number, nowMs: number) => Math.abs(month - monthIndexOfMs(nowMs)) <= 1;

/** Whether every row falls in a live month: the request joins the shared group-commit lane. */
export function isLiveWrite(rows: readonly { timestamp: string }[], nowMs: number): boolean {
  const now = monthIndexOfMs(nowMs);
  for (const row of rows) if (Math.abs(monthIndexOfRowTime(row.timestamp) - now) > 1) return false;
  return true;
}

/** Distinct months outside the live ones among event times (epoch ms; undefined is the arrival time, a live month). */
export function farMonthCount(timestamps: Iterable<number | undefined>, nowMs: number): number {
  const far = new Set<number>();
  for (const t of timestamps) {
    if (t === undefined) continue;
    const month = monthIndexOfMs(t);
    if (!isLiveMonth(month, nowMs)) far.add(month);
  }
  return far.size;
}

/** Whether a month partition id ('YYYYMM') is one live traffic may still write. */
export function isLivePartition(partitionId: string, nowMs: number): boolean {
  return isLiveMonth(Number(partitionId.slice(0, 4)) * 12 + Number(partitionId.slice(4, 6)) - 1, nowMs);
}
