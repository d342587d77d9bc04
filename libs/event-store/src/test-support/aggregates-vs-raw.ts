import type { EventRow } from '@analytics/schema';
import type { EventStore } from '../event-store';
import { testRow } from './test-rows';

const DAY = 86_400_000;
/** Three days before a month boundary: the builder's ranges of `builderRows` span two partitions. */
export const BUILDER_T0 = Date.UTC(2031, 0, 30);

/** `n` events over 5 days from BUILDER_T0: 7 sessions, 13 visitors and some without one, 3 sources, 2 event names. */
export const builderRows = (p: string, n: number, tag: string): EventRow[] =>
  Array.from({ length: n }, (_, i) =>
    testRow(p, {
      at: BUILDER_T0 + (i % 5) * DAY + i * 1000,
      event_id: `${tag}-${i}`,
      session_id: `s-${i % 7}`,
      anonymous_id: i % 11 === 0 ? '' : `v-${i % 13}`,
      source: ['google', 'bing', 'direct'][i % 3],
      medium: ['organic', 'paid', 'direct'][i % 3],
      event_name: i % 4 ? '$pageview' : 'signup',
    }),
  );

/** Each aggregate of `db` next to the same figures computed from its raw events: equal when built exactly once. */
export async function aggregatesAgainstRaw(store: EventStore, db: string, p: string) {
  const q = <T>(sql: string) => store.select<T>(sql, { p });
  const grain = 'day, event_name, source, medium, country, device_type';
  const sketch = "uniqCombinedIf(anonymous_id, anonymous_id != '')";
  const entry = "min(concat(leftPad(toString(toUnixTimestamp64Milli(timestamp)), 15, '0'), leftPad(toString(length(source)), 5, '0'), source, medium))";
  return {
    rollup: await q(`SELECT ${grain}, toUInt64(sum(events)) AS n FROM ${db}.daily_rollup WHERE project_id = {p:UUID} GROUP BY ${grain} ORDER BY ${grain}`),
    rawRollup: await q(`SELECT toDate(timestamp) AS day, event_name, source, medium, country, device_type, count() AS n FROM ${db}.events WHERE project_id = {p:UUID} GROUP BY ${grain} ORDER BY ${grain}`),
    uniques: await q(`SELECT day, event_name, uniqCombinedMerge(uniques) AS u FROM ${db}.daily_uniques WHERE project_id = {p:UUID} GROUP BY day, event_name ORDER BY day, event_name`),
    rawUniques: await q(`SELECT toDate(timestamp) AS day, event_name, ${sketch} AS u FROM ${db}.events WHERE project_id = {p:UUID} GROUP BY day, event_name ORDER BY day, event_name`),
    uniquesBy: await q(`SELECT day, event_name, dim, dim_value, uniqCombinedMerge(uniques) AS u FROM ${db}.daily_uniques_by WHERE project_id = {p:UUID} GROUP BY day, event_name, dim, dim_value ORDER BY day, event_name, dim, dim_value`),
    rawUniquesBy: await q(
      `SELECT * FROM (${[
        `SELECT toDate(timestamp) AS day, '' AS event_name, '' AS dim, '' AS dim_value, ${sketch} AS u FROM ${db}.events WHERE project_id = {p:UUID} GROUP BY day`,
        ...['source', 'medium', 'country', 'device_type'].flatMap((d) => [
          `SELECT toDate(timestamp) AS day, '' AS event_name, '${d}' AS dim, toString(${d}) AS dim_value, ${sketch} AS u FROM ${db}.events WHERE project_id = {p:UUID} GROUP BY day, dim_value`,
          `SELECT toDate(timestamp) AS day, event_name, '${d}' AS dim, toString(${d}) AS dim_value, ${sketch} AS u FROM ${db}.events WHERE project_id = {p:UUID} GROUP BY day, event_name, dim_value`,
        ]),
      ].join(' UNION ALL ')}) ORDER BY day, event_name, dim, dim_value`,
    ),
    sessions: await q(`SELECT session_id, anonymous_id, min(entry) AS e, toUInt64(sum(events)) AS n FROM ${db}.sessions WHERE project_id = {p:UUID} GROUP BY session_key, session_id, anonymous_id ORDER BY session_id, anonymous_id`),
    rawSessions: await q(`SELECT session_id, anonymous_id, ${entry} AS e, count() AS n FROM ${db}.events WHERE project_id = {p:UUID} GROUP BY session_id, anonymous_id ORDER BY session_id, anonymous_id`),
  };
}

export function expectBuiltOnce(a: Awaited<ReturnType<typeof aggregatesAgainstRaw>>, events: number) {
  expect(a.rawRollup.reduce((sum: number, r) => sum + Number((r as { n: string }).n), 0)).toBe(events);
  expect(a.rollup).toEqual(a.rawRollup);
  expect(a.uniques).toEqual(a.rawUniques);
  expect(a.uniquesBy).toEqual(a.rawUniquesBy);
  expect(a.sessions).toEqual(a.rawSessions);
}

