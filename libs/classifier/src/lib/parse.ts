/**
 * Cheap, non-throwing parsing helpers. Regular expressions are compiled once,
 * here, at module load; every function returns a neutral value instead of
 * throwing.
 */

/** `scheme://` at the start (http://, HTTPS://, android-app://, capacitor://, ...). */
const SCHEME_RE = /^[a-z][a-z0-9+.-]*:\/\//i;
/** A bare host name with at least one dot, optional port, then a path/query/fragment or the end. */
const BARE_HOST_RE = /^[a-z0-9-]+(?:\.[a-z0-9-]+)+\.?(?::\d{1,5})?(?:[/?#]|$)/i;
const PLUS_RE = /\+/g;
/** http(s)://, then an ASCII host whose last label starts with a letter (never an IPv4 form), then /, ?, # or the end. */
const PLAIN_WEB_HOST_RE = /^https?:\/\/((?:[a-z0-9-]+\.)*[a-z][a-z0-9-]*)\.?(?=[/?#]|$)/i;
const NON_SLUG_RE = /[^a-z0-9]+/g;

/** Base used for path-only page URLs ("/landing?utm_source=x"); its host is never used. */
const PATH_ONLY_BASE = 'http://path-only.invalid';

/**
 * Parses a URL leniently: `//host/...` and bare `host.tld/...` get an
 * `https:` scheme, anything else is given to the WHATWG parser as is.
 * Returns undefined for empty or unparseable input.
 */
export function parseUrlLoose(raw: string): URL | undefined {
  const s = raw.trim();
  if (s === '') return undefined;
  let text = s;
  if (!SCHEME_RE.test(s)) {
    if (s.startsWith('//')) text = 'https:' + s;
    else if (BARE_HOST_RE.test(s)) text = 'https://' + s;
  }
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** Parses a path-only URL ("/p?x=1"); undefined for anything else. */
export function parsePathOnly(raw: string): URL | undefined {
  const s = raw.trim();
  if (s.charCodeAt(0) !== 47 /* / */ || s.charCodeAt(1) === 47 || s.charCodeAt(1) === 92 /* \ */) return undefined;
  try {
    return new URL(s, PATH_ONLY_BASE);
  } catch {
    return undefined;
  }
}

/** Lowercased host name of a parsed URL, without port (URL.hostname) and without a trailing dot. */
export function hostOf(url: URL): string {
  const h = url.hostname.toLowerCase();
  return h.endsWith('.') ? h.slice(0, -1) : h;
}

/**
 * The host of an http(s) URL written plainly (the common referrer), as hostOf(parseUrlLoose(raw)) would give it,
 * without the WHATWG parser; undefined when the URL needs that parser (spaces, userinfo, a port, IDN, IPv4/IPv6,
 * backslashes, escapes): parse it then.
 */
export function plainWebHost(raw: string): string | undefined {
  const m = PLAIN_WEB_HOST_RE.exec(raw);
  if (m === null) return undefined;
  const host = m[1]!.toLowerCase();
  return host.includes('xn--') ? undefined : host;
}

/** Normalises an HTTP Host header value ("Example.com:8080" -> "example.com"); '' when unusable. */
export function normalizeRequestHost(raw: string): string {
  const s = raw.trim();
  if (s === '') return '';
  try {
    return hostOf(new URL(SCHEME_RE.test(s) ? s : 'http://' + s));
  } catch {
    return '';
  }
}

export function stripWww(host: string): string {
  return host.startsWith('www.') ? host.slice(4) : host;
}

/** Rule 13 slug: lowercase, leading www. removed, runs outside [a-z0-9] -> '-', no leading/trailing '-'. */
export function slugifyHost(host: string): string {
  const s = stripWww(host.toLowerCase()).replace(NON_SLUG_RE, '-');
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) === 45 /* - */) start++;
  while (end > start && s.charCodeAt(end - 1) === 45) end--;
  return s.slice(start, end);
}

/** Form-urlencoded decoding ('+' is a space); malformed escapes are kept as they are. */
function decodeComponent(raw: string): string {
  if (raw.indexOf('%') < 0) return raw.indexOf('+') < 0 ? raw : raw.replace(PLUS_RE, ' ');
  try {
    return decodeURIComponent(raw.replace(PLUS_RE, ' '));
  } catch {
    // Rare: a malformed escape. URLSearchParams decodes what it can, like browsers do.
    return new URLSearchParams('v=' + raw).get('v') ?? '';
  }
}

/** What the classifier needs from a query string. */
export class QueryInfo {
  gclid = false;
  msclkid = false;
  ttclid = false;
  liFatId = false;
  fbclid = false;
  /** Trimmed and lowercased. */
  utmSource: string | undefined = undefined;
  /** Trimmed and lowercased. */
  utmMedium: string | undefined = undefined;
  /** Trimmed, case preserved. */
  utmCampaign: string | undefined = undefined;
  /** Some utm_* parameter (any name) has a non-empty value. */
  anyUtm = false;
}

export const EMPTY_QUERY: Readonly<QueryInfo> = Object.freeze(new QueryInfo());

/**
 * Reads click ids and utm_* parameters from a URL's `search` ("?a=1&b=2").
 * Names are case-insensitive, values are trimmed, empty values count as
 * absent, and the first non-empty occurrence of a repeated name wins.
 */
export function readQuery(search: string): QueryInfo {
  const q = new QueryInfo();
  const len = search.length;
  let start = search.charCodeAt(0) === 63 /* ? */ ? 1 : 0;
  while (start < len) {
    let end = search.indexOf('&', start);
    if (end < 0) end = len;
    if (end > start) {
      let eq = search.indexOf('=', start);
      if (eq < 0 || eq > end) eq = end;
      // Decoding never lengthens a name and the shortest name of interest has
      // 5 characters (gclid, utm_x), so shorter raw names are skipped undecoded.
      if (eq - start >= 5) {
        const key = decodeComponent(search.slice(start, eq)).toLowerCase();
        if (key.startsWith('utm_')) {
          const value = eq < end ? decodeComponent(search.slice(eq + 1, end)).trim() : '';
          if (value !== '') {
            q.anyUtm = true;
            if (key === 'utm_source') q.utmSource ??= value.toLowerCase();
            else if (key === 'utm_medium') q.utmMedium ??= value.toLowerCase();
            else if (key === 'utm_campaign') q.utmCampaign ??= value;
          }
        } else if (key === 'gclid' || key === 'msclkid' || key === 'ttclid' || key === 'li_fat_id' || key === 'fbclid') {
          const present = eq < end && decodeComponent(search.slice(eq + 1, end)).trim() !== '';
          if (present) {
            if (key === 'gclid') q.gclid = true;
            else if (key === 'msclkid') q.msclkid = true;
            else if (key === 'ttclid') q.ttclid = true;
            else if (key === 'li_fat_id') q.liFatId = true;
            else q.fbclid = true;
          }
        }
      }
    }
    start = end + 1;
  }
  return q;
}
