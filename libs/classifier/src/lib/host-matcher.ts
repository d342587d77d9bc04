/**
 * The host -> entry matcher over a set of host lists (no data of its own, so the host-table generator can build one
 * over our hand-written lists alone).
 *
 * Everything is built once, when the matcher is created:
 *  - `exactHosts`: domain -> entry, for every plain domain of every list;
 *  - `wildcardBrands`: brand label -> entry, for the `brand.*` entries;
 *  - `androidApps`: Android package name -> entry (android-app:// referrers).
 * A lookup walks the host's label suffixes from the longest to the shortest
 * (a.b.c.com -> b.c.com -> c.com -> com); the first hit is the longest
 * matching suffix, whatever list it comes from.
 */

export type ListKind = 'social' | 'search' | 'email' | 'referral';

/** The list kinds, in the order their entries are registered (first writer wins). */
export const LIST_KINDS: readonly ListKind[] = Object.freeze(['social', 'search', 'email', 'referral'] as const);

/** One entry of a host list: a canonical source name and its domains. */
export interface HostListEntry {
  readonly name: string;
  readonly domains: readonly string[];
  readonly android_apps?: readonly string[];
  /** Email list only: webmail | esp | link-protection (informational). */
  readonly kind?: string;
}

export interface HostEntry {
  readonly list: ListKind;
  readonly name: string;
}

export type HostLists = Readonly<Record<ListKind, readonly HostListEntry[]>>;

export interface HostMatcher {
  /**
   * The list entry for a (lowercase, port-less, no trailing dot) host name, by
   * longest matching suffix, or undefined. Any prefix (www., m., mobile., or
   * any other subdomain) is tolerated by construction.
   */
  lookupHost(host: string): HostEntry | undefined;
  /** The list entry for a (lowercase) Android package name, exact match only. */
  lookupAndroidApp(packageName: string): HostEntry | undefined;
}

function isLowerAlpha(code: number): boolean {
  return code >= 97 && code <= 122;
}

/** `s` from index `i` is exactly two letters a-z (a country-code TLD). */
function isCountryCode(s: string, i: number): boolean {
  return s.length === i + 2 && isLowerAlpha(s.charCodeAt(i)) && isLowerAlpha(s.charCodeAt(i + 1));
}

/**
 * The endings a `brand.*` entry accepts after the brand label:
 * `com`, any two-letter country code (`de`, `ru`, `co`), or `com.xx` / `co.xx`
 * (`com.br`, `com.tr`, `co.uk`, `co.jp`). Nothing else: google.example.org,
 * google.net, google.ru.com, google.co.com do not match.
 */
export function isWildcardEnding(s: string): boolean {
  if (s === 'com') return true;
  if (isCountryCode(s, 0)) return true;
  if (s.startsWith('com.')) return isCountryCode(s, 4);
  if (s.startsWith('co.')) return isCountryCode(s, 3);
  return false;
}

export function createHostMatcher(lists: HostLists): HostMatcher {
  const exactHosts = new Map<string, HostEntry>();
  const wildcardBrands = new Map<string, HostEntry>();
  const androidApps = new Map<string, HostEntry>();

  for (const list of LIST_KINDS) {
    for (const raw of lists[list]) {
      const entry: HostEntry = Object.freeze({ list, name: raw.name });
      for (const domain of raw.domains) {
        // First writer wins; the data tests assert that no domain appears twice.
        if (domain.endsWith('.*')) {
          const brand = domain.slice(0, -2);
          if (!wildcardBrands.has(brand)) wildcardBrands.set(brand, entry);
        } else if (!exactHosts.has(domain)) {
          exactHosts.set(domain, entry);
        }
      }
      for (const app of raw.android_apps ?? []) {
        if (!androidApps.has(app)) androidApps.set(app, entry);
      }
    }
  }

  return {
    lookupHost(host: string): HostEntry | undefined {
      let candidate = host;
      for (;;) {
        const exact = exactHosts.get(candidate);
        if (exact !== undefined) return exact;
        const dot = candidate.indexOf('.');
        if (dot < 0) return undefined;
        if (dot > 0) {
          const brand = wildcardBrands.get(candidate.slice(0, dot));
          if (brand !== undefined && isWildcardEnding(candidate.slice(dot + 1))) return brand;
        }
        candidate = candidate.slice(dot + 1);
      }
    },
    lookupAndroidApp(packageName: string): HostEntry | undefined {
      return androidApps.get(packageName);
    },
  };
}
