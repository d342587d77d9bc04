import { type ExportFormat, type ExportParams, type InsightCondition, QUERY_SELECT_COLUMNS } from '@analytics/schema';
import { toClickHouseTime } from '../primitives/clickhouse-time';
import { Builder, DIMENSION_SQL, namesVisitDimension } from './dimension-sql';
import { EVENT_FILTERS } from './query-events.query';
import type { ReadTables } from '../tables/read-tables';

/** ClickHouse's own output format of each export format. */
export const EXPORT_CLICKHOUSE_FORMAT = { ndjson: 'JSONEachRow', csv: 'CSVWithNames', parquet: 'Parquet' } as const satisfies Record<ExportFormat, string>;
export type ExportClickHouseFormat = (typeof EXPORT_CLICKHOUSE_FORMAT)[ExportFormat];

/**
 * A CSV cell that a spreadsheet would run as a formula starts with `=`, `+`, `-`, `@`, tab or carriage return (OWASP,
 * "CSV Injection"): it gets a `'` in front, as does a cell of `'`s before one of those, so that tools/import.mjs's rule
 * (one `'` off such a cell) gives every value back exactly. NDJSON and Parquet keep the values as they are.
 */
const csvSafe = (expr: string): string => `replaceRegexpOne(${expr}, '^(''*[-=+@\\t\\r])', '''\\\\1')`;

/** What an export runs: one SELECT in one ClickHouse output format, every value bound. */
export interface ExportStatement {
  sql: string;
  params: Record<string, unknown>;
  format: ExportClickHouseFormat;
  /** Output format settings (`name = value, ...`, constants only), added to the export's SETTINGS clause. */
  settings?: string;
}

/** A CSV null is an empty unquoted field (every string, even an empty one, is quoted: `""` stays an empty string). */
const CSV_SETTINGS = "format_csv_null_representation = ''";

/**
 * The SELECT behind GET /v1/export: the /v1/query row's columns (timestamp as the same ISO 8601 string in NDJSON and
 * CSV, Parquet's own timestamp type in Parquet; in CSV every other column formula-safe, a null an empty field), oldest first (timestamp, event_id: the table's sort key after project_id, so the engine
 * reads in order and never sorts the range), no limit. The columns are read qualified (`e.`): the output column
 * `timestamp` is a string and must not be what the WHERE and ORDER BY compare.
 */
export function buildExportEvents(eventsTable: string, projectId: string, params: ExportParams, segment: readonly InsightCondition[] = []): ExportStatement {
  const where = ['e.project_id = {p:UUID}', "e.timestamp >= {from:DateTime64(3, 'UTC')}", "e.timestamp < {to:DateTime64(3, 'UTC')}"];
  const bound: Record<string, unknown> = { p: projectId, from: toClickHouseTime(params.from), to: toClickHouseTime(params.to) };
  if (segment.length > 0) {
    const kept = segmentEventIds(eventsTable, segment);
    where.push(`e.event_id IN (${kept.sql})`);
    Object.assign(bound, kept.params);
  }
  for (const [param, column] of EVENT_FILTERS) {
    const value = params[param];
    if (value === undefined) continue;
    where.push(`e.${column} = {${param}:String}`);
    bound[param] = value;
  }
  const csv = params.format === 'csv';
  // Parquet keeps DateTime64(3, 'UTC') (a TIMESTAMP(MILLIS, UTC) column); the text formats write the /v1/query string.
  const timestamp = params.format === 'parquet' ? 'e.timestamp' : "concat(replaceOne(toString(e.timestamp), ' ', 'T'), 'Z')";
  const columns = QUERY_SELECT_COLUMNS.map((c) => (c === 'timestamp' ? `${timestamp} AS timestamp` : `${csv ? csvSafe(`e.${c}`) : `e.${c}`} AS ${c}`));
  const sql = `SELECT ${columns.join(', ')} FROM ${eventsTable} AS e WHERE ${where.join(' AND ')} ORDER BY e.timestamp ASC, e.event_id ASC`;
  return { sql, params: bound, format: EXPORT_CLICKHOUSE_FORMAT[params.format], ...(csv ? { settings: CSV_SETTINGS } : {}) };
}

const RANGE = "project_id = {p:UUID} AND timestamp >= {from:DateTime64(3, 'UTC')} AND timestamp < {to:DateTime64(3, 'UTC')}";

/**
 * The ids of the range's events a saved segment's conditions hold for, as /v1/insights checks its filters per event
 * (a visit dimension is its visit's value, from all the visit's events in the range: each event is joined to its
 * visit's row). The export keeps those of its events (every value bound; the outer read stays in table order).
 */
function segmentEventIds(eventsTable: string, segment: readonly InsightCondition[]): { sql: string; params: Record<string, unknown> } {
  const b = new Builder();
  const conditions = segment.map((c) => b.condition(c));
  b.columns.add('event_id');
  if (b.visitDims.length === 0) return { sql: `SELECT event_id FROM ${eventsTable} WHERE ${RANGE} AND ${conditions.join(' AND ')}`, params: b.params };
  for (const d of b.visitDims) for (const col of DIMENSION_SQL[d].columns) b.columns.add(col);
  const rows = `SELECT ${[...b.columns].join(', ')}, visit_key AS visit FROM ${eventsTable} WHERE ${RANGE}`;
  const early = conditions.filter((c) => !namesVisitDimension(c));
  const late = conditions.filter(namesVisitDimension);
  const visits = `SELECT visit${b.visitDims.map((d, i) => `, ${DIMENSION_SQL[d].sql} AS vd${i}`).join('')} FROM (${rows}) GROUP BY visit`;
  const events = early.length > 0 ? `${rows} AND ${early.join(' AND ')}` : rows;
  return { sql: `SELECT event_id FROM (${events}) AS ev LEFT JOIN (${visits}) AS v ON ev.visit = v.visit WHERE ${late.join(' AND ')}`, params: b.params };
}

/** Where an export's bytes go: `write` resolves when the consumer wants more (backpressure). */
export interface ExportSink {
  write(chunk: Uint8Array): Promise<void>;
  /** Aborted when the consumer went away: the export stops and its query is cancelled. */
  signal: AbortSignal;
}

/** The port an export runs through (the EventStore is one): the tables, and a statement streamed under the export's turn. */
export interface Exporter {
  readonly tables: ReadTables;
  exportTo(projectId: string, stmt: ExportStatement, sink: ExportSink): Promise<void>;
}

/** Streams every matching event of the project, in the params' format, to `sink` (event-store.ts: exportTo). */
export function exportEvents(exporter: Exporter, projectId: string, params: ExportParams, sink: ExportSink, segment: readonly InsightCondition[] = []): Promise<void> {
  return exporter.exportTo(projectId, buildExportEvents(exporter.tables.events, projectId, params, segment), sink);
}
