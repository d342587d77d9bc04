/** A timestamp column as ISO 8601 (PostgreSQL and PGlite give Date objects or strings). */
export const isoOf = (value: unknown): string => new Date(value as string).toISOString();
export const isoOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : isoOf(value));
