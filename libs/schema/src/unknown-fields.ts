import { z } from 'zod';
import { EVENT_COLUMNS } from './event-columns';

/**
 * What a request sent that its schema does not know, as warnings (issue 50): the spec accepts and ignores unknown
 * fields (`userId`, `props`, `?groupby=`), so a typo used to vanish without a word. The answer keeps the spec's
 * behaviour and adds `warnings: ["unknown field userId; did you mean user_id?"]`. docs/api/errors.md, "Warnings".
 */

/** The most warnings one answer carries; the rest are counted in a last line. */
export const MAX_WARNINGS = 20;

export const warningsSchema = z
  .array(z.string())
  .describe('What the request sent that was ignored (unknown fields or parameters, fields the server computes), each with the name it likely meant. Absent when nothing was ignored.');

/** Names people send for ours (other products' spellings); used when the intended name is a field of that object. */
const ALIASES: Readonly<Record<string, string>> = {
  props: 'properties',
  event_name: 'event',
  eventname: 'event',
  name: 'event',
  userid: 'user_id',
  uid: 'user_id',
  distinct_id: 'anonymous_id',
  anon_id: 'anonymous_id',
  visitor_id: 'anonymous_id',
  sessionid: 'session_id',
  ts: 'timestamp',
  time: 'timestamp',
  page: 'path',
  pathname: 'path',
  href: 'url',
  referer: 'referrer',
  start: 'from',
  end: 'to',
  since: 'from',
  until: 'to',
  groupby: 'group_by',
  breakdown_by: 'breakdown',
  dimension: 'dimensions',
  metric: 'metrics',
  filter: 'filters',
};

/** Stored columns the server computes from the request (source, country, device...): sent, they are ignored (the spec). */
const SERVER_COMPUTED = new Set<string>(
  EVENT_COLUMNS.map((c) => c.name as string).filter((n) => !['timestamp', 'event_id', 'anonymous_id', 'user_id', 'session_id', 'referrer', 'url', 'path', 'properties', 'event_name'].includes(n)),
);

const snake = (key: string) => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/[-\s]+/g, '_').toLowerCase();

