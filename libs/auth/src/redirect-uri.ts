/** Longest redirect URI (and any other URI of a client's metadata) a client may register. */
export const MAX_REDIRECT_URI_LENGTH = 2048;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
// Schemes a browser runs, reads locally or hands to another protocol instead of delivering the code to one client.
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'vbscript:', 'data:', 'blob:', 'file:', 'filesystem:', 'about:', 'view-source:', 'ftp:', 'ws:', 'wss:']);
// The URL parser silently drops tabs and newlines and trims spaces (`java\nscript:` parses as javascript:).
const CONTROL_OR_SPACE = /[\p{Cc} ]/u;

/**
 * Why a redirect URI may not receive authorization codes, or undefined when it may: https, plain http only to a
 * loopback host (RFC 8252 7.3, any port), or a private-use scheme of a native app (RFC 8252 7.1, `com.example.app:/cb`);
 * never a fragment (RFC 6749 3.1.2), credentials, or a scheme a browser would run or read itself.
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `is longer than ${MAX_REDIRECT_URI_LENGTH} characters`;
  if (CONTROL_OR_SPACE.test(uri)) return 'contains spaces or control characters';
  if (uri.includes('#')) return 'must not contain a fragment (#)';
  if (!URL.canParse(uri)) return 'is not an absolute URI';
  const url = new URL(uri);
  if (url.username || url.password) return 'must not carry user:password@';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname) ? undefined : 'uses plain http to a host that is not loopback: use https (http only for 127.0.0.1, [::1] or localhost)';
  }
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `uses the ${url.protocol} scheme, which cannot receive a code`;
  return undefined;
}
