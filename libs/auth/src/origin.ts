/**
 * Normalises an origin (`scheme://host[:port]`): lowercase, default port dropped, no path or trailing slash.
 * Returns null when the value is not an http(s) origin. `*` and `https://*.example.com` wildcards pass through.
 */
export function normalizeOrigin(value: string): string | null {
  const v = value.trim();
  if (v === '*') return '*';
  const wildcard = /^(https?):\/\/\*\.([a-z0-9.-]+)(:\d+)?\/?$/i.exec(v);
  if (wildcard) return `${wildcard[1]!.toLowerCase()}://*.${wildcard[2]!.toLowerCase()}${wildcard[3] ?? ''}`;
  if (!URL.canParse(v)) return null;
  const u = new URL(v);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash || u.username) return null;
  return u.origin;
}

export function originAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  if (!origin) return false;
  const o = normalizeOrigin(origin);
  if (!o || o === '*') return false;
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
