import { CHANNELS } from '@analytics/classifier';
import type { DeviceType } from '@analytics/enrichment';
import {
  CHANNEL_VALUES,
  COLUMN_DIMENSIONS,
  DEVICE_TYPE_VALUES,
  INSIGHT_METRICS,
  INSIGHT_TIME_DIMENSIONS,
  type InsightColumnDimension,
  type InsightsBody,
  STATS_GROUP_BY,
  insightsBodySchema,
  statsParamsSchema,
} from '@analytics/schema';
import { readTablesOf } from '../tables/read-tables';
import { DIMENSION_SQL, TIME_SQL } from './dimension-sql';
import { buildExportEvents } from './export-events.query';
import { METRIC_SQL, buildInsights } from './insights.query';
import { STATS_COLUMN_SQL, planStats } from './stats.planner';

// The catalog (libs/schema/src/catalog.ts) and the SQL keyed by it: every entry is used by its builder (no orphan), and
// the finite values are those the write path produces.

const TABLES = readTablesOf({ db: 'analytics', eventsTable: 'analytics.events', buildsAggregates: true });
const P = '11111111-1111-4111-8111-111111111111';
const WHOLE_DAYS = { from: '2026-03-02T00:00:00Z', to: '2026-03-09T00:00:00Z' };
const PARTIAL = { from: '2026-03-02T10:30:00Z', to: '2026-03-05T18:00:00Z' };
const parsed = (body: Partial<InsightsBody>) => insightsBodySchema.parse({ ...WHOLE_DAYS, metrics: ['events'], ...body });
const sqlOf = (body: Partial<InsightsBody>) => buildInsights(TABLES, P, insightsBodySchema.parse({ ...WHOLE_DAYS, ...body })).sql;

// Compile-time: the catalog's values are exactly the classifier's channels and enrichment's device types.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const channelsAgree: Same<(typeof CHANNEL_VALUES)[number], (typeof CHANNELS)[number]> = true;
const deviceTypesAgree: Same<(typeof DEVICE_TYPE_VALUES)[number], DeviceType> = true;

describe('the catalog and its SQL', () => {
  it('names the channels channelOf gives, in order, and the device types enrichment gives', () => {
    expect([...CHANNEL_VALUES]).toEqual([...CHANNELS]);
    expect([channelsAgree, deviceTypesAgree]).toEqual([true, true]);
  });

  it('has the SQL of exactly the catalog\'s dimensions, metrics and group_by columns', () => {
    expect(Object.keys(DIMENSION_SQL)).toEqual(Object.keys(COLUMN_DIMENSIONS));
    expect(Object.keys(TIME_SQL)).toEqual([...INSIGHT_TIME_DIMENSIONS]);
    expect(Object.keys(METRIC_SQL)).toEqual([...INSIGHT_METRICS]);
    expect(Object.keys(STATS_COLUMN_SQL)).toEqual([...STATS_GROUP_BY]);
  });

  it.each(Object.keys(COLUMN_DIMENSIONS) as InsightColumnDimension[])('dimension %s: its SQL is what insights read (a visit dimension over the visits aggregate) and what a segment filters by', (d) => {
    const entry = DIMENSION_SQL[d];
    expect(COLUMN_DIMENSIONS[d].kind === 'visit').toBe(entry.visits !== undefined);
    // insights take every visit from the aggregate, whatever the range (its edges folded into rows of its shape)
    const read = entry.visits?.sql ?? entry.sql;
    expect(sqlOf({ ...PARTIAL, metrics: ['events'], dimensions: [d] })).toContain(read);
    expect(sqlOf({ ...PARTIAL, metrics: ['events'], filters: [['contains', d, ['x']]] })).toContain(read);
    expect(sqlOf({ metrics: ['visits'], dimensions: [d] })).toContain(read);
    // a saved segment's condition on an export checks it per event over the events (entity rows likewise)
    expect(buildExportEvents('analytics.events', P, { from: Date.parse(PARTIAL.from), to: Date.parse(PARTIAL.to), format: 'ndjson' }, parsed({ filters: [['contains', d, ['x']]] }).filters).sql).toContain(entry.sql);
  });

  it.each(INSIGHT_TIME_DIMENSIONS)('time dimension %s: its SQL is the bucket', (d) => {
    expect(sqlOf({ metrics: ['events'], dimensions: [d] })).toContain(`${TIME_SQL[d]} AS d0`);
  });

  it.each(INSIGHT_METRICS)('metric %s: its SQL is what insights compute', (m) => {
    const goal = { event: 'signup' };
    const sql = sqlOf({ ...PARTIAL, metrics: [m], goal });
    expect(sql).toMatch(/ AS m0\b/);
    // The statement differs from every other metric's (each entry computes its own figure, over its own rows).
    const others = INSIGHT_METRICS.filter((o) => o !== m).map((o) => sqlOf({ ...PARTIAL, metrics: [o], goal }));
    expect(others).not.toContain(sql);
  });

  it.each(STATS_GROUP_BY)('group_by %s: its column is what the stats plan groups by', (c) => {
    const params = statsParamsSchema.parse({ ...PARTIAL, group_by: c });
    expect(planStats(TABLES, P, params, params.group_by ?? []).sql).toContain(`GROUP BY ${STATS_COLUMN_SQL[c].sql}`);
  });
});
