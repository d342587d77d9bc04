// Time conversions between the API (epoch ms, ISO 8601) and ClickHouse's text forms.
import { DAY_MS } from '@analytics/schema';

export { DAY_MS, toClickHouseTime } from '@analytics/schema';

/** `YYYY-MM-DD` in UTC: the text form bound to `{name:Date}`. */
export function toClickHouseDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** A DateTime64(3, 'UTC') value as ClickHouse renders it in JSON ('2026-03-01 10:00:00.000') to ISO 8601 with Z. */
export function clickHouseTimeToIso(value: string): string {
  return `${value.replace(' ', 'T')}Z`;
}

export function isUtcMidnight(ms: number): boolean {
  return ms % DAY_MS === 0;
}
