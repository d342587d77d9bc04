/** The spec's Limits table, in one place. */
export const LIMITS = {
  eventName: 128,
  id: 128,
  userId: 256,
  urlLike: 2048,
  propertiesBytes: 8 * 1024,
  /** Nesting of properties/traits: far beyond any real use, well within what JSON.stringify can recurse. */
  propertiesDepth: 1000,
  batchMax: 1000,
  queryLimit: { max: 1000, default: 100 },
  statsLimit: { max: 1000, default: 100 },
  sourcesLimit: { max: 200, default: 50 },
  keyCacheTtlMs: 5 * 60_000,
  /**
   * Accepted event timestamps, [min, max): every real client clock (offline buffers, backfills), not an unset clock's
   * 1970; every table and bucket holds all of it (Date ends in 2149, DateTime in 2106, a Monday week can start before).
   */
  timestamp: { min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) },
  /**
   * A batch's `sent_at` further than this from its arrival came from a device with a wrong clock (its timestamps are
   * moved); closer, the difference is the network's (upload, queueing) and the timestamps stay exactly as sent.
   */
  clockSkewToleranceMs: 5_000,
} as const;