function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** The known name `key` most likely meant: its snake_case spelling, a common alias, or one within two edits; else undefined. */
export function suggestName(key: string, known: readonly string[]): string | undefined {
  const lower = snake(key);
  if (known.includes(lower)) return lower;
  const alias = ALIASES[lower] ?? ALIASES[lower.replace(/_/g, '')];
  if (alias && known.includes(alias)) return alias;
  if (lower.length < 4) return undefined;
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = distance(lower, name);
    if (d <= 2 && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}

type Def = { type: string; shape?: Record<string, z.ZodType>; catchall?: z.ZodType; innerType?: z.ZodType; in?: z.ZodType; out?: z.ZodType; element?: z.ZodType; options?: z.ZodType[]; left?: z.ZodType; right?: z.ZodType; getter?: () => z.ZodType };
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The object schemas `schema` may be (through optional, nullable, default, pipes, unions, intersections). */
function objectsOf(schema: z.ZodType, depth = 0): Def[] {
  if (depth > 8) return [];
  const def = defOf(schema);
  switch (def.type) {
    case 'object':
      return [def];
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
    case 'nonoptional':
      return objectsOf(def.innerType!, depth + 1);
    case 'pipe':
      // A preprocess is a pipe from a transform: the object is its output side.
      return defOf(def.in!).type === 'transform' ? objectsOf(def.out!, depth + 1) : objectsOf(def.in!, depth + 1);
    case 'union':
      return def.options!.flatMap((o) => objectsOf(o, depth + 1));
    case 'intersection':
      return [...objectsOf(def.left!, depth + 1), ...objectsOf(def.right!, depth + 1)];
    case 'lazy':
      return objectsOf(def.getter!(), depth + 1);
    default:
      return [];
  }
}

function arrayElement(schema: z.ZodType, depth = 0): z.ZodType | undefined {
  if (depth > 8) return undefined;
  const def = defOf(schema);
  if (def.type === 'array') return def.element;
  if (['optional', 'nullable', 'default', 'prefault', 'catch', 'readonly', 'nonoptional'].includes(def.type)) return arrayElement(def.innerType!, depth + 1);
  if (def.type === 'pipe') return arrayElement(defOf(def.in!).type === 'transform' ? def.out! : def.in!, depth + 1);
  return undefined;
}

/** A name as a warning quotes it: at most 64 characters (a body may send a 1 MB key). */
const cutName = (key: string) => (key.length > 64 ? `${key.slice(0, 64)}…` : key);

interface Shape {
  fields: Map<string, z.ZodType>;
  known: string[];
}
// Per schema, worked out once: a batch walks the same event schema a thousand times on the write path.
const shapes = new WeakMap<z.ZodType, Shape | null>();

/** The fields of the object `schema` is, or null for a free-form object (properties, traits), one that keeps unknown keys, or no object. */
function shapeOf(schema: z.ZodType): Shape | null {
  const cached = shapes.get(schema);
  if (cached !== undefined) return cached;
  const objects = objectsOf(schema);
  let shape: Shape | null = null;
  if (objects.length > 0 && !objects.some((o) => o.catchall !== undefined && defOf(o.catchall).type !== 'never')) {
    const fields = new Map<string, z.ZodType>();
    for (const o of objects) for (const [k, s] of Object.entries(o.shape ?? {})) if (!fields.has(k)) fields.set(k, s);
    shape = { fields, known: [...fields.keys()] };
  }
  shapes.set(schema, shape);
  return shape;
}

interface Found {
  /** Where, as the answer names it: `userId`, `events[3].userId`. */
  where: string;
  key: string;
  known: string[];
}

// Per schema: whether a value of it can hold an object with named fields (filters, lists of names and tuples cannot).
const holders = new WeakMap<z.ZodType, boolean>();

/** Whether `schema` is, or is a list (of lists) of, an object schema whose fields are checked. */
function holdsNames(schema: z.ZodType, depth = 0): boolean {
  const cached = holders.get(schema);
  if (cached !== undefined) return cached;
  const element = depth < 8 ? arrayElement(schema) : undefined;
  const holds = shapeOf(schema) !== null || (element !== undefined && holdsNames(element, depth + 1));
  holders.set(schema, holds);
  return holds;
}

function walk(schema: z.ZodType, value: unknown, path: string, out: Found[], budget: { left: number }): void {
  if (budget.left <= 0 || typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    // A list whose entries hold no named fields (1.8 MB of filter tuples) is not walked at all; the rest count each
    // entry against the budget as they count keys.
    const element = arrayElement(schema);
    if (!element || !holdsNames(element)) return;
    for (let i = 0; i < value.length && --budget.left > 0; i++) if (typeof value[i] === 'object' && value[i] !== null) walk(element, value[i], `${path}[${i}]`, out, budget);
    return;
  }
  const shape = shapeOf(schema);
  if (!shape) return;
  const { fields, known } = shape;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const v = (value as Record<string, unknown>)[key];
    budget.left--;
    if (budget.left <= 0) return;
    const field = fields.get(key);
    if (!field) out.push({ where: path ? `${path}.${cutName(key)}` : cutName(key), key, known });
    // Only objects and arrays can hold more names (and only they pay for the path string).
    else if (typeof v === 'object' && v !== null) walk(field, v, path ? `${path}.${key}` : key, out, budget);
  }
}

/**
 * The warnings for what `input` (a body, or a query string's object) holds that `schema` drops: one line per unknown
 * name, with where it was (`events[3].userId`), counted when it repeats across a batch's events, and the name it likely
 * meant. At most MAX_WARNINGS lines. Walks at most 50,000 keys (a body is already within its byte limit).
 */
export function unknownFieldWarnings(schema: z.ZodType, input: unknown, noun: 'field' | 'parameter' | 'argument'): string[] {
  const found: Found[] = [];
  walk(schema, input, '', found, { left: 50_000 });
  // One line per name and place, whatever the index: `events[0].userId` and `events[7].userId` are one mistake.
  const groups = new Map<string, Found[]>();
  for (const f of found) {
    const shape = `${f.where.replace(/\[\d+\]/g, '[]')}`;
    const group = groups.get(shape);
    if (group) group.push(f);
    else groups.set(shape, [f]);
  }
  // Lines are written only for the groups that are shown: a hostile body's 50,000 distinct names cost no suggestions.
  const shown = [...groups.values()].slice(0, groups.size <= MAX_WARNINGS ? MAX_WARNINGS : MAX_WARNINGS - 1);
  const lines = shown.map((fs) => {
    const f = fs[0]!;
    const more = fs.length > 1 ? ` (and in ${fs.length - 1} more)` : '';
    const suggestion = suggestName(f.key, f.known);
    if (suggestion) return `unknown ${noun} ${f.where}${more}; did you mean ${suggestion}?`;
    if (SERVER_COMPUTED.has(snake(f.key))) return `${noun} ${f.where}${more} is computed by the server; ignored`;
    return `unknown ${noun} ${f.where}${more}; ignored (known: ${f.known.join(', ')})`;
  });
  if (groups.size <= MAX_WARNINGS) return lines;
  return [...lines, `${groups.size - MAX_WARNINGS + 1} more ignored names`];
}
