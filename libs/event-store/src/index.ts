// @analytics/event-store, layer by layer from the bottom (README.md, "Layers").

// primitives
export { BUILD_TAG_PREFIX, killBuildsSql, killByTag, newCancelTag } from './primitives/cancel-tag';
export * from './primitives/lanes';

// tables: definitions and migrations
export * from './tables/aggregate-progress';
export * from './tables/migrate';
export * from './tables/read-tables';
export * from './tables/sources-daily';
export * from './tables/uniques-by';

// client
export * from './client/client';
export * from './client/export-stream';
export { clickHouseCodeOf } from './client/store-error';

// queries
export * from './queries/reader';
export * from './queries/dimension-sql';
export * from './queries/entity-rows';
export * from './queries/query-events.query';
export * from './queries/export-events.query';
export * from './queries/stats.planner';
export * from './queries/stats.query';
export * from './queries/sources.query';
export * from './queries/stored-event-keys.query';
export * from './queries/insights.query';
export * from './queries/properties.query';
export * from './queries/funnel.query';
export * from './queries/retention.query';
export * from './queries/capabilities';
export * from './queries/live.query';
export * from './queries/saved-ids';

// engines: reads
export * from './engines/read/read-gate';
export * from './engines/read/read-limits';

// engines: writes and the aggregate builder
export * from './engines/write/event-writer';
export * from './engines/write/insert-rows';
export * from './engines/write/writer-slots';
export * from './engines/write/aggregate-builder';
export * from './engines/write/store-frontier';
export * from './engines/write/sources-daily-refresh';

// engines: maintenance
export * from './engines/maintenance/maintained-store';
export * from './engines/maintenance/forget-queue';
export * from './engines/maintenance/forget';
export * from './engines/maintenance/retention';

// the facade
export * from './event-store-config';
export * from './event-store';
