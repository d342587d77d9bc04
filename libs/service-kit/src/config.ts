import { z } from 'zod';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment (or a plain object in tests) once, reporting every problem at once. */
export function loadConfig<S extends z.ZodTypeAny>(schema: S, source: Record<string, string | undefined> = process.env): z.output<S> {
  const result = schema.safeParse(source);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`));
  }
  return result.data;
}

/** Empty strings in the environment mean "unset". */
export const envString = () => z.preprocess((v) => (v === '' ? undefined : v), z.string().optional());
export const envInt = (dflt: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess((v) => (v === '' || v === undefined ? dflt : v), z.coerce.number().int().min(min).max(max));

/** express's `trust proxy` values from TRUST_PROXY: true/false, a hop count, or names/CIDRs (comma-separated). */
export function parseTrustProxy(value: string | undefined): boolean | number | string[] {
  if (value === undefined || value.trim() === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}
