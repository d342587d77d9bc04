// The Sources list by site (issue 47 item 5): the stored sources of one site (its rule-13 slug, its utm_source
// spellings, its list name) are one row named as people know it, from the classifier's data (source-names.json).
import { sourceKeyOf, sourceLabelOf } from '@analytics/classifier/source-names';

export { sourceLabelOf };

/** One row of the list: the site (canonical source), its display name, the stored values it merges, a count. */
export interface SourceRow {
  key: string;
  label: string;
  values: string[];
  value: number;
}

/**
 * The answer's rows (one per stored source, largest first) grouped by site, each group's counts summed; largest sum
 * first, then by key. A sum is exact for visits (a visit has one source); for visitors it is an upper bound (one
 * visitor may come by two spellings), so the dashboard asks the API again for the merged rows it shows.
 */
export function groupSources(rows: ReadonlyArray<{ source: string | null; value: number }>): SourceRow[] {
  const groups = new Map<string, SourceRow>();
  for (const r of rows) {
    if (r.source === null) continue;
    const key = sourceKeyOf(r.source) || r.source;
    const group = groups.get(key);
    if (group) {
      group.values.push(r.source);
      group.value += r.value;
    } else groups.set(key, { key, label: sourceLabelOf(r.source) || '(empty)', values: [r.source], value: r.value });
  }
  return [...groups.values()].sort(byValue);
}

export const byValue = (a: SourceRow, b: SourceRow) => b.value - a.value || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
