import type { InsightCondition } from '@analytics/schema';
import { toClickHouseTime } from '../primitives/clickhouse-time';
import { HAS_ANON_KEY } from '../tables/event-keys';
import type { ReadTables } from '../tables/read-tables';
import { type Builder, DIMENSION_SQL, namesVisitDimension } from './dimension-sql';

// The rows POST /v1/funnel and POST /v1/retention group per entity, from the raw `events` table (exact: distinct
// entities). The meanings are docs/conversions.md.
//
// Both read the range's events (bots left out unless asked), each joined to its visit's row when a filter, goal or
// breakdown names a visit dimension (as /v1/insights), keep those the filters hold for, and group them per entity.

/**
 * The SQL of each entity kind; an event without one (no such id) is never counted. Visitors are grouped by anon_key
 * (migration 011: the id's 128-bit SipHash, as exact as the id, 16 fixed bytes per event); `daily` says whether the
 * entity is a daily visitor id (the answers' note).
 */
const ENTITY = {
  visitor: { sql: 'anon_key', has: HAS_ANON_KEY, daily: 'anon_daily', columns: ['anon_key', 'anon_daily'] },
  user: { sql: "ifNull(user_id, '')", has: "ifNull(user_id, '') != ''", daily: '0', columns: ['user_id'] },
  session: { sql: 'session_id', has: "session_id != ''", daily: '0', columns: [] },
} as const;

export const DAILY_IDS_NOTE =
  'Most visitor ids here are daily ids (the browser SDK\'s default persistence: \'none\' gives a visitor a new id every UTC day): a person coming back on another day counts as another visitor, so figures across days undercount. Send user_id and use count_by: "user" to follow people across days.';

interface Range {
  from: number;
  to: number;
  include_bots: boolean;
  filters: InsightCondition[];
}

/**
 * The range's events of the project, as rows of `entity` plus `cols` (SQL over an event row, its visit dimensions
 * included), where the filters and `where` hold. The builder's conditions may name visit dimensions: then each event is
 * joined to its visit's row.
 */
export function eventRows(
  b: Builder,
  tables: ReadTables,
  projectId: string,
  r: Range,
  entity: keyof typeof ENTITY,
  cols: (b: Builder) => string[],
  where: (b: Builder) => string[],
  visitsNeeded?: string,
): string {
  Object.assign(b.params, { project: projectId, from: toClickHouseTime(r.from), to: toClickHouseTime(r.to) });
  for (const c of ENTITY[entity].columns) b.columns.add(c);
  const filters = r.filters.map((c) => b.condition(c));
  const selected = cols(b);
  const conditions = [...filters, ...where(b), ENTITY[entity].has];
  for (const d of b.visitDims) for (const col of DIMENSION_SQL[d].columns) b.columns.add(col);
  if (b.visitDims.some((d) => d === 'entry_path' || d === 'exit_path')) b.columns.add('event_id');
  const range = [
    "project_id = {project:UUID} AND timestamp >= {from:DateTime64(3, 'UTC')} AND timestamp < {to:DateTime64(3, 'UTC')}",
    ...(r.include_bots ? [] : ["device_type != 'bot'"]),
  ];
  // No visit dimension: one flat SELECT over `events` (the engine moves the cheap conditions to PREWHERE and reads
  // the other columns only for the rows they keep; no visit hash is computed).
  const head = `SELECT ${ENTITY[entity].sql} AS ent, ${ENTITY[entity].daily} AS dly, ${selected.join(', ')}`;
  if (b.visitDims.length === 0) return [head, `FROM ${tables.events}`, `WHERE ${[...range, ...conditions].join(' AND ')}`].join('\n');
  // Visit dimensions: each visit's values from all its events in the range, joined to the events that the conditions
  // not naming a visit dimension already kept (those are checked before the join, the others after it).
  const visitCols = `SELECT ${[...b.columns].join(', ')}, visit_key AS visit FROM ${tables.events}`;
  const kept = `${visitCols} WHERE ${[...range, ...conditions.filter((c) => !namesVisitDimension(c))].join(' AND ')}`;
  // `visitsNeeded` (an event condition): only the visits with such an event are read for their values (less memory);
  // the other events keep their row (LEFT JOIN) with empty visit values, which nothing then reads.
  const only = visitsNeeded && !namesVisitDimension(visitsNeeded) && !conditions.some(namesVisitDimension) ? ` AND visit IN (SELECT visit FROM (${kept}) WHERE ${visitsNeeded})` : '';
  const visits = `SELECT visit${b.visitDims.map((d, i) => `, ${DIMENSION_SQL[d].sql} AS vd${i}`).join('')} FROM (${visitCols} WHERE ${range.join(' AND ')}${only}) GROUP BY visit`;
  const after = conditions.filter(namesVisitDimension);
  return [head, `FROM (${kept}) AS e`, `LEFT JOIN (${visits}) AS v ON e.visit = v.visit`, ...(after.length > 0 ? [`WHERE ${after.join(' AND ')}`] : [])].join('\n');
}
