/** Fully qualified tables the read path queries; one place to point at Distributed tables in cluster mode. */
export interface ReadTables {
  events: string;
  dailyRollup: string;
  dailyUniques: string;
  sessions: string;
  /** Insights' per-visit aggregate (migration 010, every mode). */
  visits: string;
  /** The visits that may have rows on more than one day (migration 014, every mode). */
  visitSpans: string;
  /** Insights' event dimensions one at a time (migration 016, every mode). */
  dailyDims: string;
  /** Insights' time buckets in any zone: per UTC day and quarter hour (migration 017, every mode). */
  quarterHours: string;
  /** Embedded store only (migration 006); undefined on a server, whose planner never uses it. */
  dailyUniquesBy?: string;
  /** Embedded store only (migration 005); undefined on a server, which answers /v1/sources from sessions. */
  sourcesDaily?: string;
  sourcesDailyDays?: string;
  /** Embedded store only (migration 013): sources_daily merged per ISO week, and the seq each week reflects. */
  sourcesWeekly?: string;
  sourcesWeeklyWeeks?: string;
  /** Migration 018, where the builder's tables exist: per day and visit dimension the visits read whole, and the seq each day reflects. */
  visitDims?: string;
  visitDimsDays?: string;
}

/** What names the read tables: the database, its events table, and whether the builder's tables exist (EventStore has them). */
export interface TablesOwner {
  readonly db: string;
  readonly eventsTable: string;
  readonly buildsAggregates: boolean;
}

export function readTablesOf(store: TablesOwner): ReadTables {
  return { events: store.eventsTable, dailyRollup: `${store.db}.daily_rollup`, dailyUniques: `${store.db}.daily_uniques`, sessions: `${store.db}.sessions`, visits: `${store.db}.visits`, visitSpans: `${store.db}.visit_spans`, dailyDims: `${store.db}.daily_dims`, quarterHours: `${store.db}.quarter_hours`,
    ...(store.buildsAggregates
      ? { dailyUniquesBy: `${store.db}.daily_uniques_by`, sourcesDaily: `${store.db}.sources_daily`, sourcesDailyDays: `${store.db}.sources_daily_days`,
        sourcesWeekly: `${store.db}.sources_weekly`, sourcesWeeklyWeeks: `${store.db}.sources_weekly_weeks`,
        visitDims: `${store.db}.visit_dims`, visitDimsDays: `${store.db}.visit_dims_days` }
      : {}),
  };
}
