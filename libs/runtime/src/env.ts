import { z } from 'zod';

type Source = Record<string, string | undefined>;

/** Every problem of a configuration at once; the settings an app cannot start without are named together on one line. */
export class ConfigError extends Error {
  constructor(
    readonly problems: string[],
    readonly app?: string,
  ) {
    const prefix = app ? `${app}: ` : '';
    super(problems.length === 1 && problems[0]!.startsWith(MISSING) ? `${prefix}${problems[0]}` : `${prefix}invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const MISSING = 'missing required setting';
const isUnset = (v: unknown) => v === undefined || v === '';

/** Empty strings in the environment mean "unset". */
export const envString = () => z.preprocess((v) => (v === '' ? undefined : v), z.string().optional());
export const envInt = (dflt: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess((v) => (v === '' || v === undefined ? dflt : v), z.coerce.number().int().min(min).max(max));

/** A setting the app cannot start without: when unset, loadConfig names it with the others missing. */
export const requiredSetting = () => z.preprocess((v) => (v === '' ? undefined : v), z.string());

/**
 * Settings of which any one will do (`CLICKHOUSE_URL or DATA_DIR`), checked even when other settings are wrong so that
 * every problem is reported at once. Last in the chain: an object with a check can no longer be extended.
 */
export function requireOneOf<S extends z.ZodObject>(schema: S, names: readonly string[]): S {
  const missing = names.join(' or ');
  return schema.check(
    z.refine((env: Record<string, unknown>) => names.some((n) => !isUnset(env[n])), { message: MISSING, path: [names[0]!], params: { missing }, when: () => true }),
  ) as S;
}

/** express's `trust proxy` values from TRUST_PROXY: true/false, a hop count, or names/CIDRs (comma-separated). */
export function parseTrustProxy(value: string | undefined): boolean | number | string[] {
  if (value === undefined || value.trim() === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

/**
 * Parses the environment (or a plain object in tests) once, reporting every problem at once. Unset required settings
 * become one line, `missing required settings A or B, C (see docs/configuration.md)`, in the schema's key order.
 */
export function loadConfig<S extends z.ZodType>(schema: S, source: Source = process.env, app?: string): z.output<S> {
  const result = schema.safeParse(source);
  if (result.success) return result.data;
  const order = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  const missing: Array<{ name: string; at: number }> = [];
  const problems: string[] = [];
  for (const issue of result.error.issues) {
    const key = issue.path.length === 1 ? String(issue.path[0]) : undefined;
    const either = issue.code === 'custom' ? (issue.params as { missing?: string } | undefined)?.missing : undefined;
    if (either !== undefined || (issue.code === 'invalid_type' && key !== undefined && isUnset(source[key]))) {
      missing.push({ name: either ?? key!, at: order.indexOf(key ?? '') });
    } else {
      problems.push(`${issue.path.join('.') || '(root)'}: ${issue.message}`);
    }
  }
  if (missing.length > 0) {
    const names = missing.sort((a, b) => a.at - b.at).map((m) => m.name);
    problems.unshift(`${MISSING}${names.length > 1 ? 's' : ''} ${names.join(', ')} (see docs/configuration.md)`);
  }
  throw new ConfigError(problems, app);
}

/** An app's configuration: its name (in start-up errors) and its schema, read with `load(source = process.env)`. */
export interface AppConfig<T> {
  name: string;
  schema: z.ZodType;
  load(source?: Source): T;
}

export function appConfig<S extends z.ZodType>(name: string, schema: S): AppConfig<z.output<S>> {
  return { name, schema, load: (source = process.env) => loadConfig(schema, source, name) };
}
