// A DNS name (underscores too, as container names have them), an IPv4 address or a bracketed IPv6 one, then a port.
const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
const HOST_AND_PORT = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*\\.?|\\[[0-9A-Fa-f:.]{2,45}\\])(?::\\d{1,5})?$`);
const MAX_HOST_LENGTH = 260;
// The MCP SDK's issuer rule: plain http is accepted for these hosts only.
const HTTP_ISSUER_HOSTS = new Set(['localhost', '127.0.0.1']);

/**
 * A Host (or trusted X-Forwarded-Host) value that is a syntactically valid host[:port], normalised (lower case, no
 * default port); undefined for anything else: quotes, spaces, commas, paths, header injection, overly long values.
 */
export function validHost(value: string | undefined, protocol: 'http' | 'https'): string | undefined {
  if (value === undefined || value.length > MAX_HOST_LENGTH || !HOST_AND_PORT.test(value)) return undefined;
  const candidate = `${protocol}://${value}`;
  return URL.canParse(candidate) ? new URL(candidate).host : undefined;
}

/**
 * The base URL the service tells clients to use (OAuth metadata, WWW-Authenticate): PUBLIC_URL when configured, else
 * the request's protocol and validated Host (both as TRUST_PROXY decides), else localhost; never a header copied raw.
 */
export function publicBaseUrl(req: { protocol: string; host?: string | undefined }, configured?: string): string {
  if (configured) return configured;
  const protocol = req.protocol === 'https' ? 'https' : 'http';
  return `${protocol}://${validHost(req.host, protocol) ?? 'localhost'}`;
}

/** PUBLIC_URL as an origin (`https://analytics.example.com`), or why it cannot be one. */
export function parsePublicUrl(value: string): { url: string } | { problem: string } {
  if (!URL.canParse(value)) return { problem: `PUBLIC_URL ${value.slice(0, 100)} is not an absolute URL` };
  const url = new URL(value);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { problem: 'PUBLIC_URL must be an https:// URL' };
  if (url.protocol === 'http:' && !HTTP_ISSUER_HOSTS.has(url.hostname)) return { problem: 'PUBLIC_URL must be https (plain http only for localhost or 127.0.0.1): OAuth clients refuse other http issuers' };
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash || value.includes('#')) {
    return { problem: 'PUBLIC_URL must be an origin (scheme, host, optional port): no path, query, fragment or credentials' };
  }
  return { url: url.origin };
}
