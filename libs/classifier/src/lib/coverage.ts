/**
 * How much of our own reference list of search engines and social networks (../data/coverage-reference.json,
 * assembled for this project) the classifier recognises: a referrer from each host, on an unrelated site, must come
 * out `organic` (search) or `social`. Used by coverage.spec.ts and printed by `npm run classifier:hosts`.
 */
import reference from '../data/coverage-reference.json';
import { classify } from './classify';

export interface ReferenceEntry {
  readonly name: string;
  readonly hosts: readonly string[];
}

export interface ListCoverage {
  readonly list: 'search' | 'social';
  readonly hosts: number;
  readonly hits: number;
  /** hits / hosts. */
  readonly share: number;
  /** Names (engines, networks) with every host recognised. */
  readonly namesHit: number;
  readonly names: number;
  readonly missed: readonly string[];
}

const MEDIUM = { search: 'organic', social: 'social' } as const;

export const COVERAGE_REFERENCE: Readonly<Record<'search' | 'social', readonly ReferenceEntry[]>> = reference;

export function referenceCoverage(): ListCoverage[] {
  return (['search', 'social'] as const).map((list) => {
    const missed: string[] = [];
    let hosts = 0;
    let namesHit = 0;
    for (const entry of COVERAGE_REFERENCE[list]) {
      const before = missed.length;
      for (const host of entry.hosts) {
        hosts++;
        if (classify({ url: 'https://shop.example.com/', referrer: `https://${host}/` }).medium !== MEDIUM[list]) missed.push(host);
      }
      if (missed.length === before) namesHit++;
    }
    const hits = hosts - missed.length;
    return { list, hosts, hits, share: hits / hosts, namesHit, names: COVERAGE_REFERENCE[list].length, missed };
  });
}
