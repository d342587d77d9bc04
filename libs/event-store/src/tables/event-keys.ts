// The visitor columns of migration 011, computed by ClickHouse at INSERT: what conversions and exact visitor counts
// group and count by instead of the anonymous id's string (docs/conversions.md; BENCHMARKS.md, "Conversions").

/**
 * anon_key: the anonymous id's 128-bit SipHash, the hash uniqExact itself keeps of a String, so a distinct count or a
 * GROUP BY over anon_key is exactly as exact as over anonymous_id while reading 16 fixed bytes per event.
 */
export const anonKeyOf = (id: string) => `reinterpretAsUInt128(sipHash128(${id}))`;
export const ANON_KEY_SQL = anonKeyOf('anonymous_id');

/** anon_daily: 1 for a daily anonymous id ('d_' + 32 hex: the browser SDK's default persistence), else 0. */
export const ANON_DAILY_SQL = "toUInt8(startsWith(anonymous_id, 'd_'))";

/** The anon_key of an event without an anonymous id: the hash of '' (a constant the engine folds). */
export const EMPTY_ANON_KEY = anonKeyOf("''");

/** Holds for an event with an anonymous id. */
export const HAS_ANON_KEY = `anon_key != ${EMPTY_ANON_KEY}`;

/** visit_key: the key of the event's visit; the `visits` and `sessions` aggregates key their rows by it (session_key). */
export const VISIT_KEY_SQL = 'cityHash64(session_id, anonymous_id)';
