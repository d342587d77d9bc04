import { getPublicSuffix } from 'tldts';

/**
 * Normalises a concrete origin (`scheme://host[:port]`): lowercase, default port dropped, no path or trailing slash.
 * Returns null when the value is not an http(s) origin or its host holds a `*` (wildcards are allowlist syntax only).
 */
export function normalizeOrigin(value: string): string | null {
  const v = value.trim();
  if (!URL.canParse(v)) return null;
  const u = new URL(v);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash || u.username || u.password) return null;
  if (u.hostname.includes('*')) return null;
  return u.origin;
}

export type OriginEntry = { origin: string } | { problem: string };

// Private section too: `*.github.io` or `*.s3.amazonaws.com` would admit every stranger's site.
const PSL = { allowPrivateDomains: true } as const;
const WILDCARD = /^(https?:\/\/)\*\.(.*)$/i;
// WHATWG URL has already turned every IP form (`0.1`, `[::1]`) into dotted quads or brackets.
const IP_HOST = /^(\d+\.){3}\d+$|^\[/;

/**
 * One `allowed_origins` entry, normalised: `*` (any origin), an origin, or `scheme://*.domain[:port]` (any subdomain).
 * A wildcard host must sit over a registrable domain: `https://*` matches nothing, and a wildcard over a Public
 * Suffix List entry (`*.com`, `*.co.uk`, `*.github.io`) or an IP address is refused with the reason.
 * `*.localhost` stays allowed: RFC 6761 names resolve only to the visitor's own machine.
 */
export function parseOriginEntry(value: string): OriginEntry {
  const v = value.trim();
  if (v === '*') return { origin: '*' };
  const wildcard = WILDCARD.exec(v);
  if (!wildcard) {
    const origin = normalizeOrigin(v);
    if (origin) return { origin };
    if (/^https?:\/\/\*(?::\d*)?\/?$/i.test(v)) return { problem: 'a bare wildcard host matches no origin: use "*" for any origin or https://*.example.com for the subdomains of one site' };
    if (v.includes('*')) return { problem: 'a wildcard must be the whole leftmost label, as in https://*.example.com' };
    return { problem: 'not an origin (scheme://host[:port], "*" or https://*.example.com)' };
  }
  const base = normalizeOrigin(wildcard[1]! + wildcard[2]!);
  if (!base) return { problem: 'not an origin after the wildcard (scheme://*.domain[:port], as in https://*.example.com)' };
  const host = new URL(base).hostname;
  if (IP_HOST.test(host)) return { problem: `a wildcard over an IP address (${host}) matches no origin: list the address itself` };
  const domain = host.replace(/\.$/, '');
  const suffix = getPublicSuffix(domain, PSL);
  if (suffix === null || domain.split('.').some((label) => !label)) return { problem: `not a domain name after the wildcard: ${domain}` };
  if (suffix === domain && domain !== 'localhost') return { problem: `wildcard over a public suffix (${domain}) would allow every site under it: name your domain, as in ${wildcard[1]!.toLowerCase()}*.example.${domain}` };
  return { origin: base.replace('://', '://*.') };
}

export function originAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  if (!origin) return false;
  const o = normalizeOrigin(origin);
  if (!o) return false;
  for (const entry of allowed) {
    if (entry === '*' || entry === o) return true;
    if (entry.includes('://*.')) {
      const [scheme, rest] = entry.split('://*.') as [string, string];
      const u = new URL(o);
      const host = u.port ? `${u.hostname}:${u.port}` : u.hostname;
      if (u.protocol === `${scheme}:` && host.endsWith(`.${rest}`)) return true;
    }
  }
  return false;
}
