import { createHmac } from 'node:crypto';

/** `::ffff:1.2.3.4` (IPv4 seen through an IPv6 socket) and `1.2.3.4` are the same caller. */
export function normalizeIp(ip: string): string {
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip.toLowerCase();
}

/** HMAC-SHA256 of `message` keyed with `${secret}:${YYYY-MM-DD}` (UTC date of `atMs`), first 16 bytes as 32 hex chars. */
function dailyKeyedHash(message: string, secret: string, atMs: number): string {
  const day = new Date(atMs).toISOString().slice(0, 10);
  return createHmac('sha256', `${secret}:${day}`).update(message).digest('hex').slice(0, 32);
}

/**
 * Daily-rotating hash of the caller IP (stored as FixedString(16) bytes). Same IP same day -> same hash; the raw IP
 * is never kept.
 */
export function ipHash(ip: string, secret: string, atMs: number): string {
  return dailyKeyedHash(normalizeIp(ip), secret, atMs);
}

/** Prefix of the server-derived anonymous ids, so they are told apart from client-sent ones. */
export const DAILY_ANONYMOUS_ID_PREFIX = 'd_';

/**
 * The anonymous id of a visitor whose browser stores nothing: `d_` + the daily keyed hash of
 * `"anon\0" + project_id + "\0" + ip + "\0" + user_agent`. Same project, IP and user agent on the same UTC day ->
 * same id; another day or project -> an unrelated one; the IP cannot be recovered without the secret. The `anon\0`
 * prefix keeps it apart from `ip_hash`, whose message is the IP alone.
 */
export function dailyAnonymousId(projectId: string, ip: string, userAgent: string, secret: string, atMs: number): string {
  return DAILY_ANONYMOUS_ID_PREFIX + dailyKeyedHash(`anon\0${projectId}\0${normalizeIp(ip)}\0${userAgent}`, secret, atMs);
}
